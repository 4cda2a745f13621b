import type { BadLine, TaxpayerRow } from "./csv";
import { LOAD_SQL, ROWS_PER_INSERT, rowBindings } from "./repository";

export interface LoadReport {
  loadId: string;
  loaded: number;
  rejected: number;
  pruned: number;
}

/** Statements per D1 batch while loading (each a 14-row INSERT). */
const STATEMENTS_PER_BATCH = 50;
const PRUNE_SLICE = 5000;

/**
 * Loads a parsed list into D1 as a new version and makes it current only once every row is in
 * (versioned load): a failure part-way leaves the previous list serving, and the next load prunes
 * the abandoned rows. Running it twice on the same file gives the same directory.
 */
export async function loadTaxpayers(
  db: D1Database,
  rows: readonly TaxpayerRow[],
  bad: readonly BadLine[],
  opts: { source: string; onProgress?: (done: number, total: number) => void },
): Promise<LoadReport> {
  const loadId = `tpl_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 8)}`;
  const now = () => new Date().toISOString();
  await db.prepare(LOAD_SQL.begin).bind(loadId, opts.source, now()).run();
  const perBatch = ROWS_PER_INSERT * STATEMENTS_PER_BATCH;
  for (let i = 0; i < rows.length; i += perBatch) {
    const slice = rows.slice(i, i + perBatch);
    const stmts: D1PreparedStatement[] = [];
    for (let j = 0; j < slice.length; j += ROWS_PER_INSERT) {
      const part = slice.slice(j, j + ROWS_PER_INSERT);
      stmts.push(db.prepare(LOAD_SQL.insert(part.length)).bind(...rowBindings(loadId, part)));
    }
    await db.batch(stmts);
    opts.onProgress?.(Math.min(i + perBatch, rows.length), rows.length);
  }
  const [a, b, c] = LOAD_SQL.commit as [string, string, string];
  const at = now();
  await db.batch([db.prepare(a), db.prepare(b).bind(loadId, rows.length, bad.length, at), db.prepare(c).bind(loadId, rows.length, bad.length, at)]);
  return { loadId, loaded: rows.length, rejected: bad.length, pruned: await pruneStale(db, loadId) };
}

/** Deletes the rows of every load that is neither current nor `keep`, in slices. */
export async function pruneStale(db: D1Database, keep: string): Promise<number> {
  const stale = await db.prepare(LOAD_SQL.staleLoads).bind(keep).all<{ id: string }>();
  let pruned = 0;
  for (const { id } of stale.results) {
    for (;;) {
      const r = await db.prepare(LOAD_SQL.pruneSlice).bind(id, PRUNE_SLICE).run();
      pruned += r.meta.changes;
      if (r.meta.changes < PRUNE_SLICE) break;
    }
    await db.prepare(LOAD_SQL.dropLoad).bind(id).run();
  }
  return pruned;
}
