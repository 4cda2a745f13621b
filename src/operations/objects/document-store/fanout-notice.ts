/**
 * The store's fan-out notice, a task of the store's alarm: events a writer puts into the
 * store's `event_outbox` in the same batch as the change they describe stay in this store; the alarm
 * sends ONE webhook-queue message naming the store (company and partition) while it holds events not
 * fanned out (`dispatched_at` NULL), and the fan-out (src/webhooks/fanout.ts `fanOutStore`) makes
 * their deliveries here and marks them dispatched in one store batch. Nothing of theirs goes to D1.
 *
 * At least once: a write into the outbox makes the notice due at once; after a notice the task is due
 * again NOTICE_REDRIVE_MS later while events still wait (a lost or failed notice, a fan-out that
 * died), which replaces the cron's D1 stale-event sweep for store events; a send that failed is
 * tried again after NOTICE_RETRY_MS. A notice for events already fanned out finds nothing.
 *
 * The store knows its company and partition from its own name (`ctx.id.name`, the name given to
 * `idFromName`: available inside the object, alarms included, since Cloudflare's changelog of
 * 2026-03-15 "Access Durable Object name via ctx.id.name").
 */
import { log } from "../../../lib/log";
import { notifyStore } from "../../../webhooks/messages";
import type { StoreAlarmTask } from "./alarms";

/** How long after a notice the alarm sends another while events still wait. */
export const NOTICE_REDRIVE_MS = 2 * 60_000;
/** Delay before the alarm retries a notice whose send failed (the queue unavailable). */
export const NOTICE_RETRY_MS = 10_000;

/** A statement that writes into the outbox (Drizzle's `insert into "event_outbox"`, raw SQL too). */
const OUTBOX_WRITE = /^\s*insert\s+(?:or\s+\w+\s+)?into\s+"?event_outbox"?[\s(]/i;

/** The fan-out's mark of events dispatched (src/webhooks/fanout.ts `fanOutStore`). */
const OUTBOX_MARK = /^\s*update\s+"?event_outbox"?\s+set\s+"?dispatched_at"?/i;

export function writesOutbox(sql: string): boolean {
  return OUTBOX_WRITE.test(sql);
}

export function hasPending(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM event_outbox WHERE dispatched_at IS NULL LIMIT 1`).toArray().length > 0;
}

/**
 * The company and partition of a store from its name (`<companyId>:<ordinal>`); null for an index
 * store (`<owner>:index`).
 */
export function storeOfName(name: string | undefined): { companyId: string; ordinal: number } | null {
  const m = /^(.+):(\d+)$/.exec(name ?? "");
  return m ? { companyId: m[1]!, ordinal: Number(m[2]) } : null;
}

export class FanoutNotice implements StoreAlarmTask {
  readonly name = "fan-out notice";
  private sentAt: number | null = null;
  private retryAt: number | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Pick<Env, "WEBHOOK_QUEUE">,
    private readonly storeName: string | undefined,
  ) {}

  /** A new event is due a notice at once (a notice sent before it may already have been consumed). */
  touchedBy(sql: string): boolean {
    if (!writesOutbox(sql)) return false;
    this.sentAt = null;
    return true;
  }

  /** The fan-out marked events: the re-drive time this task set may be owed nothing any more. */
  relievedBy(sql: string): boolean {
    return OUTBOX_MARK.test(sql);
  }

  nextAt(now: number): number | null {
    if (!hasPending(this.sql)) return null;
    if (this.retryAt !== null) return Math.max(this.retryAt, now);
    return this.sentAt === null ? now : Math.max(this.sentAt + NOTICE_REDRIVE_MS, now);
  }

  async run(now: number): Promise<void> {
    const due = this.nextAt(now);
    if (due !== null && due <= now) await this.sendNow(now);
  }

  /** Sends the notice now if events wait; returns whether it did. Throws when the queue fails (and sets the retry time). */
  async sendNow(now: number = Date.now()): Promise<boolean> {
    if (!hasPending(this.sql)) return false;
    const store = storeOfName(this.storeName);
    if (!store) {
      // Due again at the re-drive time, not at once: the alarm must not spin on events it cannot announce.
      log("error", "events in a store without a partition name: no fan-out notice", { store: this.storeName ?? null });
      this.sentAt = now;
      return false;
    }
    try {
      await notifyStore(this.env, store.companyId, store.ordinal);
    } catch (err) {
      this.retryAt = now + NOTICE_RETRY_MS;
      throw err;
    }
    this.retryAt = null;
    this.sentAt = now;
    return true;
  }
}
