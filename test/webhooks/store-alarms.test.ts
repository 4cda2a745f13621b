/**
 * Issue 16: a document store re-drives its own overdue webhook deliveries from its alarm
 * (src/durable-objects/document-store/overdue-deliveries.ts); the cron asks no store for them, and
 * only walks the stores once to arm the alarm of those from before the change.
 */
import { createScheduledController, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runScheduled } from "../../src/cron";
import { openStore, partitionedId, storeFor, storeName } from "../../src/db/document-store";
import { webhookDeliveries } from "../../src/db/schema";
import { DELIVERY_STALE_MS } from "../../src/durable-objects/document-store/overdue-deliveries";
import type { DocumentStore } from "../../src/durable-objects/document-store";
import { newId } from "../../src/lib/ids";
import { armStoreAlarms } from "../../src/webhooks/store-alarms";
import { EVENT_RETENTION_MS } from "../../src/webhooks/retention";
import { newCompany, newOwner } from "../helpers/api";
import { receiverUrl, register, until } from "./helpers";

async function dispatchedEvent(companyId: string): Promise<string> {
  const id = newId("evt");
  const at = new Date().toISOString();
  const payload = { reason: "LOW_AVAILABILITY", document_type: "33", available: 3, threshold: 10, detected_at: at };
  await env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', ?, ?, ?, ?)")
    .bind(id, companyId, `ENU:${id}`, JSON.stringify(payload), at, at)
    .run();
  return id;
}

/** A company with an endpoint and a PENDING delivery due at `due` whose queue message never existed (as if lost). */
async function lostDelivery(name: string, due: Date) {
  const owner = await newOwner(name);
  const companyId = await newCompany(owner);
  const receiver = receiverUrl(name);
  const hook = await register(owner, companyId, { url: receiver.url, events: ["ENU"] });
  const store = await openStore(env, companyId);
  const id = partitionedId("dlv", store.ordinal);
  const at = new Date().toISOString();
  await store.db.insert(webhookDeliveries).values({ id, companyId, endpointId: hook.id, eventId: await dispatchedEvent(companyId), eventType: "ENU", nextAttemptAt: due.toISOString(), createdAt: at, updatedAt: at });
  const stub = env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, store.ordinal))) as DurableObjectStub<DocumentStore>;
  return { companyId, receiver, id, store, stub };
}

const alarmOf = (stub: DurableObjectStub<DocumentStore>) => runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm());

async function statusOf(companyId: string, ordinal: number, id: string): Promise<{ status: string; attempts: number }> {
  const [row] = (await storeFor(env, companyId, ordinal).db.all(sql`SELECT status, attempts FROM webhook_deliveries WHERE id = ${id}`)) as { status: string; attempts: number }[];
  return row!;
}

/** The env with a DOCUMENT_STORE that records every store name asked for. */
function countingStores(names: string[]): Env {
  const ns = env.DOCUMENT_STORE;
  return { ...env, DOCUMENT_STORE: { idFromName: (n: string) => (names.push(n), ns.idFromName(n)), get: (id: DurableObjectId) => ns.get(id) } } as unknown as Env;
}

describe("overdue webhook deliveries: the document store's alarm", () => {
  it("a delivery past its time is armed by the write that stored it and re-driven by the alarm", async () => {
    const { companyId, receiver, id, store, stub } = await lostDelivery("store-alarm-overdue", new Date(Date.now() - 3_600_000));
    const at = await alarmOf(stub);
    expect(at).not.toBeNull();
    expect(at! - Date.now()).toBeLessThanOrEqual(DELIVERY_STALE_MS);
    expect((await statusOf(companyId, store.ordinal, id)).status).toBe("PENDING");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await until(receiver.path, (r) => r.length === 1);
    for (let i = 0; i < 100 && (await statusOf(companyId, store.ordinal, id)).status === "PENDING"; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await statusOf(companyId, store.ordinal, id)).toEqual({ status: "SUCCEEDED", attempts: 1 });
    // The alarm came back in case the queue lost the message again; with nothing pending the only alarm
    // left is the retention's, when the settled delivery is 30 days old.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alarmOf(stub)).toBeGreaterThan(Date.now() + EVENT_RETENTION_MS - 60_000);
    expect(await until(receiver.path, () => true)).toHaveLength(1);
  });

  it("a delivery due later sets the alarm at its time plus the margin; an early alarm queues nothing and comes back", async () => {
    const due = new Date(Date.now() + 3_600_000);
    const { companyId, receiver, id, store, stub } = await lostDelivery("store-alarm-later", due);
    expect(await alarmOf(stub)).toBe(due.getTime() + DELIVERY_STALE_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(await statusOf(companyId, store.ordinal, id)).toEqual({ status: "PENDING", attempts: 0 });
    expect(await until(receiver.path, () => true)).toHaveLength(0);
    expect(await alarmOf(stub)).toBe(due.getTime() + DELIVERY_STALE_MS);
  });

  it("a store from before the change (no alarm) is armed by the cron's one-time walk; then the cron asks no store at all", async () => {
    const { companyId, receiver, id, store, stub } = await lostDelivery("store-alarm-backstop", new Date(Date.now() - 3_600_000));
    await runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.deleteAlarm());
    await evictDurableObject(stub);
    await env.DB.prepare("DELETE FROM cron_cursors").run();

    const walked: string[] = [];
    const controller = () => createScheduledController({ scheduledTime: new Date(), cron: "*/5 * * * *" });
    await runScheduled(controller(), countingStores(walked));
    expect(walked).toContain(storeName(companyId, store.ordinal));
    const cursor = await env.DB.prepare("SELECT done, finished_at FROM cron_cursors WHERE job = 'store_alarms'").first<{ done: number; finished_at: string | null }>();
    expect(cursor!.finished_at).not.toBeNull();
    expect(cursor!.done).toBe(new Set(walked).size);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await until(receiver.path, (r) => r.length === 1);

    const later: string[] = [];
    await runScheduled(controller(), countingStores(later));
    await runScheduled(controller(), countingStores(later));
    expect(later).toEqual([]);
    expect(await armStoreAlarms(env)).toEqual({ armed: 0, walked: 0, finished: true });
    for (let i = 0; i < 100 && (await statusOf(companyId, store.ordinal, id)).status === "PENDING"; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await statusOf(companyId, store.ordinal, id)).status).toBe("SUCCEEDED");
  });
});
