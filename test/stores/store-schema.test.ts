/**
 * A document store's schema (src/operations/objects/document-store/migrate.ts): a new store applies the
 * whole baseline in one script, with its version row; a store that has it applies nothing again.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeFor, storeName } from "../../src/storage/db/document-store";
import { STORE_SCHEMA } from "../../src/storage/db/document-store/schema";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { migrateStore, STORE_SCHEMA_VERSION } from "../../src/operations/objects/document-store/migrate";
import { randomUlid } from "../../src/lib/ids";

type Master = { type: string; name: string };

const stubOf = (companyId: string) => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, 1))) as DurableObjectStub<DocumentStore>;

describe("a document store's schema", () => {
  it("a new store has the baseline, with every table, index and trigger, and applies nothing again", async () => {
    const companyId = `cmp_${randomUlid()}`;
    await storeFor(env, companyId, 1).db.all(sql`SELECT 1`);
    const got = await runInDurableObject(stubOf(companyId), (_i: DocumentStore, state: DurableObjectState) => ({
      master: state.storage.sql.exec<Master>(`SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name`).toArray(),
      versions: state.storage.sql.exec<{ version: number }>(`SELECT version FROM store_schema`).toArray().map((r) => r.version),
      again: migrateStore(state.storage),
    }));
    expect(got.versions).toEqual([STORE_SCHEMA_VERSION]);
    expect(got.again).toEqual({ created: false });
    const names = got.master.map((m) => m.name);
    for (const name of ["invoices", "invoice_counts_update", "received_counts_update", "external_references", "received_keys", "webhook_deliveries_created_idx", "credit_claims"]) expect(names).toContain(name);
    expect(got.master.length).toBe(STORE_SCHEMA.filter((s) => /^\s*CREATE /i.test(s)).length + 1); // + store_schema
  });
});
