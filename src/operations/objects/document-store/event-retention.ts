/**
 * Retention in a document store, a task of the store's alarm: events of the store's
 * `event_outbox` already fanned out and created more than EVENT_RETENTION_DAYS ago are deleted, and so are the store's webhook
 * deliveries created that long ago that are no longer PENDING, with
 * their attempts (src/webhooks/retention.ts says why 30 days). Events not fanned out yet and
 * deliveries still being tried are never deleted.
 *
 * One reader of the store's outbox besides the fan-out: the reception deadlines task asks whether a
 * received document's `deadline_approaching` event is recorded (./reception-deadlines.ts). An event
 * of a document still PENDING is kept, whatever its age, so it is never recorded twice.
 *
 * Bounded: at most RETENTION_ROWS_PER_RUN events and as many deliveries per run, walking the
 * `created_at` indexes, all in one synchronous step (atomic: a delivery and its
 * attempts go together). A run that filled its bound comes back after RETENTION_CONTINUE_MS;
 * otherwise the task is next due when its oldest row crosses the retention, but not sooner than
 * RETENTION_INTERVAL_MS after a run. The task needs no write to bring it forward: every write of an
 * event or a delivery arms the alarm for another task (fan-out notice, overdue deliveries), and each alarm
 * sets the next time from every task.
 */
import { EVENT_RETENTION_MS, retentionCutoff } from "../../../webhooks/retention";
import type { StoreAlarmTask } from "./alarms";

export const RETENTION_ROWS_PER_RUN = 500;
export const RETENTION_CONTINUE_MS = 1_000;
export const RETENTION_INTERVAL_MS = 3_600_000;

const APPROACHING = "deadline_approaching:";
/** An event that the reception deadlines still read: the approaching event of a document still PENDING. */
const STILL_READ = `o.dedupe_key LIKE '${APPROACHING}%' AND EXISTS (SELECT 1 FROM received_documents r WHERE r.id = substr(o.dedupe_key, ${APPROACHING.length + 1}) AND r.response_state = 'PENDING')`;
const OLD_EVENTS = `SELECT o.id FROM event_outbox o WHERE o.created_at < ? AND o.dispatched_at IS NOT NULL AND NOT (${STILL_READ}) ORDER BY o.created_at LIMIT ?`;
const OLD_DELIVERIES = `SELECT id FROM webhook_deliveries WHERE created_at < ? AND status != 'PENDING' ORDER BY created_at LIMIT ?`;

export interface RetentionRun {
  events: number;
  deliveries: number;
  attempts: number;
}

export class EventRetention implements StoreAlarmTask {
  readonly name = "event retention";
  private lastRunAt: number | null = null;
  private lastRunFull = false;

  constructor(
    private readonly sql: SqlStorage,
    private readonly rowsPerRun = RETENTION_ROWS_PER_RUN,
  ) {}

  touchedBy(): boolean {
    return false;
  }

  nextAt(now: number): number | null {
    if (this.lastRunFull) return now + RETENTION_CONTINUE_MS;
    const oldest = this.oldest();
    if (oldest === null) return null;
    const due = Date.parse(oldest) + EVENT_RETENTION_MS + 1;
    const notBefore = this.lastRunAt === null ? now : this.lastRunAt + RETENTION_INTERVAL_MS;
    return Number.isFinite(due) ? Math.max(due, notBefore) : notBefore;
  }

  /** The alarm runs every task each time it fires: this one purges only when due (at most hourly, unless the last run was full). */
  async run(now: number): Promise<void> {
    const due = this.lastRunAt === null || this.lastRunFull || now >= this.lastRunAt + RETENTION_INTERVAL_MS;
    if (due) this.purge(now);
  }

  /** Deletes what is past retention at `now`, within the bound (synchronous: one atomic step). */
  purge(now: number): RetentionRun {
    const cutoff = retentionCutoff(now);
    const events = this.sql.exec(`DELETE FROM event_outbox WHERE id IN (${OLD_EVENTS}) RETURNING 1`, cutoff, this.rowsPerRun).toArray().length;
    const ids = this.sql.exec<{ id: string }>(OLD_DELIVERIES, cutoff, this.rowsPerRun).toArray().map((r) => r.id);
    let attempts = 0;
    for (const id of ids) {
      attempts += this.sql.exec(`DELETE FROM webhook_attempts WHERE delivery_id = ? RETURNING 1`, id).toArray().length;
      this.sql.exec(`DELETE FROM webhook_deliveries WHERE id = ?`, id);
    }
    this.lastRunAt = now;
    this.lastRunFull = events === this.rowsPerRun || ids.length === this.rowsPerRun;
    return { events, deliveries: ids.length, attempts };
  }

  /** The oldest `created_at` among rows this task may one day delete. */
  private oldest(): string | null {
    const e = this.sql.exec<{ t: string | null }>(`SELECT min(created_at) AS t FROM event_outbox WHERE dispatched_at IS NOT NULL`).one().t;
    const d = this.sql.exec<{ t: string | null }>(`SELECT min(created_at) AS t FROM webhook_deliveries WHERE status != 'PENDING'`).one().t;
    return [e, d].filter((t): t is string => t !== null).sort()[0] ?? null;
  }
}
