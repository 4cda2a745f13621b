/**
 * Lists across a company's partitions with the API's pages and `total`. Partitions hold
 * consecutive periods, so "newest first" is: the newest partition's rows newest first, then the
 * previous partition's, and so on. Each partition counts its matches (one indexed COUNT per store,
 * all at once); the page is then read only from the one or two partitions it falls in, from the
 * nearer end of each (the counts are exact: see ./counters.ts).
 *
 * At a roll-over by size, other isolates may still write to the closed partition for the few seconds
 * they trust their copy of the directory, so documents of those seconds can sort across the boundary.
 */
import type { Db } from "../client";
import { partitionsOf, storeFor } from "./index";

export interface PartitionedQuery<T> {
  /** The partition's number of matches. */
  count(db: Db): Promise<number>;
  /** `at`: the partition's count (from `count`), for a query that reads differently by size. */
  rows(db: Db, limit: number, offset: number, at: PartitionAt): Promise<T[]>;
  /**
   * The same rows counted from the other end: `limit` rows after skipping `offset` in the reverse
   * order, returned in that reverse order. When given, a page in a partition's second half is read
   * from its end, so no page skips more than half a partition's matches.
   */
  rowsFromEnd?(db: Db, limit: number, offset: number, at: PartitionAt): Promise<T[]>;
}

/** What a page read knows of its partition: its number of matches. */
export interface PartitionAt {
  count: number;
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
    const take = Math.min(need, counts[i]! - skip);
    const fromEnd = counts[i]! - skip - take;
    const at = { count: counts[i]! };
    rows.push(...(query.rowsFromEnd && fromEnd < skip ? (await query.rowsFromEnd(db, take, fromEnd, at)).reverse() : await query.rows(db, take, skip, at)));
    skip = 0;
  }
  return { rows, total: counts.reduce((a, b) => a + b, 0) };
}
