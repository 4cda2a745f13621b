/**
 * Lists across a company's partitions with the API's pages and `total` (issue 16). Partitions hold
 * consecutive periods, so "newest first" is: the newest partition's rows newest first, then the
 * previous partition's, and so on. Each partition counts its matches (one indexed COUNT per store,
 * all at once); the page is then read only from the one or two partitions it falls in.
 *
 * At a roll-over by size, other isolates may still write to the closed partition for the few seconds
 * they trust their copy of the directory, so documents of those seconds can sort across the boundary.
 */
import type { Db } from "../client";
import { partitionsOf, storeFor } from "./index";

export interface PartitionedQuery<T> {
  count(db: Db): Promise<number>;
  rows(db: Db, limit: number, offset: number): Promise<T[]>;
}

type StoreEnv = Parameters<typeof storeFor>[0];

/**
 * `oldestFirst`: the partitions are walked oldest first, for a list whose rows each store sorts
 * oldest first; `stores`: the partitions to walk, newest first (default: the directory's).
 */
export async function pageAcrossPartitions<T>(env: StoreEnv, companyId: string, query: PartitionedQuery<T>, page: { perPage: number; offset: number }, options: { oldestFirst?: boolean; stores?: Db[] } = {}): Promise<{ rows: T[]; total: number }> {
  const stores = options.stores ? [...options.stores] : (await partitionsOf(env, companyId)).map((p) => storeFor(env, companyId, p.ordinal).db);
  if (options.oldestFirst) stores.reverse();
  const counts = await Promise.all(stores.map((db) => query.count(db)));
  const rows: T[] = [];
  let skip = page.offset;
  for (const [i, db] of stores.entries()) {
    const need = page.perPage - rows.length;
    if (need <= 0) break;
    if (skip >= counts[i]!) {
      skip -= counts[i]!;
      continue;
    }
    rows.push(...(await query.rows(db, Math.min(need, counts[i]! - skip), skip)));
    skip = 0;
  }
  return { rows, total: counts.reduce((a, b) => a + b, 0) };
}
