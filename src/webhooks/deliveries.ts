/**
 * The delivery log: deliveries of an endpoint or of an event (filters, pages), their attempts, and
 * redelivery (one event to one endpoint, or every failed delivery of an endpoint since a time).
 * Deliveries and their attempts live in the company's document stores: a delivery id names
 * its partition, its attempts are in the same store, lists walk the partitions newest first. An
 * event born in a store lives there with its deliveries; control-plane events are in D1's
 * outbox (./fanout.ts); endpoints stay in D1. A delivery whose queue message was lost is queued again by its store's
 * alarm (src/operations/objects/document-store/overdue-deliveries.ts).
 */
import { and, asc, count, desc, eq, gte, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { createDb, type Db } from "../storage/db/client";
import { knownStoreForId, openStore, partitionedId, partitionsOf, storeFor } from "../storage/db/document-store";
import { pageAcrossPartitions } from "../storage/db/document-store/lists";
import { documentPartitions, eventOutbox, webhookAttempts, webhookDeliveries, type DocumentPartition } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { chunked } from "../lib/chunked";
import { newId } from "../lib/ids";
import { enqueueDeliveries, type DeliveryRef } from "./messages";
import { getEndpoint } from "./endpoints";
import { EVENT_RETENTION_DAYS, idPastRetention, isPastRetention, pastRetentionMessage, retentionCutoff } from "./retention";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
type EventRow = typeof eventOutbox.$inferSelect;

/**
 * How long after its partition closed a delivery may still be made in it: a store's events are fanned
 * out where they are, on its notice (re-sent every 2 minutes while they wait), so a partition closed
 * before `since` minus this margin holds no delivery created since: the retry schedule (about 4 days)
 * and a margin.
 */
export const FANOUT_AFTER_CLOSE_MS = 7 * 86_400_000;

export interface DeliveryFilters {
  endpoint_id?: string;
  event_id?: string;
  event_type?: string;
  status?: DeliveryRow["status"];
  since?: string;
}

export async function listDeliveries(env: Env, companyId: string, f: DeliveryFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(webhookDeliveries.companyId, companyId)];
  if (f.endpoint_id) where.push(eq(webhookDeliveries.endpointId, f.endpoint_id));
  if (f.event_id) where.push(eq(webhookDeliveries.eventId, f.event_id));
  if (f.event_type) where.push(eq(webhookDeliveries.eventType, f.event_type));
  if (f.status) where.push(eq(webhookDeliveries.status, f.status));
  if (f.since) where.push(gte(webhookDeliveries.createdAt, f.since));
  const condition = and(...where);
  return pageAcrossPartitions(env, companyId, {
    count: async (db) => (await db.select({ n: count() }).from(webhookDeliveries).where(condition))[0]?.n ?? 0,
    rows: (db, limit, offset) => db.select().from(webhookDeliveries).where(condition).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(limit).offset(offset),
  }, page);
}

export async function getDelivery(env: Env, companyId: string, id: string): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }> {
  const db = (await knownStoreForId(env, companyId, id))?.db;
  const delivery = db && (await db.query.webhookDeliveries.findFirst({ where: and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.companyId, companyId)) }));
  if (!db || !delivery) throw new AppError("WEBHOOK_DELIVERY_NOT_FOUND", `Delivery ${id} does not exist for this company.`);
  const attempts = await db.select().from(webhookAttempts).where(and(eq(webhookAttempts.deliveryId, id), eq(webhookAttempts.companyId, companyId))).orderBy(asc(webhookAttempts.attempt));
  return { delivery, attempts };
}

/** Restarts deliveries of one partition (a fresh retry schedule) and queues them. */
async function restart(env: Env, companyId: string, partition: number, ids: string[], now: Date): Promise<number> {
  const db = storeFor(env, companyId, partition).db;
  const at = now.toISOString();
  let restarted: { id: string }[] = [];
  for (const chunk of chunked(ids, 90)) {
    restarted = restarted.concat(
      await db
        .update(webhookDeliveries)
        .set({ status: "PENDING", roundAttempts: 0, nextAttemptAt: at, updatedAt: at })
        .where(and(eq(webhookDeliveries.companyId, companyId), inArray(webhookDeliveries.id, chunk)))
        .returning({ id: webhookDeliveries.id }),
    );
  }
  await enqueueDeliveries(env, restarted.map((d) => ({ id: d.id, companyId, partition })));
  return restarted.length;
}

/**
 * An event of the company: in the store of one of its partitions (newest first, all read at once), or
 * in D1's outbox (control-plane events); `partition` is null for D1.
 */
