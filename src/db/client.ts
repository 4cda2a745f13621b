import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof createDb>;

export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

/**
 * The columns of a failed UNIQUE constraint as SQLite names them (`invoices.company_id,
 * invoices.external_reference`), or null when the error is something else. D1 puts SQLite's message
 * on the error or on its cause, depending on the path.
 */
export function uniqueViolation(e: unknown): string | null {
  const text = `${(e as Error)?.message ?? ""} ${(e as { cause?: Error })?.cause?.message ?? ""}`;
  return /UNIQUE constraint failed: ([\w.]+(?:, [\w.]+)*)/.exec(text)?.[1] ?? null;
}
