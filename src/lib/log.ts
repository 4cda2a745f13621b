/**
 * The service's one logger: a JSON line per event, `{level, msg, ...context, ...fields}`. The context
 * carries the ids that let an operator follow a request or a document: the HTTP middleware sets
 * request_id (and company_id, client_id once the key and company are known), the queue handler the
 * queue and message ids with the ids its body carries (request_id, company_id, invoice_id...), the
 * cron handler the cron and run. Every line written inside that work carries them.
 * Never log secrets, keys, passwords or whole documents: pass ids and short messages only.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

const context = new AsyncLocalStorage<LogFields>();

/** Runs `work` with these fields on every log line written inside it (nested contexts add to the outer one). */
export function withLogContext<T>(fields: LogFields, work: () => T): T {
  return context.run({ ...(context.getStore() ?? {}), ...fields }, work);
}

/** Adds fields to the current context (e.g. the company once the request's key reached it). */
export function addLogContext(fields: LogFields): void {
  const store = context.getStore();
  if (store) Object.assign(store, fields);
}

/** The current context's fields (a copy). */
export function logContext(): LogFields {
  return { ...(context.getStore() ?? {}) };
}

export function log(level: LogLevel, msg: string, fields: LogFields = {}): void {
  const line = JSON.stringify({ level, msg, ...(context.getStore() ?? {}), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/** An error as a short loggable string (its message; a stack only for unexpected ones). */
export function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The ids a queue message body carries (bodies carry ids only), for its log context. */
export function idsOf(body: unknown): LogFields {
  if (!body || typeof body !== "object") return {};
  const out: LogFields = {};
  for (const key of ["request_id", "company_id", "invoice_id", "envelope_id", "delivery_id", "type"]) {
    const v = (body as Record<string, unknown>)[key];
    if (typeof v === "string" && v.length <= 128) out[key === "type" ? "message_type" : key] = v;
  }
  return out;
}
