/**
 * The store's tables are twins of their D1 tables (src/db/document-store/schema.ts): the same Drizzle
 * table objects query both and the data migration copies rows as they are. This holds the two
 * schemas together: every moved table has the same columns (name, type, not-null, primary key) and
 * the same named indexes with the same columns in both. A D1 migration that changes a moved table
 * without a store schema entry (or the reverse) fails here.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { storeFor } from "../../src/db/document-store";

const MOVED = ["invoices", "invoice_events", "cancellations", "envelopes", "event_outbox", "webhook_deliveries", "webhook_attempts", "received_documents", "inbound_messages", "idempotency_keys"];

type Col = { name: string; type: string; nn: number; pk: number };
type Idx = { name: string; columns: string };

async function shape(db: ReturnType<typeof createDb>, table: string) {
  const cols = (await db.all(sql.raw(`SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info('${table}') ORDER BY cid`))) as Col[];
  const idx = (await db.all(
    sql.raw(`SELECT il.name AS name, (SELECT group_concat(ii.name, ',') FROM pragma_index_info(il.name) ii) AS columns
             FROM pragma_index_list('${table}') il WHERE il.origin = 'c' ORDER BY il.name`),
  )) as Idx[];
  return { cols: cols.map((c) => `${c.name} ${c.type.toUpperCase()} nn=${c.nn} pk=${c.pk}`), idx: idx.map((i) => `${i.name}(${i.columns})`) };
}

describe("document store schema: twins of the D1 tables", () => {
  for (const table of MOVED) {
    it(`${table}: same columns and named indexes in D1 and in a store`, async () => {
      const d1 = await shape(createDb(env.DB), table);
      const store = await shape(storeFor(env, "co_schema_twins", 1).db, table);
      expect(d1.cols.length).toBeGreaterThan(0);
      expect(store.cols).toEqual(d1.cols);
      expect(store.idx).toEqual(d1.idx);
    });
  }
});
