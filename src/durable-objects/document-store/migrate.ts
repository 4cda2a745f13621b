/**
 * Applying a document store's schema (src/db/document-store/schema.ts, `STORE_SCHEMA`) when the store
 * starts. A store that has never applied any version (every company's first document opens one, and
 * its index store) runs the whole schema as ONE `exec` of the concatenated statements, with every
 * version's row, in one transaction: one call into SQLite instead of one per statement and one
 * transaction per version (the scale load's profile, 2026-11-26: new stores' DDL was 12 % of the
 * service isolate). A store already at some version applies the versions it lacks one by one, each in
 * its own transaction, as before. Both end with the same tables, indexes, triggers and version rows
 * (test/stores/store-schema.test.ts).
 */
import { STORE_SCHEMA } from "../../db/document-store/schema";

const VERSIONS_TABLE = `CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT NULL)`;

/** The whole schema as one script, built once per isolate from `STORE_SCHEMA` (so a version added there is in it). */
let wholeSchema: string | undefined;
export function wholeSchemaScript(): string {
  const versions = STORE_SCHEMA.map((_, i) => `(${i + 1})`).join(", ");
  return (wholeSchema ??= [VERSIONS_TABLE, ...STORE_SCHEMA.flat(), `INSERT INTO store_schema (version) VALUES ${versions}`].join(";\n"));
}

/**
 * Brings a store's SQLite to the last schema version: how many versions it applied, and whether the
 * store was new (it had no version: no table, so no row and no alarm of its own yet).
 */
export function migrateStore(storage: DurableObjectStorage): { applied: number; created: boolean } {
  const sql = storage.sql;
  const started = sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_schema'`).toArray().length > 0;
  if (!started) {
    storage.transactionSync(() => sql.exec(wholeSchemaScript()).toArray());
    return { applied: STORE_SCHEMA.length, created: true };
  }
  const applied = applyMissingVersions(storage);
  return { applied, created: applied === STORE_SCHEMA.length };
}

/** The versions a store lacks, one transaction each (a store made before the latest version). */
export function applyMissingVersions(storage: DurableObjectStorage): number {
  const sql = storage.sql;
  sql.exec(VERSIONS_TABLE);
  const current = (sql.exec<{ v: number | null }>(`SELECT max(version) AS v FROM store_schema`).one().v ?? 0) as number;
  for (let v = current; v < STORE_SCHEMA.length; v++) {
    storage.transactionSync(() => {
      for (const statement of STORE_SCHEMA[v]!) sql.exec(statement);
      sql.exec(`INSERT INTO store_schema (version) VALUES (?)`, v + 1);
    });
  }
  return STORE_SCHEMA.length - current;
}
