/**
 * Fan-out: a company's undispatched events (D1's outbox) become one delivery per subscribed, enabled
 * endpoint in the company's open document store (issue 16), then the events are stamped dispatched in
 * D1, then one queue message per delivery. The two writes are in two databases, so the store write is
 * idempotent: a delivery exists at most once per endpoint and event (unique key, INSERT OR IGNORE),
 * and a fan-out that finds deliveries of its events already made (a crash before the stamp) queues
 * the ones never attempted instead of making them again, in the open store or in the partition
 * before it (a roll-over between the crash and the retry). If the worker dies after the stamp, the
 * cron sweep finds the pending deliveries and re-drives them.
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db/client";
import { openStore, partitionedId, storeFor } from "../db/document-store";
import { eventOutbox, webhookDeliveries, webhookEndpoints } from "../db/schema";
import { chunked } from "../lib/chunked";
import { enqueueDeliveries, type DeliveryRef } from "../queues/webhooks";
import { subscribes } from "./endpoints";

/**
 * Events handled per fan-out call; a company with more is fanned out again at once. Under D1's 100
 * bound parameters per statement: the UPDATE that stamps them dispatched binds every id plus the time
 * (at 100 it failed on every try and a backlog of 100 events never moved).
 */
export const FANOUT_BATCH = 90;

export async function fanOut(db: Db, env: Env, companyId: string, now = new Date()): Promise<{ events: number; deliveries: number; more: boolean }> {
  const [events, endpoints] = await db.batch([
    db.select().from(eventOutbox).where(and(eq(eventOutbox.companyId, companyId), isNull(eventOutbox.dispatchedAt))).orderBy(asc(eventOutbox.createdAt), asc(eventOutbox.id)).limit(FANOUT_BATCH),
    db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.status, "ACTIVE"), eq(webhookEndpoints.enabled, true))),
  ]);
  if (events.length === 0) return { events: 0, deliveries: 0, more: false };
  const at = now.toISOString();
  const eventIds = events.map((e) => e.id);
  const more = events.length === FANOUT_BATCH;
  // No endpoint to deliver to: the events are only stamped (no store is opened or read). A delivery
  // made by an earlier fan-out that died before its stamp is re-driven by its store's alarm.
  if (endpoints.length === 0) {
    await stampDispatched(db, eventIds, at);
    return { events: events.length, deliveries: 0, more };
  }
  const store = await openStore(env, companyId, now);
  const made = await existingDeliveries(env, companyId, store.ordinal, eventIds);
  const rows = events.flatMap((e) =>
    endpoints
      .filter((ep) => subscribes(ep, e.type) && !excluded(e, ep.id) && !made.keys.has(`${ep.id}|${e.id}`))
      .map((ep) => ({ id: partitionedId("dlv", store.ordinal), companyId, endpointId: ep.id, eventId: e.id, eventType: e.type, nextAttemptAt: at, createdAt: at, updatedAt: at })),
  );
  const inserts: BatchItem<"sqlite">[] = rows.map((r) => store.db.insert(webhookDeliveries).values(r).onConflictDoNothing().returning({ id: webhookDeliveries.id }));
  const created = inserts.length > 0 ? ((await store.db.batch(inserts as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as { id: string }[][]).flat() : [];
  await stampDispatched(db, eventIds, at);
  await enqueueDeliveries(env, [...made.unsent, ...created.map((d) => ({ id: d.id, companyId, partition: store.ordinal }))]);
  return { events: events.length, deliveries: created.length, more };
}

/** Stamps the events dispatched in D1 (at most 100 bound parameters per statement: in chunks, one batch). */
async function stampDispatched(db: Db, eventIds: string[], at: string): Promise<void> {
  const stamps: BatchItem<"sqlite">[] = chunked(eventIds, 90).map((ids) => db.update(eventOutbox).set({ dispatchedAt: at }).where(inArray(eventOutbox.id, ids)));
  await db.batch(stamps as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}

/**
 * Deliveries of these events already in the open store or the partition before it (made by a
 * fan-out that died before stamping its events): their keys, and those never attempted, to queue.
 */
async function existingDeliveries(env: Env, companyId: string, ordinal: number, eventIds: string[]): Promise<{ keys: Set<string>; unsent: DeliveryRef[] }> {
  const ordinals = ordinal > 1 ? [ordinal, ordinal - 1] : [ordinal];
  const found = await Promise.all(
    ordinals.map(async (o) => {
      const rows = (await Promise.all(chunked(eventIds, 90).map((ids) => storeFor(env, companyId, o).db
        .select({ id: webhookDeliveries.id, endpointId: webhookDeliveries.endpointId, eventId: webhookDeliveries.eventId, status: webhookDeliveries.status, attempts: webhookDeliveries.attempts })
        .from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids))))).flat();
      return rows.map((r) => ({ ...r, partition: o }));
    }),
  );
  const rows = found.flat();
  return {
    keys: new Set(rows.map((r) => `${r.endpointId}|${r.eventId}`)),
    unsent: rows.filter((r) => r.status === "PENDING" && r.attempts === 0).map((r) => ({ id: r.id, companyId, partition: r.partition })),
  };
}

/** An event about an endpoint (its disabling) is not sent to that endpoint itself. */
function excluded(e: { type: string; payload: string }, endpointId: string): boolean {
  return e.type === "webhook_endpoint.disabled" && (JSON.parse(e.payload) as { endpoint_id?: string }).endpoint_id === endpointId;
}

/** Companies with events left undispatched since before `cutoff` (a lost fan-out message). */
export async function companiesWithStaleEvents(db: Db, cutoff: string, limit = 500): Promise<string[]> {
  const rows = await db
    .selectDistinct({ companyId: eventOutbox.companyId })
    .from(eventOutbox)
    .where(and(isNull(eventOutbox.dispatchedAt), sql`${eventOutbox.createdAt} < ${cutoff}`))
    .limit(limit);
  return rows.map((r) => r.companyId);
}
