/**
 * One attempt of one delivery: render the event, sign it, POST it (10 s timeout, no redirects, a
 * fixed User-Agent, nothing of ours but the signature), record the attempt, then settle: 2xx is
 * success; anything else waits for the next attempt of the schedule, or ends FAILED when none is left.
 * An endpoint that has failed continuously for 5 days is disabled and the company's other endpoints
 * get a `webhook_endpoint.disabled` event. The same `webhook-id` (the event id) goes with every
 * attempt, so receivers can deduplicate (delivery is at least once). Deliveries and attempts are in
 * the company's document stores, each with the event it delivers when the event was born in
 * a store; control-plane events are in D1's outbox; endpoints in D1, read through the
 * per-isolate cache (./endpoint-cache.ts).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../storage/db/client";
import { ordinalOfId, partitionKnown, storeFor } from "../storage/db/document-store";
import { eventOutbox, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../storage/db/schema";
import { chunked } from "../lib/chunked";
import { newId } from "../lib/ids";
import { log } from "../lib/log";
import { enqueueDeliveries, notifyEvents, type DeliveryRef } from "./messages";
import { renderEvent } from "./render";
import { isPastRetention, pastRetentionMessage } from "./retention";
import { DISABLE_AFTER_MS, MAX_QUEUE_DELAY_SECONDS, retryDelaySeconds, retrySchedule } from "./schedule";
import { signedHeaders } from "./signing";
import { signingSecrets, type EndpointRow } from "./endpoints";
import { activeEndpoints, forgetEndpoints } from "./endpoint-cache";

export const USER_AGENT = "DTE-API-Webhooks/1.0 (+https://www.standardwebhooks.com)";
const BODY_EXCERPT_BYTES = 1024;

type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type EventRow = typeof eventOutbox.$inferSelect;

interface AttemptResult {
  ok: boolean;
  /** Not sent: the event breaks its published schema (a writer's bug); retrying cannot mend it. */
  unsendable?: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
  durationMs: number;
}

/** POSTs the signed event; never throws (network errors and timeouts are results). */
async function post(env: Env, endpoint: EndpointRow, event: EventRow, now: Date): Promise<AttemptResult> {
  const rendered = renderEvent(event, endpoint.livemode);
  if (!rendered.ok) {
    log("error", "webhook event does not match the catalogue", { company_id: event.companyId, event_id: event.id, error: rendered.error });
    return { ok: false, unsendable: true, status: null, body: null, error: `not sent: ${rendered.error}`, durationMs: 0 };
  }
  const body = JSON.stringify(rendered.event);
  const headers = await signedHeaders(await signingSecrets(env, endpoint, now), event.id, Math.floor(now.getTime() / 1000), body);
  const started = Date.now();
  try {
    const res = await fetch(endpoint.url, {
      method: "POST",
      redirect: "manual",
      headers: { ...headers, "Content-Type": "application/json", "User-Agent": USER_AGENT },
      body,
      signal: AbortSignal.timeout(Number(env.WEBHOOK_TIMEOUT_MS) || 10_000),
    });
    const text = await readExcerpt(res);
    return { ok: res.status >= 200 && res.status < 300, status: res.status, body: text, error: res.status >= 300 && res.status < 400 ? "redirects are not followed" : null, durationMs: Date.now() - started };
  } catch (e) {
    const timeout = (e as Error)?.name === "TimeoutError" || (e as Error)?.name === "AbortError";
    return { ok: false, status: null, body: null, error: timeout ? `no answer within ${Number(env.WEBHOOK_TIMEOUT_MS) || 10_000} ms` : `network error: ${(e as Error)?.message ?? String(e)}`, durationMs: Date.now() - started };
  }
}

async function readExcerpt(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < BODY_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) all.set(c, (at += c.length) - c.length);
  return new TextDecoder().decode(all.subarray(0, BODY_EXCERPT_BYTES));
}

type Outcome = "sent" | "retry" | "failed" | "skipped" | "early";

/** A delivery to attempt: its id, company, and partition (when the message names none, the one its id names). */
export interface DeliveryTarget {
  id: string;
  companyId: string;
  partition?: number;
}
type Plan =
  | { kind: "skip" }
  | { kind: "give-up"; delivery: DeliveryRow; reason: string }
  | { kind: "early"; delivery: DeliveryRow; waitMs: number }
  | { kind: "post"; delivery: DeliveryRow; endpoint: EndpointRow; event: EventRow };