export async function findEvent(db: Db, env: Env, companyId: string, eventId: string): Promise<{ event: EventRow | undefined; partition: number | null }> {
  const mine = and(eq(eventOutbox.id, eventId), eq(eventOutbox.companyId, companyId));
  const stores = await partitionsOf(env, companyId);
  const found = await Promise.all(stores.map(async (p) => ({ partition: p.ordinal, event: await storeFor(env, companyId, p.ordinal).db.query.eventOutbox.findFirst({ where: mine }) })));
  const hit = found.find((f) => f.event);
  if (hit) return hit;
  return { event: await db.query.eventOutbox.findFirst({ where: mine }), partition: null };
}

/**
 * Sends one event again to one endpoint: its delivery, in whichever partition holds it, or a new one
 * if it never had one (e.g. the endpoint subscribed later), beside its event.
 */
export async function redeliverEvent(db: Db, env: Env, companyId: string, endpointId: string, eventId: string, now = new Date()): Promise<DeliveryRow> {
  await getEndpoint(db, companyId, endpointId);
  const { event, partition: eventPartition } = await findEvent(db, env, companyId, eventId);
  if ((event && isPastRetention(event.createdAt, now)) || (!event && idPastRetention(eventId, now))) throw new AppError("WEBHOOK_EVENT_EXPIRED", pastRetentionMessage(eventId));
  if (!event) throw new AppError("WEBHOOK_DELIVERY_NOT_FOUND", `Event ${eventId} does not exist for this company (events are kept ${EVENT_RETENTION_DAYS} days).`);
  const at = now.toISOString();
  const mine = and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.eventId, eventId));
  const found = await Promise.all((await partitionsOf(env, companyId)).map(async (p) => ({ partition: p.ordinal, row: await storeFor(env, companyId, p.ordinal).db.query.webhookDeliveries.findFirst({ where: mine }) })));
  let hit = found.find((f) => f.row);
  if (!hit) {
    // A new delivery goes with its event (a store event's store), or to the open store (a D1 event).
    const store = eventPartition !== null ? storeFor(env, companyId, eventPartition) : await openStore(env, companyId, now);
    await store.db.insert(webhookDeliveries).values({ id: partitionedId("dlv", store.ordinal), companyId, endpointId, eventId, eventType: event.type, nextAttemptAt: at, createdAt: at, updatedAt: at }).onConflictDoNothing();
    hit = { partition: store.ordinal, row: await store.db.query.webhookDeliveries.findFirst({ where: mine }) };
  }
  const row = hit.row!;
  await restart(env, companyId, hit.partition, [row.id], now);
  return { ...row, status: "PENDING", roundAttempts: 0, nextAttemptAt: at };
}

/**
 * Every FAILED delivery of an endpoint created since `since`, sent again; returns how many. Deliveries
 * past the retention are not (their events are deleted, or about to be): `since` starts at it at most.
 */
export async function redeliverFailed(db: Db, env: Env, companyId: string, endpointId: string, requestedSince: string, now = new Date()): Promise<number> {
  await getEndpoint(db, companyId, endpointId);
  const cutoff = retentionCutoff(now);
  const since = requestedSince > cutoff ? requestedSince : cutoff;
  // A partition closed well before `since` holds no delivery created after it (FANOUT_AFTER_CLOSE_MS).
  const closedSince = new Date(Date.parse(since) - FANOUT_AFTER_CLOSE_MS).toISOString();
  const partitions = (await partitionsOf(env, companyId)).filter((p) => !p.closedAt || p.closedAt >= closedSince);
  const counts = await Promise.all(partitions.map(async (p) => {
    const failed = await storeFor(env, companyId, p.ordinal).db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "FAILED"), gte(webhookDeliveries.createdAt, since)))
      .limit(10_000);
    return restart(env, companyId, p.ordinal, failed.map((r) => r.id), now);
  }));
  return counts.reduce((a, b) => a + b, 0);
}

/** A `webhook.test` event for one endpoint only (D1's outbox, already dispatched), its delivery in the open store, queued at once. */
export async function sendTestEvent(db: Db, env: Env, companyId: string, endpointId: string, now = new Date()): Promise<DeliveryRow> {
  await getEndpoint(db, companyId, endpointId);
  const at = now.toISOString();
  const eventId = newId("evt");
  const store = await openStore(env, companyId, now);
  const delivery: DeliveryRow = {
    id: partitionedId("dlv", store.ordinal), companyId, endpointId, eventId, eventType: "webhook.test", status: "PENDING", attempts: 0, roundAttempts: 0,
    nextAttemptAt: at, lastResponseStatus: null, lastError: null, createdAt: at, updatedAt: at,
  };
  await db.insert(eventOutbox).values({ id: eventId, companyId, type: "webhook.test", payload: JSON.stringify({ message: "Test event from the DTE API" }), createdAt: at, dispatchedAt: at });
  await store.db.insert(webhookDeliveries).values(delivery);
  await enqueueDeliveries(env, [{ id: delivery.id, companyId, partition: store.ordinal }]);
  return delivery;
}
