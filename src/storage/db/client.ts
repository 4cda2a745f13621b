import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

function open(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Db = ReturnType<typeof open>;

/**
 * The drizzle handle of a D1 binding. Building one walks the whole schema (relational config), so
 * it is made once per binding object and reused by every request and batch of the isolate.
 */
const handles = new WeakMap<D1Database, Db>();
export function createDb(d1: D1Database): Db {
  let db = handles.get(d1);
  if (!db) handles.set(d1, (db = open(d1)));
  return db;
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