/**
 * Each delivery's store: the partition the message names, else the one its id names.
 * A partition the company's directory does not have holds no delivery: its targets are left out
 * (skipped, their messages acked) and no store is made for it.
 */
async function storesOf(env: Env, targets: DeliveryTarget[]): Promise<Map<string, { db: Db; partition: number; ids: string[] }>> {
  const stores = new Map<string, { db: Db; partition: number; ids: string[] }>();
  for (const t of targets) {
    const partition = t.partition ?? ordinalOfId(t.id);
    if (partition === null || !(await partitionKnown(env, t.companyId, partition))) continue;
    const key = `${t.companyId}:${partition}`;
    const entry = stores.get(key) ?? { db: storeFor(env, t.companyId, partition).db, partition, ids: [] };
    entry.ids.push(t.id);
    stores.set(key, entry);
  }
  return stores;
}

/**
 * The deliveries and the events of their store (one store batch per store), their endpoints (the
 * per-isolate cache; D1 only for an endpoint no longer active) and the events not in the delivery's
 * store (D1's outbox: control-plane events; one D1 read, none for store events).
 */
async function loadMany(db: Db, env: Env, targets: DeliveryTarget[], now: Date) {
  const stores = await storesOf(env, targets);
  const perStore = await Promise.all([...stores.values()].map(async (s) => {
    const read = await Promise.all(chunked(s.ids, 90).map((c) => s.db.batch([
      s.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, c)),
      s.db.select().from(eventOutbox).where(inArray(eventOutbox.id, s.db.select({ id: webhookDeliveries.eventId }).from(webhookDeliveries).where(inArray(webhookDeliveries.id, c)))),
    ])));
    return { deliveries: read.flatMap((r) => r[0]).map((d) => ({ d, store: s })), events: read.flatMap((r) => r[1]) };
  }));
  const found = perStore.flatMap((p) => p.deliveries);
  const deliveries = found.map((f) => f.d);
  const storeOf = new Map(found.map((f) => [f.d.id, { db: f.store.db, partition: f.store.partition }]));
  const events = new Map(perStore.flatMap((p) => p.events).map((e) => [e.id, e]));
  if (deliveries.length === 0) return { deliveries, storeOf, endpoints: new Map<string, EndpointRow>(), events };
  const endpoints = new Map((await Promise.all([...new Set(deliveries.map((d) => d.companyId))].map((c) => activeEndpoints(db, c, now.getTime())))).flat().map((e) => [e.id, e]));
  const endpointIds = [...new Set(deliveries.map((d) => d.endpointId))].filter((id) => !endpoints.has(id));
  const eventIds = [...new Set(deliveries.map((d) => d.eventId))].filter((id) => !events.has(id));
  const reads = [...chunked(endpointIds, 90).map((c) => db.select().from(webhookEndpoints).where(inArray(webhookEndpoints.id, c))), ...chunked(eventIds, 90).map((c) => db.select().from(eventOutbox).where(inArray(eventOutbox.id, c)))];
  const rows = reads.length > 0 ? ((await db.batch(reads as [(typeof reads)[number], ...(typeof reads)[number][]])).flat() as (EndpointRow | EventRow)[]) : [];
  for (const r of rows) if ("url" in r) endpoints.set(r.id, r); else events.set(r.id, r);
  return { deliveries, storeOf, endpoints, events };
}

function planOne(d: DeliveryRow | undefined, endpoints: Map<string, EndpointRow>, events: Map<string, EventRow>, now: Date): Plan {
  if (!d || d.status !== "PENDING") return { kind: "skip" };
  const endpoint = endpoints.get(d.endpointId);
  const event = events.get(d.eventId);
  // Its event left the outbox (the 30-day retention): nothing can be sent without it.
  if (!event || isPastRetention(event.createdAt, now)) return { kind: "give-up", delivery: d, reason: pastRetentionMessage(d.eventId) };
  if (!endpoint || !event || endpoint.companyId !== d.companyId || event.companyId !== d.companyId || endpoint.status !== "ACTIVE" || !endpoint.enabled) {
    return { kind: "give-up", delivery: d, reason: endpoint?.disabledReason ?? "The endpoint was deleted or disabled" };
  }
  const waitMs = d.nextAttemptAt ? Date.parse(d.nextAttemptAt) - now.getTime() : 0;
  return waitMs > 1000 ? { kind: "early", delivery: d, waitMs } : { kind: "post", delivery: d, endpoint, event };
}

