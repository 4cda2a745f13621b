/**
 * Fan-out: a company's undispatched events become one delivery per subscribed, enabled endpoint, and
 * the events are stamped dispatched, in one D1 batch (a delivery exists at most once per endpoint and
 * event: unique key). Then one queue message per new delivery. If the worker dies in between, the
 * cron sweep finds the undispatched events or the pending deliveries and re-drives them.
 */
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db/client";
import { eventOutbox, webhookDeliveries, webhookEndpoints } from "../db/schema";
import { chunked } from "../lib/chunked";
import { newId } from "../lib/ids";
import { enqueueDeliveries } from "../queues/webhooks";
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
  const rows = events.flatMap((e) => endpoints.filter((ep) => subscribes(ep, e.type) && !excluded(e, ep.id)).map((ep) => ({ id: newId("dlv"), companyId, endpointId: ep.id, eventId: e.id, eventType: e.type, nextAttemptAt: at, createdAt: at, updatedAt: at })));
  const statements: BatchItem<"sqlite">[] = rows.map((r) => db.insert(webhookDeliveries).values(r).onConflictDoNothing().returning({ id: webhookDeliveries.id }));
  // D1 binds at most 100 parameters per statement: the stamp goes in chunks.
  for (const ids of chunked(events.map((e) => e.id), 90)) statements.push(db.update(eventOutbox).set({ dispatchedAt: at }).where(inArray(eventOutbox.id, ids)));
  const results = (await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as unknown[];
  const created = results.slice(0, rows.length).flatMap((r) => r as { id: string }[]);
  await enqueueDeliveries(env, created.map((d) => ({ id: d.id, companyId })));
  return { events: events.length, deliveries: created.length, more: events.length === FANOUT_BATCH };
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
