/**
 * Pruning the allocator's `allocations` table: one row per document ever numbered would
 * make the largest company's allocator grow by 365 million rows a year. The rows only serve the
 * idempotency of "the folio of document X" while X can still ask; once its folio is on the document
 * row (GENERATED onwards) the pipeline never asks again. So rows are kept for a retention period and
 * then deleted, behind a horizon that makes the deletion safe:
 *
 * - Document ids end in a ULID (`inv_<ULID>`, `inv_p<n>_<ULID>`): its first 10 characters encode the
 *   creation time in an alphabet that sorts like the time, so the **time key** of an id is the
 *   substring `substr(id, -26, 10)` of an id whose 27th character from the end is `_`. Ids without
 *   that shape have no time key: they are never pruned and never refused (tests, hand-made ids).
 * - The **horizon** is a time key stored in `meta`. It only moves forward, and in the same
 *   transaction as a prune batch, which deletes only rows whose time key is below it.
 * - `allocate`, `allocateMany` and `reserve` refuse (`TOO_OLD`) a document whose time key is below
 *   the horizon, whether or not its row still exists. So a document whose row was deleted can never
 *   get a second folio: it is refused. Both checks compare the same substring with the same bound,
 *   and every call of the object runs alone (transactionSync), so requests on either side of the
 *   horizon are decided exactly: a key below it is refused before and after the batch that deletes
 *   its row; a key at or above it keeps its row and its replay.
 * - What a refused document loses: nothing if the pipeline already recorded its folio (it never asks
 *   again), otherwise only the chance of a folio (the pipeline ends it FAILED with the message, and
 *   the client issues it again under a new id). The retention (7 days) is far beyond the pipeline's
 *   retries and the cron sweep that re-drives a RECEIVED document, so in practice only a document
 *   whose pipeline was down for a week is refused; if it had been allocated a folio whose recording
 *   was lost, that folio stays unused (a gap the SII's annulment covers), never a duplicate.
 *
 * Clocks: the horizon is the object's clock minus the retention, compared with the creation time the
 * Worker wrote into the id; a skew between them only moves which documents are refused by that much
 * (a week-old document), never lets a deleted row be asked again.
 *
 * Bounded work: the allocator's alarm deletes at most PRUNE_BATCH rows per run, walking the partial
 * expression index `allocations_by_time`; when a batch was full it comes back after PRUNE_CONTINUE_MS,
 * otherwise at the next instant a row crosses the horizon, but not sooner than PRUNE_INTERVAL_MS.
 */
import { encodeUlidTime, decodeUlidTime } from "../../lib/ids";

export const ALLOCATION_RETENTION_MS = 7 * 86_400_000;
export const PRUNE_BATCH = 5_000;
export const PRUNE_INTERVAL_MS = 3_600_000;
export const PRUNE_CONTINUE_MS = 1_000;

const TIME_KEY = "substr(document_id, -26, 10)";
const HAS_TIME_KEY = "substr(document_id, -27, 1) = '_'";
const HORIZON = "allocation_horizon";
const PRUNED = "allocations_pruned";

/** The time key of a document id (as SQLite computes it for the index), or null when it has none. */
export function timeKeyOf(documentId: string): string | null {
  if (documentId.length < 27 || documentId[documentId.length - 27] !== "_") return null;
  return documentId.slice(documentId.length - 26, documentId.length - 16);
}

export interface PruneResult {
  /** The horizon after this run, as an ISO instant (null before the first prune). */
  horizon: string | null;
  deleted: number;
  /** True when more rows below the horizon are left for the next run. */
  more: boolean;
}

/** The allocator's pruning state, over its SQLite storage (every method synchronous, called inside a transaction). */
export class AllocationPruner {
  /** `sql`: the allocator's storage, its schema (index `allocations_by_time` included) made by FolioStore. */
  constructor(private readonly sql: SqlStorage) {}

  horizonKey(): string | null {
    return this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", HORIZON).toArray()[0]?.value ?? null;
  }

  /** Whether a request for this document must be refused: it was created before the horizon. */
  isBeyondHorizon(documentId: string): boolean {
    const key = timeKeyOf(documentId);
    const horizon = key === null ? null : this.horizonKey();
    return key !== null && horizon !== null && key < horizon;
  }

  /** The refusal's words, for the API and the document's FAILED message. */
  refusal(documentId: string): { ok: false; reason: "TOO_OLD"; message: string } {
    const horizon = this.horizonKey();
    const since = horizon === null ? "" : ` (before ${new Date(decodeUlidTime(horizon)).toISOString()})`;
    return {
      ok: false,
      reason: "TOO_OLD",
      message: `Document ${documentId} was created more than ${ALLOCATION_RETENTION_MS / 86_400_000} days ago${since} and never recorded a folio; folio requests that old are refused so that no document is numbered twice: issue it again.`,
    };
  }

  /** Rows deleted by every prune so far (status reports kept + pruned as `allocated`). */
  prunedCount(): number {
    return Number(this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", PRUNED).toArray()[0]?.value ?? 0);
  }

  /** Moves the horizon to `now - retention` (never back) and deletes at most `limit` rows below it. */
  prune(now: number, limit: number = PRUNE_BATCH): PruneResult {
    const candidate = encodeUlidTime(Math.max(0, now - ALLOCATION_RETENTION_MS));
    const current = this.horizonKey();
    const horizon = current !== null && current > candidate ? current : candidate;
    if (horizon !== current) this.setMeta(HORIZON, horizon);
    const deleted = this.sql
      .exec(
        `DELETE FROM allocations WHERE rowid IN (
           SELECT rowid FROM allocations WHERE ${HAS_TIME_KEY} AND ${TIME_KEY} < ? ORDER BY ${TIME_KEY} LIMIT ?) RETURNING 1`,
        horizon,
        limit,
      )
      .toArray().length;
    if (deleted > 0) this.setMeta(PRUNED, String(this.prunedCount() + deleted));
    const oldest = deleted === limit ? this.oldestKey() : null;
    const more = oldest !== null && oldest < horizon;
    return { horizon: new Date(decodeUlidTime(horizon)).toISOString(), deleted, more };
  }

  /** When the alarm should prune next, or null when no row can ever be pruned. */
  nextPruneAt(now: number, lastRunFull: boolean): number | null {
    if (lastRunFull) return now + PRUNE_CONTINUE_MS;
    const oldest = this.oldestKey();
    if (oldest === null) return null;
    const due = decodeUlidTime(oldest) + ALLOCATION_RETENTION_MS + 1;
    return Number.isFinite(due) ? Math.max(due, now + PRUNE_INTERVAL_MS) : now + PRUNE_INTERVAL_MS;
  }

  private oldestKey(): string | null {
    return this.sql.exec<{ k: string | null }>(`SELECT min(${TIME_KEY}) AS k FROM allocations WHERE ${HAS_TIME_KEY}`).one().k;
  }

  private setMeta(key: string, value: string): void {
    this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value);
  }
}
