/**
 * Fan-out: undispatched events become one delivery per subscribed, enabled endpoint, then one queue
 * message per delivery. Two sources:
 *
 * - a document store's events (`fanOutStore`, on the store's own notice): read from the store, and
 *   in ONE store batch their deliveries are inserted (unique per endpoint and event, INSERT OR
 *   IGNORE) and the events marked dispatched, in the same store as the events, so a retry after any
 *   crash finds either nothing done or everything done. Deliveries made but never queued (a crash
 *   after the batch) are queued again by the store's alarm (overdue-deliveries.ts). The endpoints come
 *   from the per-isolate cache (./endpoint-cache.ts): a store event costs no D1 statement;
 * - D1's outbox (`fanOut`): events not born in a store (control-plane: certificates, ENU alerts, an
 *   endpoint's disabling).
 *
 * For D1's outbox the deliveries go to the company's open document store and the events are stamped
 * dispatched in D1. The two writes are in two databases, so the store write is
 * idempotent: a delivery exists at most once per endpoint and event (unique key, INSERT OR IGNORE),
 * and a fan-out that finds deliveries of its events already made (a crash before the stamp) queues
 * the ones never attempted instead of making them again, in the open store or in the partition
 * before it (a roll-over between the crash and the retry). If the worker dies after the stamp, the
 * cron sweep finds the pending deliveries and re-drives them.
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../storage/db/client";
import { openStore, partitionedId, storeFor } from "../storage/db/document-store";
import { eventOutbox, webhookDeliveries } from "../storage/db/schema";
import { chunked } from "../lib/chunked";
import { enqueueDeliveries, type DeliveryRef } from "./messages";
import { activeEndpoints } from "./endpoint-cache";
import { subscribes, type EndpointRow } from "./endpoints";

/**
 * Events handled per fan-out call; a company with more is fanned out again at once. Under D1's 100
 * bound parameters per statement: the UPDATE that stamps them dispatched binds every id plus the time
 * (at 100 it failed on every try and a backlog of 100 events never moved).
 */
export const FANOUT_BATCH = 90;

export async function fanOut(db: Db, env: Env, companyId: string, now = new Date()): Promise<{ events: number; deliveries: number; more: boolean }> {
  const [events, endpoints] = await Promise.all([undispatched(db, companyId), activeEndpoints(db, companyId, now.getTime())]);
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
  const rows = deliveryRows(events, endpoints, companyId, store.ordinal, at).filter((r) => !made.keys.has(`${r.endpointId}|${r.eventId}`));
  const inserts: BatchItem<"sqlite">[] = rows.map((r) => insertDelivery(store.db, r));
  const created = inserts.length > 0 ? ((await store.db.batch(inserts as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as { id: string }[][]).flat() : [];
  await stampDispatched(db, eventIds, at);
  await enqueueDeliveries(env, [...made.unsent, ...created.map((d) => ({ id: d.id, companyId, partition: store.ordinal }))]);
  return { events: events.length, deliveries: created.length, more };
}

/**
 * The fan-out of one document store's events (its notice names it): the events and their deliveries
 * in one store batch, then the queue. No endpoint (most companies): the oldest events are marked
 * dispatched by one statement in the store, without reading them first (one store call per notice
 * instead of two; the endpoints come from the isolate's cache).
 */
export async function fanOutStore(db: Db, env: Env, companyId: string, ordinal: number, now = new Date()): Promise<{ events: number; deliveries: number; more: boolean }> {
  const store = storeFor(env, companyId, ordinal);
  const endpoints = await activeEndpoints(db, companyId, now.getTime());
  const at = now.toISOString();
  if (endpoints.length === 0) {
    const marked = await markOldestDispatched(store.db, companyId, at);
    return { events: marked.length, deliveries: 0, more: marked.length === FANOUT_BATCH };
  }
  const events = await undispatched(store.db, companyId);
  if (events.length === 0) return { events: 0, deliveries: 0, more: false };
  const inserts = deliveryRows(events, endpoints, companyId, ordinal, at).map((r) => insertDelivery(store.db, r));
  const statements: BatchItem<"sqlite">[] = [...inserts, ...dispatchMarks(store.db, events.map((e) => e.id), at)];
  const results = await store.db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const created = (results.slice(0, inserts.length) as { id: string }[][]).flat();
  await enqueueDeliveries(env, created.map((d) => ({ id: d.id, companyId, partition: ordinal })));
  return { events: events.length, deliveries: created.length, more: events.length === FANOUT_BATCH };
}

/** A company's undispatched events, and the order a fan-out takes them in (oldest first). */
const undispatchedOf = (companyId: string) => and(eq(eventOutbox.companyId, companyId), isNull(eventOutbox.dispatchedAt));
const OLDEST_FIRST = [asc(eventOutbox.createdAt), asc(eventOutbox.id)] as const;

/** The oldest undispatched events of a company in one outbox (D1's or a store's). */
function undispatched(db: Db, companyId: string) {
  return db.select().from(eventOutbox).where(undispatchedOf(companyId)).orderBy(...OLDEST_FIRST).limit(FANOUT_BATCH);
}

/** Marks the same events as `undispatched` would read dispatched, in one statement; their ids. */
function markOldestDispatched(db: Db, companyId: string, at: string) {
  const oldest = db.select({ id: eventOutbox.id }).from(eventOutbox).where(undispatchedOf(companyId)).orderBy(...OLDEST_FIRST).limit(FANOUT_BATCH);
  return db.update(eventOutbox).set({ dispatchedAt: at }).where(and(inArray(eventOutbox.id, oldest), isNull(eventOutbox.dispatchedAt))).returning({ id: eventOutbox.id });
}

type EventRow = typeof eventOutbox.$inferSelect;

/** One delivery row per event and subscribed endpoint, in partition `ordinal`. */
function deliveryRows(events: EventRow[], endpoints: EndpointRow[], companyId: string, ordinal: number, at: string) {
  return events.flatMap((e) =>
    endpoints
      .filter((ep) => subscribes(ep, e.type) && !excluded(e, ep.id))
      .map((ep) => ({ id: partitionedId("dlv", ordinal), companyId, endpointId: ep.id, eventId: e.id, eventType: e.type, nextAttemptAt: at, createdAt: at, updatedAt: at })),
  );
}

function insertDelivery(db: Db, row: typeof webhookDeliveries.$inferInsert) {
  return db.insert(webhookDeliveries).values(row).onConflictDoNothing().returning({ id: webhookDeliveries.id });
}

/** The statements marking events dispatched in an outbox (at most 100 bound parameters per statement: in chunks); a mark never moves an earlier one. */
function dispatchMarks(db: Db, eventIds: string[], at: string): BatchItem<"sqlite">[] {
  return chunked(eventIds, 90).map((ids) => db.update(eventOutbox).set({ dispatchedAt: at }).where(and(inArray(eventOutbox.id, ids), isNull(eventOutbox.dispatchedAt))));
}

/** Stamps the events dispatched in D1, in one batch. */
async function stampDispatched(db: Db, eventIds: string[], at: string): Promise<void> {
  await db.batch(dispatchMarks(db, eventIds, at) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
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
