/**
 * A document store's schema (src/durable-objects/document-store/migrate.ts): a new store applies every
 * version in one script, a store made at an older version applies the versions it lacks one by one;
 * both end with the same tables, indexes, triggers and version rows.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeFor, storeName } from "../../src/db/document-store";
import { STORE_SCHEMA } from "../../src/db/document-store/schema";
import type { DocumentStore } from "../../src/durable-objects/document-store";
import { migrateStore } from "../../src/durable-objects/document-store/migrate";
import { randomUlid } from "../../src/lib/ids";

type Master = { type: string; name: string; tbl_name: string; sql: string | null };

const stubOf = (companyId: string) => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, 1))) as DurableObjectStub<DocumentStore>;

function schemaOf(storage: DurableObjectStorage): { master: Master[]; versions: number[] } {
  const master = storage.sql
    .exec<Master>(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name`)
    .toArray();
  const versions = storage.sql.exec<{ version: number }>(`SELECT version FROM store_schema ORDER BY version`).toArray().map((r) => r.version);
  return { master, versions };
}

/** Empties a store's SQLite and applies the first `upTo` versions the way a store of that time did. */
function rebuildAt(storage: DurableObjectStorage, upTo: number): void {
  const tables = storage.sql.exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`).toArray();
  for (const { name } of tables) storage.sql.exec(`DROP TABLE "${name}"`);
  storage.sql.exec(`CREATE TABLE store_schema (version INTEGER NOT NULL)`);
  for (let v = 0; v < upTo; v++) {
    for (const statement of STORE_SCHEMA[v]!) storage.sql.exec(statement);
    storage.sql.exec(`INSERT INTO store_schema (version) VALUES (?)`, v + 1);
  }
}

async function freshSchema(): Promise<{ master: Master[]; versions: number[] }> {
  const companyId = `cmp_${randomUlid()}`;
  await storeFor(env, companyId, 1).db.all(sql`SELECT 1`);
  return runInDurableObject(stubOf(companyId), (_i: DocumentStore, state: DurableObjectState) => schemaOf(state.storage));
}

describe("a document store's schema", () => {
  it("a new store has every version, with every table, index and trigger", async () => {
    const fresh = await freshSchema();
    expect(fresh.versions).toEqual(STORE_SCHEMA.map((_, i) => i + 1));
    const names = fresh.master.map((m) => m.name);
    for (const name of ["invoices", "invoice_counts_update", "received_counts_update", "external_references", "received_keys", "webhook_deliveries_created_idx"]) expect(names).toContain(name);
    expect(fresh.master.length).toBe(STORE_SCHEMA.flat().filter((s) => /^\s*CREATE /i.test(s)).length + 1); // + store_schema
  });

  it("a store made at any older version migrates to the same schema as a new store", async () => {
    const fresh = await freshSchema();
    for (let at = 0; at < STORE_SCHEMA.length; at++) {
      const companyId = `cmp_${randomUlid()}`;
      await storeFor(env, companyId, 1).db.all(sql`SELECT 1`);
      const migrated = await runInDurableObject(stubOf(companyId), (_i: DocumentStore, state: DurableObjectState) => {
        rebuildAt(state.storage, at);
        const first = migrateStore(state.storage);
        return { first, again: migrateStore(state.storage), ...schemaOf(state.storage) };
      });
      expect(migrated.first).toEqual({ applied: STORE_SCHEMA.length - at, created: at === 0 });
      expect(migrated.again).toEqual({ applied: 0, created: false });
      expect({ master: migrated.master, versions: migrated.versions }).toEqual(fresh);
    }
  });
});
