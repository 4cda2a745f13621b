/**
 * The tables in D1 and in the document stores alike (src/storage/db/schema/shared.ts: the event outbox and the
 * inbound messages) come from one Drizzle definition: the D1 baseline migration and the stores'
 * generated baseline must give them the same columns (name, type, not-null, primary key) and the same
 * named indexes. A change to one without the other fails here.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createDb } from "../../src/storage/db/client";
import { storeFor } from "../../src/storage/db/document-store";

const SHARED = ["event_outbox", "inbound_messages"];

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

describe("tables in D1 and in the document stores", () => {
  for (const table of SHARED) {
    it(`${table}: same columns and named indexes in D1 and in a store`, async () => {
      const d1 = await shape(createDb(env.DB), table);
      const store = await shape(storeFor(env, "co_schema_twins", 1).db, table);
      expect(d1.cols.length).toBeGreaterThan(0);
      expect(store.cols).toEqual(d1.cols);
      expect(store.idx).toEqual(d1.idx);
    });
  }
});
