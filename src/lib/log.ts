/**
 * The service's one logger: a JSON line per event, `{level, msg, ...fields}`, with the ids that let
 * an operator follow a request or a document (request_id, company_id, invoice_id, envelope_id...).
 * Never log secrets, keys, passwords or whole documents: pass ids and short messages only.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/** An error as a short loggable string (its message; a stack only for unexpected ones). */
export function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
