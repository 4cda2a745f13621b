/**
 * The store outbox relay (issue 16): events a writer puts into a store's `event_outbox` in the same
 * batch as the change they describe are copied to D1's `event_outbox` (INSERT OR IGNORE on the id,
 * and on (company, dedupe key) by the unique index: a repeat after a crash between the D1 write and
 * the local mark is harmless), then marked relayed in the store (`dispatched_at` there means
 * "copied to D1"; D1's own column still means "fanned out"). The fan-out (src/webhooks/fanout.ts)
 * then works on D1's outbox as before. Same pattern as the folio allocator's ENU alerts.
 */
import { notifyEvents } from "../../queues/webhooks";
import type { StoreAlarmTask } from "./alarms";

/** Rows per D1 batch (6 bound parameters each, one statement per row). */
export const RELAY_CHUNK = 50;
/** Delay before the alarm retries a relay that failed (D1 unavailable). */
export const RELAY_RETRY_MS = 10_000;

/** A statement that writes into the outbox (Drizzle's `insert into "event_outbox"`, raw SQL too). */
const OUTBOX_WRITE = /^\s*insert\s+(?:or\s+\w+\s+)?into\s+"?event_outbox"?[\s(]/i;

export function writesOutbox(sql: string): boolean {
  return OUTBOX_WRITE.test(sql);
}

interface PendingEvent {
  id: string;
  company_id: string;
  type: string;
  dedupe_key: string | null;
  payload: string;
  created_at: string;
}

export function hasPending(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM event_outbox WHERE dispatched_at IS NULL LIMIT 1`).toArray().length > 0;
}

/** Copies every unrelayed event of the store to D1, oldest first; returns how many. Throws when D1 fails. */
export async function relayPending(sql: SqlStorage, env: Pick<Env, "DB" | "WEBHOOK_QUEUE">): Promise<number> {
  let relayed = 0;
  for (;;) {
    const pending = sql
      .exec<PendingEvent & Record<string, SqlStorageValue>>(
        `SELECT id, company_id, type, dedupe_key, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT ?`,
        RELAY_CHUNK,
      )
      .toArray();
    if (pending.length === 0) return relayed;
    const insert = env.DB.prepare("INSERT OR IGNORE INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    await env.DB.batch(pending.map((e) => insert.bind(e.id, e.company_id, e.type, e.dedupe_key, e.payload, e.created_at)));
    const at = new Date().toISOString();
    for (const e of pending) sql.exec(`UPDATE event_outbox SET dispatched_at = ? WHERE id = ? AND dispatched_at IS NULL`, at, e.id);
    relayed += pending.length;
    // Best effort: the cron's stale-event sweep re-drives a fan-out whose message was lost.
    await notifyEvents(env as Env, pending.map((e) => e.company_id)).catch(() => undefined);
    if (pending.length < RELAY_CHUNK) return relayed;
  }
}

/**
 * The relay as one task of the store's alarm (./alarms.ts): due at once while events wait, or at the
 * retry time after a relay that failed; a write into the outbox brings the alarm forward. Relays run
 * one after another (the alarm's and an on-demand `relayNow`), so an event is never sent twice
 * concurrently.
 */
export class OutboxRelay implements StoreAlarmTask {
  readonly name = "outbox relay";
  private retryAt: number | null = null;
  private relaying: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Pick<Env, "DB" | "WEBHOOK_QUEUE">,
  ) {}

  touchedBy(sql: string): boolean {
    return writesOutbox(sql);
  }

  nextAt(now: number): number | null {
    if (!hasPending(this.sql)) return null;
    return this.retryAt !== null && this.retryAt > now ? this.retryAt : now;
  }

  async run(): Promise<void> {
    if (hasPending(this.sql)) await this.relayNow();
  }

  /** Relays now, after any relay in progress; returns how many. Throws when D1 fails (and sets the retry time). */
  relayNow(): Promise<number> {
    const run = this.relaying.catch(() => 0).then(() => relayPending(this.sql, this.env));
    this.relaying = run.catch(() => 0);
    return run.then(
      (n) => {
        this.retryAt = null;
        return n;
      },
      (err: unknown) => {
        this.retryAt = Date.now() + RELAY_RETRY_MS;
        throw err;
      },
    );
  }
}
