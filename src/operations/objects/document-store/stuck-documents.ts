/**
 * The store's own sweep of stuck work: a document of this store in a non-final state
 * (`IN_PROGRESS_STATUSES`) untouched for STUCK_AFTER_MS (a lost or dead-lettered queue message, a
 * crash between a write and a send) gets its invoice message again, an envelope SENT whose
 * polling stopped gets a poll message again, and a cession SIGNED or SENT its step message again. Each store's alarm is set at its oldest such row's
 * `updated_at` plus STUCK_AFTER_MS (each table has a `(status, updated_at)` index, so that is one
 * short index read per status), so only stores with work in flight do anything, when it is due.
 *
 * Every step of the pipeline is idempotent, so a document that was in fact moving is not harmed.
 * A re-driven row that stays untouched (the queue itself is down, the consumer failing) is not
 * re-driven again before STUCK_AFTER_MS has passed since the pass that re-drove it: each kind keeps,
 * in memory, how far its current pass got (its rows in `(updated_at, id)` order) and when it began.
 * A store evicted in between forgets it and re-drives its stuck rows once more when it wakes: harmless.
 */
import { IN_PROGRESS_STATUSES } from "../../../invoices/state";
import { chunked } from "../../../lib/chunked";
import { envelopePollBody, invoiceBody, STUCK_AFTER_MS, type EnvelopePollMessage, type InvoiceMessage } from "../../../invoices/pipeline/messages";
import { cessionBody, type CessionMessage } from "../../../invoices/cessions/messages";
import type { StoreAlarmTask } from "./alarms";

/** At most this many documents, and this many envelopes, are re-driven per alarm; the rest at once after. */
export const STUCK_ROWS_PER_RUN = 500;
/** Delay before the alarm tries again after the queue refused a re-drive. */
export const STUCK_RETRY_MS = 60_000;

type StuckEnv = Pick<Env, "DB" | "DOCUMENT_STORE" | "CONTROL_DIRECTORY" | "ISSUANCE_QUEUE">;
type Body = InvoiceMessage | EnvelopePollMessage | CessionMessage;

/** A row's place in a pass: `(updated_at, id)`. */
interface Key {
  t: string;
  id: string;
}
interface StuckRow extends Key {
  company_id: string;
}

const START: Key = { t: "", id: "" };
const after = (a: Key, b: Key) => a.t > b.t || (a.t === b.t && a.id > b.id);

