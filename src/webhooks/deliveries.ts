/**
 * The delivery log: deliveries of an endpoint or of an event (filters, pages), their attempts, and
 * redelivery (one event to one endpoint, or every failed delivery of an endpoint since a time), plus
 * the sweep's query for deliveries whose queue message was lost.
 */
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { eventOutbox, webhookAttempts, webhookDeliveries } from "../db/schema";
import { AppError } from "../errors";
import { chunked } from "../lib/chunked";
import { newId } from "../lib/ids";
import { enqueueDeliveries } from "../queues/webhooks";
import { getEndpoint } from "./endpoints";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

export interface DeliveryFilters {
  endpoint_id?: string;
  event_id?: string;
  event_type?: string;
  status?: DeliveryRow["status"];
  since?: string;
}

export async function listDeliveries(db: Db, companyId: string, f: DeliveryFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(webhookDeliveries.companyId, companyId)];
  if (f.endpoint_id) where.push(eq(webhookDeliveries.endpointId, f.endpoint_id));
  if (f.event_id) where.push(eq(webhookDeliveries.eventId, f.event_id));
  if (f.event_type) where.push(eq(webhookDeliveries.eventType, f.event_type));
  if (f.status) where.push(eq(webhookDeliveries.status, f.status));
  if (f.since) where.push(gte(webhookDeliveries.createdAt, f.since));
  const condition = and(...where);
  const [rows, totals] = await db.batch([
    db.select().from(webhookDeliveries).where(condition).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(webhookDeliveries).where(condition),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}

export async function getDelivery(db: Db, companyId: string, id: string): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }> {
  const delivery = await db.query.webhookDeliveries.findFirst({ where: and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.companyId, companyId)) });
  if (!delivery) throw new AppError("WEBHOOK_DELIVERY_NOT_FOUND", `Delivery ${id} does not exist for this company.`);
  const attempts = await db.select().from(webhookAttempts).where(and(eq(webhookAttempts.deliveryId, id), eq(webhookAttempts.companyId, companyId))).orderBy(asc(webhookAttempts.attempt));
  return { delivery, attempts };
}

/** Restarts deliveries (a fresh retry schedule) and queues them. */
async function restart(db: Db, env: Env, companyId: string, ids: string[], now: Date): Promise<number> {
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
  await enqueueDeliveries(env, restarted.map((d) => ({ id: d.id, companyId })));
  return restarted.length;
}

/** Sends one event again to one endpoint (a new delivery if it never had one, e.g. it subscribed later). */
export async function redeliverEvent(db: Db, env: Env, companyId: string, endpointId: string, eventId: string, now = new Date()): Promise<DeliveryRow> {
  await getEndpoint(db, companyId, endpointId);
  const event = await db.query.eventOutbox.findFirst({ where: and(eq(eventOutbox.id, eventId), eq(eventOutbox.companyId, companyId)) });
  if (!event) throw new AppError("WEBHOOK_DELIVERY_NOT_FOUND", `Event ${eventId} does not exist for this company.`);
  const at = now.toISOString();
  await db.insert(webhookDeliveries).values({ id: newId("dlv"), companyId, endpointId, eventId, eventType: event.type, nextAttemptAt: at, createdAt: at, updatedAt: at }).onConflictDoNothing();
  const row = (await db.query.webhookDeliveries.findFirst({ where: and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.eventId, eventId)) }))!;
  await restart(db, env, companyId, [row.id], now);
  return { ...row, status: "PENDING", roundAttempts: 0, nextAttemptAt: at };
}

/** Every FAILED delivery of an endpoint created since `since`, sent again; returns how many. */
export async function redeliverFailed(db: Db, env: Env, companyId: string, endpointId: string, since: string, now = new Date()): Promise<number> {
  await getEndpoint(db, companyId, endpointId);
  const failed = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "FAILED"), gte(webhookDeliveries.createdAt, since)))
    .limit(10_000);
  return restart(db, env, companyId, failed.map((r) => r.id), now);
}

/** PENDING deliveries whose attempt time passed before `cutoff` (their queue message was lost). */
export async function overdueDeliveries(db: Db, cutoff: string, limit = 1000): Promise<{ id: string; companyId: string }[]> {
  return db
    .select({ id: webhookDeliveries.id, companyId: webhookDeliveries.companyId })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, "PENDING"), lt(webhookDeliveries.nextAttemptAt, cutoff), sql`${webhookDeliveries.nextAttemptAt} IS NOT NULL`))
    .limit(limit);
}

/** A `webhook.test` event for one endpoint only, delivered at once through the queue. */
export async function sendTestEvent(db: Db, env: Env, companyId: string, endpointId: string, now = new Date()): Promise<DeliveryRow> {
  await getEndpoint(db, companyId, endpointId);
  const at = now.toISOString();
  const eventId = newId("evt");
  const delivery: DeliveryRow = {
    id: newId("dlv"), companyId, endpointId, eventId, eventType: "webhook.test", status: "PENDING", attempts: 0, roundAttempts: 0,
    nextAttemptAt: at, lastResponseStatus: null, lastError: null, createdAt: at, updatedAt: at,
  };
  await db.batch([
    db.insert(eventOutbox).values({ id: eventId, companyId, type: "webhook.test", payload: JSON.stringify({ message: "Test event from the DTE API" }), createdAt: at, dispatchedAt: at }),
    db.insert(webhookDeliveries).values(delivery),
  ]);
  await enqueueDeliveries(env, [{ id: delivery.id, companyId }]);
  return delivery;
}
