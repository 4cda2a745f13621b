/**
 * One attempt of one delivery: render the event, sign it, POST it (10 s timeout, no redirects, a
 * fixed User-Agent, nothing of ours but the signature), record the attempt, then settle: 2xx is
 * success; anything else waits for the next attempt of the schedule, or ends FAILED when none is left.
 * An endpoint that has failed continuously for 5 days is disabled and the company's other endpoints
 * get a `webhook_endpoint.disabled` event. The same `webhook-id` (the event id) goes with every
 * attempt, so receivers can deduplicate (delivery is at least once).
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { eventOutbox, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../db/schema";
import { newId } from "../lib/ids";
import { log } from "../lib/log";
import { enqueueDeliveries, notifyEvents } from "../queues/webhooks";
import { renderEvent } from "./render";
import { DISABLE_AFTER_MS, MAX_QUEUE_DELAY_SECONDS, retryDelaySeconds, retrySchedule } from "./schedule";
import { signedHeaders } from "./signing";
import { signingSecrets, type EndpointRow } from "./endpoints";

export const USER_AGENT = "DTE-API-Webhooks/1.0 (+https://www.standardwebhooks.com)";
const BODY_EXCERPT_BYTES = 1024;

type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type EventRow = typeof eventOutbox.$inferSelect;

interface AttemptResult {
  ok: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
  durationMs: number;
}

/** POSTs the signed event; never throws (network errors and timeouts are results). */
async function post(env: Env, endpoint: EndpointRow, event: EventRow, body: string, now: Date): Promise<AttemptResult> {
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

async function load(db: Db, deliveryId: string) {
  const delivery = await db.query.webhookDeliveries.findFirst({ where: eq(webhookDeliveries.id, deliveryId) });
  if (!delivery) return null;
  const [endpoint, event] = await Promise.all([
    db.query.webhookEndpoints.findFirst({ where: and(eq(webhookEndpoints.id, delivery.endpointId), eq(webhookEndpoints.companyId, delivery.companyId)) }),
    db.query.eventOutbox.findFirst({ where: and(eq(eventOutbox.id, delivery.eventId), eq(eventOutbox.companyId, delivery.companyId)) }),
  ]);
  return { delivery, endpoint, event };
}

/**
 * Works one delivery message. Returns what happened (for logs and tests). A message that arrives
 * before the delivery's next attempt time (waits longer than a queue can hold a message) is sent back
 * with the remaining delay.
 */
export async function deliver(db: Db, env: Env, deliveryId: string, now = new Date()): Promise<"sent" | "retry" | "failed" | "skipped" | "early"> {
  const loaded = await load(db, deliveryId);
  if (!loaded || loaded.delivery.status !== "PENDING") return "skipped";
  const { delivery, endpoint, event } = loaded;
  if (!endpoint || !event || endpoint.status !== "ACTIVE" || !endpoint.enabled) {
    await settle(db, delivery, "FAILED", { lastError: endpoint?.disabledReason ?? "The endpoint was deleted or disabled", nextAttemptAt: null }, now);
    return "failed";
  }
  const wait = delivery.nextAttemptAt ? Date.parse(delivery.nextAttemptAt) - now.getTime() : 0;
  if (wait > 1000) {
    await enqueueDeliveries(env, [{ id: delivery.id, companyId: delivery.companyId, delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, Math.ceil(wait / 1000)) }]);
    return "early";
  }
  const rendered = renderEvent(event);
  const result = rendered.ok ? await post(env, endpoint, event, JSON.stringify(rendered.event), now) : null;
  const attempt = delivery.attempts + 1;
  const round = delivery.roundAttempts + 1;
  await db.insert(webhookAttempts).values({
    id: newId("att"), companyId: delivery.companyId, deliveryId: delivery.id, endpointId: endpoint.id, eventId: event.id, eventType: event.type,
    attempt, startedAt: now.toISOString(), durationMs: result?.durationMs ?? 0, responseStatus: result?.status ?? null, responseBody: result?.body ?? null, error: result ? result.error : (rendered as { error: string }).error,
  });
  if (!result) {
    // Not sent: the event breaks its published schema (a writer's bug); retrying cannot mend it.
    const error = `not sent: ${(rendered as { error: string }).error}`;
    log("error", "webhook event does not match the catalogue", { company_id: delivery.companyId, event_id: event.id, error });
    await settle(db, delivery, "FAILED", { attempts: attempt, roundAttempts: round, lastResponseStatus: null, lastError: error, nextAttemptAt: null }, now);
    return "failed";
  }
  if (result.ok) {
    await settle(db, delivery, "SUCCEEDED", { attempts: attempt, roundAttempts: round, lastResponseStatus: result.status, lastError: null, nextAttemptAt: null }, now);
    if (endpoint.failingSince) await db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpoint.id));
    return "sent";
  }
  return afterFailure(db, env, delivery, endpoint, { attempt, round }, result, now);
}

async function afterFailure(db: Db, env: Env, delivery: DeliveryRow, endpoint: EndpointRow, { attempt, round }: { attempt: number; round: number }, result: AttemptResult, now: Date) {
  const error = result.error ?? `HTTP ${result.status}`;
  const failingSince = endpoint.failingSince ?? now.toISOString();
  if (!endpoint.failingSince) await db.update(webhookEndpoints).set({ failingSince }).where(eq(webhookEndpoints.id, endpoint.id));
  if (now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS) {
    await disableEndpoint(db, env, endpoint, failingSince, now);
    await settle(db, delivery, "FAILED", { attempts: attempt, roundAttempts: round, lastResponseStatus: result.status, lastError: `${error}; the endpoint was disabled after failing for 5 days`, nextAttemptAt: null }, now);
    return "failed";
  }
  const delay = retryDelaySeconds(retrySchedule(env), round);
  if (delay === null) {
    await settle(db, delivery, "FAILED", { attempts: attempt, roundAttempts: round, lastResponseStatus: result.status, lastError: `${error}; no attempt left`, nextAttemptAt: null }, now);
    return "failed";
  }
  const next = new Date(now.getTime() + delay * 1000).toISOString();
  await settle(db, delivery, "PENDING", { attempts: attempt, roundAttempts: round, lastResponseStatus: result.status, lastError: error, nextAttemptAt: next }, now);
  await enqueueDeliveries(env, [{ id: delivery.id, companyId: delivery.companyId, delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, delay) }]);
  return "retry";
}

function settle(db: Db, d: DeliveryRow, status: DeliveryRow["status"], patch: Partial<DeliveryRow>, now: Date) {
  return db.update(webhookDeliveries).set({ ...patch, status, updatedAt: now.toISOString() }).where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.status, "PENDING")));
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
  if (changed.length > 0) {
    log("warn", "webhook endpoint disabled after 5 days of failures", { company_id: endpoint.companyId, endpoint_id: endpoint.id });
    await notifyEvents(env, [endpoint.companyId]);
  }
}
