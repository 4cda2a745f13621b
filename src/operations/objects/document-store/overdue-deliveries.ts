/**
 * The store's own sweep of webhook deliveries whose queue message was lost: a PENDING
 * delivery whose attempt time passed more than DELIVERY_STALE_MS ago is queued again. Before, the
 * cron asked every open partition's store for them every 5 minutes (100,000 Durable Object calls per
 * run at 100,000 companies); now each store keeps an alarm at its earliest pending delivery's time
 * plus that margin, so only stores with deliveries in flight do anything, when they are due.
 *
 * Queuing again is harmless: the consumer attempts a delivery only while it is PENDING and due, so a
 * delivery whose message was merely slow is attempted once. The alarm comes back at most every
 * DELIVERY_STALE_MS while deliveries stay overdue (the queue itself is down), as the cron did.
 */
import { ordinalOfId } from "../../../storage/db/document-store";
import { enqueueDeliveries, type DeliveryRef } from "../../../webhooks/messages";
import type { StoreAlarmTask } from "./alarms";

/** How long past its attempt time a PENDING delivery may wait for its queue message before it is queued again. */
export const DELIVERY_STALE_MS = 2 * 60_000;
/** At most this many deliveries are queued again per alarm. */
export const REDRIVE_BATCH = 500;


export class OverdueDeliveries implements StoreAlarmTask {
  readonly name = "overdue webhook deliveries";

  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Pick<Env, "WEBHOOK_QUEUE">,
  ) {}

  touchedBy(sql: string): boolean {
    return sql.includes("webhook_deliveries");
  }

  nextAt(now: number): number | null {
    const earliest = this.sql.exec<{ t: string | null }>("SELECT min(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'PENDING'").one().t;
    if (earliest === null) return null;
    const due = Date.parse(earliest) + DELIVERY_STALE_MS;
    // Never sooner than the margin from now: a delivery queued a moment ago has its message in flight.
    return Number.isFinite(due) ? Math.max(due, now + DELIVERY_STALE_MS) : now + DELIVERY_STALE_MS;
  }

  async run(now: number): Promise<void> {
    const refs = this.overdue(now);
    if (refs.length > 0) await enqueueDeliveries(this.env as Env, refs);
  }

  /** PENDING deliveries whose attempt time passed more than the margin before `now`, oldest first. */
  overdue(now: number): DeliveryRef[] {
    const cutoff = new Date(now - DELIVERY_STALE_MS).toISOString();
    return this.sql
      .exec<{ id: string; company_id: string }>(
        "SELECT id, company_id FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at IS NOT NULL AND next_attempt_at < ? ORDER BY next_attempt_at LIMIT ?",
        cutoff,
        REDRIVE_BATCH,
      )
      .toArray()
      .map((r) => ({ id: r.id, companyId: r.company_id, partition: ordinalOfId(r.id) ?? 0 }));
  }
}
