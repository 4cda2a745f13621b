/**
 * Retention of webhook events and delivery records: an event, its deliveries and their
 * attempts are kept for EVENT_RETENTION_DAYS after the event's `created_at` (Stripe keeps events
 * retrievable for 30 days; the retry schedule ends after about 4 days), then deleted:
 *
 * - D1's `event_outbox` (control-plane events): rows already fanned out (`dispatched_at`
 *   set) and past retention, by the cron in bounded batches (`purgeD1Events`);
 * - each document store's `event_outbox` (its own events, already fanned out) and its deliveries and attempts, by the store's alarm
 *   (src/operations/objects/document-store/event-retention.ts).
 *
 * A redelivery of an event past retention is refused (`WEBHOOK_EVENT_EXPIRED`), and an attempt whose
 * event is gone ends its delivery FAILED with that reason: nothing is sent without its event.
 *
 * Writers that dedupe on an outbox (unique company + dedupe key) cannot record an event twice
 * because its row went: `invoice.<status>` is reached once per document; `certificate.expiring` per
 * threshold is only recorded within that threshold's window (at most 15 days, before the expiry);
 * ENU alerts are deduplicated by the folio allocator's own `alerts` table; an endpoint's disabling
 * event is keyed on its failure run. The stores' `deadline_approaching` events are kept while their
 * document is PENDING (event-retention.ts).
 */
import { and, asc, inArray, isNotNull, lt } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { eventOutbox } from "../storage/db/schema";
import { decodeUlidTime } from "../lib/ids";

export const EVENT_RETENTION_DAYS = 30;
export const EVENT_RETENTION_MS = EVENT_RETENTION_DAYS * 86_400_000;

/** Rows deleted per D1 statement, and statements per cron run (20,000 rows every 5 minutes at most). */
export const D1_PURGE_BATCH = 1_000;
export const D1_PURGE_BATCHES_PER_RUN = 20;

/** The instant before which events (and their deliveries) are past retention. */
export function retentionCutoff(now: Date | number): string {
  return new Date((typeof now === "number" ? now : now.getTime()) - EVENT_RETENTION_MS).toISOString();
}

export function isPastRetention(createdAt: string, now: Date): boolean {
  return createdAt < retentionCutoff(now);
}

/**
 * Whether an event id that is not found names an event past retention: ids made by `newId`
 * (`evt_<ULID>`) carry their creation time. Invoice events have random ids and cannot tell.
 */
export function idPastRetention(eventId: string, now: Date): boolean {
  const ulid = /^evt_([0-9A-HJKMNP-TV-Z]{26})$/.exec(eventId)?.[1];
  if (!ulid) return false;
  const t = decodeUlidTime(ulid);
  return Number.isFinite(t) && t < now.getTime() - EVENT_RETENTION_MS;
}

export const pastRetentionMessage = (eventId: string) =>
  `Event ${eventId} is older than the ${EVENT_RETENTION_DAYS}-day retention of events and deliveries: it was deleted and cannot be sent again.`;

/**
 * Deletes D1's fanned-out events past retention, oldest first, at most `batch` rows per statement and
 * `batches` statements per call (walking `event_outbox_created_idx`); stops at the first batch that is
 * not full. Events never fanned out are kept (the stale-event sweep still owes them a fan-out).
 * Returns how many rows went and whether a full last batch may have left more for the next run.
 */
export async function purgeD1Events(db: Db, now: Date, batch = D1_PURGE_BATCH, batches = D1_PURGE_BATCHES_PER_RUN): Promise<{ deleted: number; more: boolean }> {
  const cutoff = retentionCutoff(now);
  let deleted = 0;
  for (let i = 0; i < batches; i++) {
    const oldest = db
      .select({ id: eventOutbox.id })
      .from(eventOutbox)
      .where(and(lt(eventOutbox.createdAt, cutoff), isNotNull(eventOutbox.dispatchedAt)))
      .orderBy(asc(eventOutbox.createdAt))
      .limit(batch);
    const gone = await db.delete(eventOutbox).where(inArray(eventOutbox.id, oldest)).returning({ id: eventOutbox.id });
    deleted += gone.length;
    if (gone.length < batch) return { deleted, more: false };
  }
  return { deleted, more: true };
}