/** What one attempt's result writes, and what follows it. */
interface Settled {
  outcome: Outcome;
  patch: Partial<DeliveryRow> & { status: DeliveryRow["status"] };
  retryInSeconds?: number;
  disable?: string;
}

function settleAttempt(env: Env, d: DeliveryRow, endpoint: EndpointRow, result: AttemptResult, now: Date): Settled {
  const counts = { attempts: d.attempts + 1, roundAttempts: d.roundAttempts + 1, lastResponseStatus: result.status };
  if (result.ok) return { outcome: "sent", patch: { ...counts, status: "SUCCEEDED", lastError: null, nextAttemptAt: null } };
  if (result.unsendable) return { outcome: "failed", patch: { ...counts, status: "FAILED", lastError: result.error, nextAttemptAt: null } };
  const error = result.error ?? `HTTP ${result.status}`;
  const failingSince = endpoint.failingSince ?? now.toISOString();
  if (now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS) {
    return { outcome: "failed", patch: { ...counts, status: "FAILED", lastError: `${error}; the endpoint was disabled after failing for 5 days`, nextAttemptAt: null }, disable: failingSince };
  }
  const delay = retryDelaySeconds(retrySchedule(env), counts.roundAttempts);
  if (delay === null) return { outcome: "failed", patch: { ...counts, status: "FAILED", lastError: `${error}; no attempt left`, nextAttemptAt: null } };
  return { outcome: "retry", patch: { ...counts, status: "PENDING", lastError: error, nextAttemptAt: new Date(now.getTime() + delay * 1000).toISOString() }, retryInSeconds: delay };
}

/**
 * Works a batch of delivery messages: one read of the deliveries per store and of endpoints and
 * events in D1, the POSTs in parallel, then one batch per store with its attempt rows and outcomes,
 * one D1 batch for the endpoints, and one queue send for the retries (and for messages that arrived
 * before their delivery's next attempt time, e.g. a wait longer than a queue can hold a message).
 * Returns what happened to each delivery (for logs and tests).
 */
export async function deliverBatch(db: Db, env: Env, targets: DeliveryTarget[], now = new Date()): Promise<Map<string, Outcome>> {
  const { deliveries, storeOf, endpoints, events } = await loadMany(db, env, targets, now);
  const byId = new Map(deliveries.map((d) => [d.id, d]));
  const plans = [...new Set(targets.map((t) => t.id))].map((id) => [id, planOne(byId.get(id), endpoints, events, now)] as const);
  const outcomes = new Map<string, Outcome>();
  const writes = new Map<Db, BatchItem<"sqlite">[]>();
  const write = (id: string, item: (store: Db) => BatchItem<"sqlite">) => {
    const store = storeOf.get(id)!.db;
    writes.set(store, [...(writes.get(store) ?? []), item(store)]);
  };
  const requeue: DeliveryRef[] = [];
  const at = now.toISOString();
  const posts = plans.filter((p): p is readonly [string, Extract<Plan, { kind: "post" }>] => p[1].kind === "post");
  const results = await Promise.all(posts.map(([, p]) => post(env, p.endpoint, p.event, now)));
  for (const [id, p] of plans) {
    if (p.kind === "skip") outcomes.set(id, "skipped");
    else if (p.kind === "give-up") {
      write(id, (store) => settle(store, p.delivery, { status: "FAILED", lastError: p.reason, nextAttemptAt: null }, at));
      outcomes.set(id, "failed");
    } else if (p.kind === "early") {
      requeue.push({ id, companyId: p.delivery.companyId, partition: storeOf.get(id)!.partition, delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, Math.ceil(p.waitMs / 1000)) });
      outcomes.set(id, "early");
    }
  }
  const failing = new Map<string, EndpointRow>();
  const recovered = new Set<string>();
  const disables: { endpoint: EndpointRow; failingSince: string }[] = [];
  posts.forEach(([id, p], i) => {
    const result = results[i]!;
    write(id, (store) => attemptRow(store, p.delivery, p.event, result, at));
    const s = settleAttempt(env, p.delivery, p.endpoint, result, now);
    write(id, (store) => settle(store, p.delivery, s.patch, at));
    outcomes.set(id, s.outcome);
    if (result.ok) recovered.add(p.endpoint.id);
    else if (!result.unsendable) failing.set(p.endpoint.id, p.endpoint);
    if (s.retryInSeconds !== undefined) requeue.push({ id, companyId: p.delivery.companyId, partition: storeOf.get(id)!.partition, delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, s.retryInSeconds) });
    if (s.disable && !disables.some((x) => x.endpoint.id === p.endpoint.id)) disables.push({ endpoint: p.endpoint, failingSince: s.disable });
  });
  await Promise.all([...writes].map(([store, items]) => store.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])));
  await recordFailureRuns(db, endpoints, recovered, failing, at);
  for (const d of disables) await disableEndpoint(db, env, d.endpoint, d.failingSince, now);
  await enqueueDeliveries(env, requeue);
  return outcomes;
}

