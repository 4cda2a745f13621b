/**
 * Applying a document store's schema (src/storage/db/document-store/schema.ts, `STORE_SCHEMA`) when the store
 * starts: a store that has none yet (every company's first document opens one, and its index store)
 * runs the whole schema as ONE `exec` of the concatenated statements, with its version row, in one
 * transaction (one call into SQLite instead of one per statement).
 */
import { STORE_SCHEMA } from "../../../storage/db/document-store/schema";

/** The schema's version, recorded in `store_schema`: one baseline until the first release. */
export const STORE_SCHEMA_VERSION = 1;

/** The whole schema as one script, built once per isolate from `STORE_SCHEMA`. */
let wholeSchema: string | undefined;
export function wholeSchemaScript(): string {
  return (wholeSchema ??= [`CREATE TABLE store_schema (version INTEGER NOT NULL)`, ...STORE_SCHEMA.map((s) => s.replace(/;\s*$/, "")), `INSERT INTO store_schema (version) VALUES (${STORE_SCHEMA_VERSION})`].join(";\n"));
}

/** Creates a store's schema unless it has one; `created`: it had none (no table, so no row and no alarm of its own yet). */
export function migrateStore(storage: DurableObjectStorage): { created: boolean } {
  const sql = storage.sql;
  if (sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_schema'`).toArray().length > 0) return { created: false };
  storage.transactionSync(() => sql.exec(wholeSchemaScript()).toArray());
  return { created: true };
}
