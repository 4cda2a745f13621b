/**
 * Reading a company's document stores from tests: the rows that grow with documents live
 * in one Durable Object per company and partition, not in D1. `storeRows` runs one SQL query in each
 * of the company's partitions (newest first, from the directory) and concatenates the rows, so a test
 * that used to read `SELECT … FROM invoices WHERE company_id = ?` from D1 asks the same of the stores.
 */
import { env } from "cloudflare:workers";
import { partitionsOf, storeFor } from "../../src/storage/db/document-store";
import type { Db } from "../../src/storage/db/client";
import { sql, type SQL } from "drizzle-orm";

/** The Drizzle handle of every partition of a company, newest first. */
export async function companyStores(companyId: string): Promise<Db[]> {
  return (await partitionsOf(env, companyId)).map((p) => storeFor(env, companyId, p.ordinal).db);
}

/** One raw query run in every partition of a company; the rows of all of them (newest partition first). */
export async function storeRows<T = Record<string, unknown>>(companyId: string, query: SQL | string): Promise<T[]> {
  const q = typeof query === "string" ? sql.raw(query) : query;
  const out: T[] = [];
  for (const db of await companyStores(companyId)) out.push(...((await db.all(q)) as T[]));
  return out;
}