/**
 * An endpoint that answered once in this batch is not failing; one that only failed starts (or goes
 * on with) its run. Written only when the run's state changes as far as the endpoint row read says
 * (a success to an endpoint not failing writes nothing); the isolate's endpoint cache is dropped.
 */
async function recordFailureRuns(db: Db, endpoints: Map<string, EndpointRow>, recovered: Set<string>, failing: Map<string, EndpointRow>, at: string) {
  const writes: BatchItem<"sqlite">[] = [];
  const touched = new Set<string>();
  for (const id of recovered) {
    const e = endpoints.get(id);
    if (e?.failingSince == null) continue;
    writes.push(db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, id)));
    touched.add(e.companyId);
  }
  for (const [id, e] of failing) {
    if (recovered.has(id) || e.failingSince != null) continue;
    writes.push(db.update(webhookEndpoints).set({ failingSince: sql`COALESCE(${webhookEndpoints.failingSince}, ${at})` }).where(eq(webhookEndpoints.id, id)));
    touched.add(e.companyId);
  }
  if (writes.length > 0) await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  for (const c of touched) forgetEndpoints(c);
}

/** One delivery (tests, and the manual paths): the batch path with one id. */
export async function deliver(db: Db, env: Env, target: DeliveryTarget, now = new Date()): Promise<Outcome> {
  return (await deliverBatch(db, env, [target], now)).get(target.id)!;
}

function attemptRow(db: Db, d: DeliveryRow, event: EventRow, r: AttemptResult, at: string) {
  return db.insert(webhookAttempts).values({
    id: newId("att"), companyId: d.companyId, deliveryId: d.id, endpointId: d.endpointId, eventId: event.id, eventType: event.type,
    attempt: d.attempts + 1, startedAt: at, durationMs: r.durationMs, responseStatus: r.status, responseBody: r.body, error: r.error,
  });
}

function settle(db: Db, d: DeliveryRow, patch: Partial<DeliveryRow>, at: string) {
  return db.update(webhookDeliveries).set({ ...patch, updatedAt: at }).where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.status, "PENDING")));
}

/** Disables a continuously failing endpoint and tells the company's other endpoints. */
async function disableEndpoint(db: Db, env: Env, endpoint: EndpointRow, failingSince: string, now: Date) {
  const reason = "Every delivery failed for 5 days";
  const [changed] = await db.batch([
    db.update(webhookEndpoints).set({ enabled: false, disabledReason: reason, updatedAt: now.toISOString() }).where(and(eq(webhookEndpoints.id, endpoint.id), eq(webhookEndpoints.enabled, true))).returning({ id: webhookEndpoints.id }),
    db.insert(eventOutbox).values({
      id: newId("evt"), companyId: endpoint.companyId, type: "webhook_endpoint.disabled", dedupeKey: `webhook_endpoint.disabled:${endpoint.id}:${failingSince}`,
      payload: JSON.stringify({ endpoint_id: endpoint.id, url: endpoint.url, failing_since: failingSince, reason }), createdAt: now.toISOString(),
    }).onConflictDoNothing(),
  ]);
  forgetEndpoints(endpoint.companyId);
  if (changed.length > 0) {
    log("warn", "webhook endpoint disabled after 5 days of failures", { company_id: endpoint.companyId, endpoint_id: endpoint.id });
    await notifyEvents(env, [endpoint.companyId]);
  }
}