/** One table's stuck rows (documents, or envelopes), swept in passes. */
class StuckRows {
  /** Rows up to this key were re-driven by the current pass. */
  private reached: Key = START;
  /** When the current pass re-drove its first rows (null: no pass). */
  private passAt: number | null = null;
  /** Whether the last run stopped at its bound with more rows due. */
  private more = false;
  /** When a run left rows that look due by their time (written in another form than the cutoff it compares with); null: none left. */
  private stalledAt: number | null = null;
  /** The last `nextAt` worked out since the last run (null: none). */
  private known: { at: number | null } | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly table: "invoices" | "envelopes" | "cessions",
    private readonly statuses: readonly string[],
    readonly body: (id: string, companyId: string) => Body,
    private readonly limit: number,
  ) {}

  nextAt(now: number): number | null {
    if (this.more) return now;
    if (this.known && !this.anyDueBefore(this.known.at)) return this.known.at;
    const at = this.computedNextAt(now);
    // Rows a run could not take although they look due wait an interval, not an alarm loop.
    const next = at !== null && this.stalledAt !== null && at <= this.stalledAt ? this.stalledAt + STUCK_AFTER_MS : at;
    this.known = { at: next };
    return next;
  }

  /** Whether a run at `now` has rows to take (the known next time, or the bound's "more", has come). */
  isDue(now: number): boolean {
    const at = this.nextAt(now);
    return at !== null && at <= now;
  }

  /**
   * Whether a row may be due before `at` (null: whether there is any row at all): one index read.
   * Between runs (which move the pass and forget `known`), the next time can only come sooner by such
   * a row, so `nextAt` after a write (which nearly always stamps `updated_at` now) keeps the time it
   * knew without the per-status reads. A row that left the non-final states leaves `known` early,
   * which costs an alarm that finds nothing due. (Times compare as text, like the runs' cutoff: a
   * time written without milliseconds may be seen up to a second late.)
   */
  private anyDueBefore(at: number | null): boolean {
    const marks = this.statuses.map(() => "?").join(", ");
    const before = at === null ? [] : [new Date(at - STUCK_AFTER_MS).toISOString()];
    return this.sql.exec(`SELECT 1 FROM ${this.table} WHERE status IN (${marks})${at === null ? "" : " AND updated_at < ?"} LIMIT 1`, ...this.statuses, ...before).toArray().length > 0;
  }

  private computedNextAt(now: number): number | null {
    const first = this.oldest(START);
    if (first === null) return null;
    if (this.passAt === null || after(first, this.reached)) return dueAt(first, now);
    // Rows this pass re-drove are still waiting: due again a full interval after it began.
    const fresh = this.oldest(this.reached);
    const again = this.passAt + STUCK_AFTER_MS;
    return fresh === null ? again : Math.min(again, dueAt(fresh, now));
  }

  /** The rows due at `now` after the pass's place, oldest first, at most `limit`. A pass a full interval old starts over. */
  due(now: number): StuckRow[] {
    this.known = null;
    if (this.passAt !== null && now >= this.passAt + STUCK_AFTER_MS) {
      this.passAt = null;
      this.reached = START;
    }
    const cutoff = new Date(now - STUCK_AFTER_MS).toISOString();
    const rows = this.statuses
      .flatMap((s) => this.after(s, this.reached, this.limit + 1, cutoff))
      .sort((a, b) => (after(a, b) ? 1 : after(b, a) ? -1 : 0));
    this.more = rows.length > this.limit;
    return rows.slice(0, this.limit);
  }

  /** After the rows of `due` were sent: the pass has reached the last of them. */
  advance(rows: readonly StuckRow[], now: number): void {
    this.known = null;
    const last = rows.at(-1);
    if (last) {
      this.reached = { t: last.t, id: last.id };
      this.passAt ??= now;
    }
    const next = this.more ? null : this.computedNextAt(now);
    this.stalledAt = next !== null && next <= now ? now : null;
  }

  private oldest(from: Key): Key | null {
    const firsts = this.statuses.flatMap((s) => this.after(s, from, 1, null));
    return firsts.reduce<Key | null>((min, k) => (min === null || after(min, k) ? k : min), null);
  }

  /** Rows of one status after `from` in `(updated_at, id)` order (the status index gives `updated_at` order), up to `cutoff` when given. */
  private after(status: string, from: Key, limit: number, cutoff: string | null): StuckRow[] {
    const upTo = cutoff === null ? "" : "AND updated_at <= ?";
    return this.sql
      .exec<{ t: string; id: string; company_id: string }>(
        `SELECT updated_at AS t, id, company_id FROM ${this.table} WHERE status = ? AND updated_at >= ? AND (updated_at > ? OR id > ?) ${upTo} ORDER BY updated_at, id LIMIT ?`,
        ...[status, from.t, from.t, from.id, ...(cutoff === null ? [] : [cutoff]), limit],
      )
      .toArray();
  }
}

/** When a row untouched since its `updated_at` becomes stuck (a row with an unreadable time: an interval from now). */
function dueAt(k: Key, now: number): number {
  const t = Date.parse(k.t);
  return Number.isFinite(t) ? t + STUCK_AFTER_MS : now + STUCK_AFTER_MS;
}

export class StuckDocuments implements StoreAlarmTask {
  readonly name = "stuck documents";
  private readonly kinds: readonly StuckRows[];
  /** After a failed send: not due again before this (the queue is down; no alarm loop meanwhile). */
  private retryAt: number | null = null;

  constructor(
    sql: SqlStorage,
    private readonly env: StuckEnv,
    limit = STUCK_ROWS_PER_RUN,
  ) {
    this.kinds = [
      new StuckRows(sql, "invoices", IN_PROGRESS_STATUSES, invoiceBody, limit),
      new StuckRows(sql, "envelopes", ["SENT"], envelopePollBody, limit),
      // A cession SIGNED or SENT whose step message was lost: its step again.
      new StuckRows(sql, "cessions", ["SIGNED", "SENT"], cessionBody, limit),
    ];
  }

  touchedBy(sql: string): boolean {
    return /\b(invoices|envelopes|cessions)\b/.test(sql);
  }

  nextAt(now: number): number | null {
    const times = this.kinds.map((k) => k.nextAt(now)).filter((t): t is number => t !== null);
    if (times.length === 0) return null;
    const at = Math.min(...times);
    return this.retryAt !== null && this.retryAt > at ? this.retryAt : at;
  }

  async run(now: number): Promise<void> {
    if (this.retryAt !== null && now < this.retryAt) return;
    try {
      for (const kind of this.kinds) {
        // Nothing due (the store's alarm fires for its other tasks too, e.g. every fan-out notice): no reads, the pass stays.
        if (!kind.isDue(now)) continue;
        const rows = kind.due(now);
        for (const chunk of chunked(rows, 100)) await this.env.ISSUANCE_QUEUE.sendBatch(chunk.map((r) => ({ body: kind.body(r.id, r.company_id) })));
        kind.advance(rows, now);
      }
      this.retryAt = null;
    } catch (err) {
      this.retryAt = now + STUCK_RETRY_MS;
      throw err;
    }
  }
}
