/**
 * A document store's events stay in the store: the change's batch writes the event into the
 * store's `event_outbox`, the store's alarm sends one fan-out notice naming the store, and the fan-out
 * makes the deliveries and marks the events dispatched in one batch of the same store. D1's outbox
 * never sees them; a company without endpoints costs no D1 statement once its endpoints are cached.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { closePartition, openStore, partitionedId, storeFor, storeName } from "../../src/storage/db/document-store";
import { outboxInsert } from "../../src/storage/db/document-store/outbox";
import { invoices } from "../../src/storage/db/schema";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { FanoutNotice, NOTICE_REDRIVE_MS, NOTICE_RETRY_MS } from "../../src/operations/objects/document-store/fanout-notice";
import { newId, randomUlid } from "../../src/lib/ids";
import { MOVES, transition } from "../../src/invoices/state";
import { activeEndpoints } from "../../src/webhooks/endpoint-cache";
import { FANOUT_BATCH, fanOutStore } from "../../src/webhooks/fanout";
import { call, newCompany, newOwner } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { receiverUrl, register, until, verified } from "../webhooks/helpers";

const enu = (n: number) => ({ reason: "LOW_AVAILABILITY", document_type: "33", available: n, threshold: 10, detected_at: new Date().toISOString() });
const stubOf = (companyId: string, ordinal: number) => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, ordinal)));

/** One document inserted together with an event about it, in one store batch (the real writers' way). */
async function writeWithEvent(companyId: string, dedupeKey: string) {
  const store = await openStore(env, companyId);
  const id = partitionedId("inv", store.ordinal);
  await store.db.batch([
    store.db.insert(invoices).values({ id, companyId, documentType: 33, status: "RECEIVED", issueDate: "2026-11-23", recipientRut: "77879240-0", recipientName: "Cliente Ltda", currency: "CLP", total: "1", body: "{}" }),
    outboxInsert(store.db, { companyId, type: "ENU", payload: enu(3), dedupeKey }),
  ]);
  return { store, id };
}

/**
 * An event written straight into a store's SQLite, past the store's RPC: no alarm is armed and no
 * notice sent (as if the notice was lost). `dispatchedAt` set: a row already dispatched.
 */
async function silentEvent(companyId: string, ordinal: number, dispatchedAt: string | null = null): Promise<string> {
  const id = newId("evt");
  const at = new Date().toISOString();
  await runInDurableObject(stubOf(companyId, ordinal), (_i: DocumentStore, state: DurableObjectState) => {
    state.storage.sql.exec("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', ?, ?, ?, ?)", id, companyId, `ENU:${id}`, JSON.stringify(enu(4)), at, dispatchedAt);
  });
  return id;
}

const d1Events = async (companyId: string) => (await env.DB.prepare("SELECT id FROM event_outbox WHERE company_id = ?").bind(companyId).all()).results;
const storeEvents = (companyId: string) => storeRows<{ id: string; dispatched_at: string | null }>(companyId, "SELECT id, dispatched_at FROM event_outbox ORDER BY created_at, id");

async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

/** Sets the store's alarm due now and lets it run (it may fire on its own first). */
async function fireAlarm(companyId: string, ordinal: number) {
  await runInDurableObject(stubOf(companyId, ordinal), (_i: DocumentStore, state: DurableObjectState) => state.storage.setAlarm(Date.now()));
  await runDurableObjectAlarm(stubOf(companyId, ordinal));
}

/** D1 as the platform gives it, counting the statements our code prepares on it. */
function countingD1(): { db: D1Database; statements: () => number } {
  let n = 0;
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "prepare") return (q: string) => (n++, target.prepare(q));
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db, statements: () => n };
}

/** The webhook queue binding, recording what is sent to it (the platform's queue, not our code); `fail` makes sends throw. */
function recordingQueue(sent: unknown[], fail = false): Queue {
  const push = async (bodies: unknown[]) => {
    if (fail) throw new Error("queue unavailable");
    sent.push(...bodies);
  };
  return { send: (body: unknown) => push([body]), sendBatch: (messages: Iterable<{ body: unknown }>) => push([...messages].map((m) => m.body)) } as unknown as Queue;
}

describe("a document store's events", () => {
  it("an issued document's events reach the receiver signed, with no row in D1's event_outbox", async () => {
    const issuer = await readyIssuer([33]);
    const r = receiverUrl("store-events-issued");
    const hook = await register(issuer.owner, issuer.companyId, { url: r.url, events: ["invoice.sent", "invoice.accepted"] });
    const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(posted.status).toBe(202);
    expect((await untilFinal(issuer, posted.body.id)).status).toBe("ACCEPTED");
    const got = await until(r.path, (x) => x.length === 2);
    const payloads = got.map((x) => verified(hook.secret, x));
    expect(payloads.map((p) => [p.type, p.data.id]).sort()).toEqual([["invoice.accepted", posted.body.id], ["invoice.sent", posted.body.id]]);
    expect(await d1Events(issuer.companyId)).toEqual([]);
    // The store holds them (beside the delivery to the buyer's own event, which this endpoint does not take).
    const inStore = await storeRows<{ id: string }>(issuer.companyId, "SELECT id FROM event_outbox WHERE type IN ('invoice.sent', 'invoice.accepted')");
    expect(inStore.map((e) => e.id).sort()).toEqual(payloads.map((p) => p.id).sort());
  });

  it("the batch arms the alarm, whose notice gets the event fanned out in the store: marked dispatched there, nothing in D1", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const { id } = await writeWithEvent(companyId, "ENU:test:1");
    expect(await storeRows(companyId, sql`SELECT count(*) AS n FROM invoices WHERE id = ${id}`)).toEqual([{ n: 1 }]);
    // Nobody sends the notice: the store's own alarm does, and the queue consumer fans out.
    const [row] = await waitFor(() => storeEvents(companyId), (r) => r[0]?.dispatched_at != null, "the event is fanned out");
    expect(row).toMatchObject({ dispatched_at: expect.any(String) });
    expect(await d1Events(companyId)).toEqual([]);
    expect(await storeRows(companyId, "SELECT id FROM webhook_deliveries")).toEqual([]);
  });

  it("no endpoint: the fan-out marks the events in the store and makes no D1 statement (endpoints cached)", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const ordinal = (await openStore(env, companyId)).ordinal;
    const events = [await silentEvent(companyId, ordinal), await silentEvent(companyId, ordinal)];
    await activeEndpoints(createDb(env.DB), companyId);
    const d1 = countingD1();
    expect(await fanOutStore(createDb(d1.db), env, companyId, ordinal)).toEqual({ events: 2, deliveries: 0, more: false });
    expect(d1.statements()).toBe(0);
    expect((await storeEvents(companyId)).filter((e) => e.dispatched_at !== null).map((e) => e.id).sort()).toEqual([...events].sort());
    expect(await fanOutStore(createDb(d1.db), env, companyId, ordinal)).toEqual({ events: 0, deliveries: 0, more: false });
    expect(d1.statements()).toBe(0);
  });

  it("no endpoint: one store call per fan-out, the oldest FANOUT_BATCH events first, more when more wait; an event already dispatched keeps its stamp", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const ordinal = (await openStore(env, companyId)).ordinal;
    const old = "2026-01-01T00:00:00.000Z";
    const before = await silentEvent(companyId, ordinal, old);
    const ids: string[] = [];
    await runInDurableObject(stubOf(companyId, ordinal), (_i: DocumentStore, state: DurableObjectState) => {
      for (let k = 0; k < FANOUT_BATCH + 5; k++) {
        // Times one millisecond apart, ids in the reverse order: the order is by time first.
        const id = `evt_${String(999 - k)}_${randomUlid()}`;
        ids.push(id);
        const at = new Date(Date.parse("2026-11-20T00:00:00.000Z") + k).toISOString();
        state.storage.sql.exec("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, 'ENU', ?, '{}', ?)", id, companyId, `ENU:${id}`, at);
      }
    });
    await activeEndpoints(createDb(env.DB), companyId);
    const calls: string[] = [];
    const ns = env.DOCUMENT_STORE;
    const counting = {
      ...env,
      DOCUMENT_STORE: {
        idFromName: (n: string) => ns.idFromName(n),
        get: (id: DurableObjectId) => new Proxy(ns.get(id), { get: (t, prop) => (typeof (t as never)[prop] === "function" ? (...a: unknown[]) => (calls.push(String(prop)), (t as never as Record<string, (...x: unknown[]) => unknown>)[prop as string]!(...a)) : (t as never)[prop]) }),
      },
    } as unknown as Env;
    expect(await fanOutStore(createDb(env.DB), counting, companyId, ordinal)).toEqual({ events: FANOUT_BATCH, deliveries: 0, more: true });
    expect(calls).toHaveLength(1);
    const rows = await storeRows<{ id: string; dispatched_at: string | null }>(companyId, "SELECT id, dispatched_at FROM event_outbox");
    const stamp = new Map(rows.map((r) => [r.id, r.dispatched_at]));
    expect(ids.slice(0, FANOUT_BATCH).every((id) => stamp.get(id) !== null)).toBe(true);
    expect(ids.slice(FANOUT_BATCH).map((id) => stamp.get(id))).toEqual([null, null, null, null, null]);
    expect(stamp.get(before)).toBe(old);
    expect(await fanOutStore(createDb(env.DB), counting, companyId, ordinal)).toEqual({ events: 5, deliveries: 0, more: false });
    expect(await fanOutStore(createDb(env.DB), counting, companyId, ordinal)).toEqual({ events: 0, deliveries: 0, more: false });
    expect(calls).toHaveLength(3);
  });

  it("the notice task: due at once, again NOTICE_REDRIVE_MS after a notice while events wait (a lost notice), after NOTICE_RETRY_MS when the send failed", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const ordinal = (await openStore(env, companyId)).ordinal;
    await silentEvent(companyId, ordinal);
    const name = storeName(companyId, ordinal);
    await runInDurableObject(stubOf(companyId, ordinal), async (_i: DocumentStore, state: DurableObjectState) => {
      const sent: unknown[] = [];
      const t0 = Date.now();
      const failing = new FanoutNotice(state.storage.sql, { WEBHOOK_QUEUE: recordingQueue(sent, true) }, name);
      await expect(failing.sendNow(t0)).rejects.toThrow("queue unavailable");
      expect(failing.nextAt(t0)).toBe(t0 + NOTICE_RETRY_MS);
      const task = new FanoutNotice(state.storage.sql, { WEBHOOK_QUEUE: recordingQueue(sent) }, name);
      expect(task.nextAt(t0)).toBe(t0);
      await task.run(t0);
      expect(sent).toEqual([{ v: 1, type: "fanout", company_id: companyId, partition: ordinal }]);
      expect(task.nextAt(t0)).toBe(t0 + NOTICE_REDRIVE_MS);
      await task.run(t0 + NOTICE_REDRIVE_MS - 1);
      expect(sent).toHaveLength(1);
      // The notice was lost: the events still wait, so the alarm sends it again.
      await task.run(t0 + NOTICE_REDRIVE_MS);
      expect(sent).toHaveLength(2);
      // A new event is due a notice at once.
      expect(task.touchedBy(`insert into "event_outbox" ("id") values (?)`)).toBe(true);
      expect(task.nextAt(t0 + NOTICE_REDRIVE_MS + 1)).toBe(t0 + NOTICE_REDRIVE_MS + 1);
      state.storage.sql.exec("UPDATE event_outbox SET dispatched_at = ?", new Date().toISOString());
      expect(task.nextAt(t0)).toBeNull();
    });
  });

  it("a notice never sent: the store's alarm sends it and the event reaches the endpoint signed", async () => {
    const owner = await newOwner("Store events, lost notice");
    const companyId = await newCompany(owner);
    const r = receiverUrl("store-events-lost-notice");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const ordinal = (await openStore(env, companyId)).ordinal;
    const event = await silentEvent(companyId, ordinal);
    await fireAlarm(companyId, ordinal);
    const [got] = await until(r.path, (x) => x.length === 1);
    expect(verified(hook.secret, got!)).toMatchObject({ id: event, type: "ENU", company_id: companyId });
    expect(await storeRows(companyId, "SELECT event_id, status FROM webhook_deliveries")).toEqual([{ event_id: event, status: expect.any(String) }]);
    expect(await d1Events(companyId)).toEqual([]);
  });

  it("the notice of a store names its partition; a store with no partition in its name is not due again at once (its alarm does not spin)", async () => {
    const companyId = `cmp_${randomUlid()}`;
    await silentEvent(companyId, 1);
    await runInDurableObject(stubOf(companyId, 1), async (_i: DocumentStore, state: DurableObjectState) => {
      const sent: unknown[] = [];
      const t0 = Date.now();
      const task = new FanoutNotice(state.storage.sql, { WEBHOOK_QUEUE: recordingQueue(sent) }, storeName(companyId, 1));
      expect(await task.sendNow(t0)).toBe(true);
      expect(sent).toEqual([{ v: 1, type: "fanout", company_id: companyId, partition: 1 }]);
      const nameless = new FanoutNotice(state.storage.sql, { WEBHOOK_QUEUE: recordingQueue(sent) }, `${companyId}:index`);
      expect(nameless.nextAt(t0)).toBe(t0);
      expect(await nameless.sendNow(t0)).toBe(false);
      expect(nameless.nextAt(t0)).toBe(t0 + NOTICE_REDRIVE_MS);
      expect(sent).toHaveLength(1);
    });
  });

  it("deliveries made but never queued (the worker died after the store batch) are queued by the store's alarm", async () => {
    const owner = await newOwner("Store events, unqueued deliveries");
    const companyId = await newCompany(owner);
    const r = receiverUrl("store-events-unqueued");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const ordinal = (await openStore(env, companyId)).ordinal;
    const event = await silentEvent(companyId, ordinal);
    await expect(fanOutStore(createDb(env.DB), { ...env, WEBHOOK_QUEUE: recordingQueue([], true) }, companyId, ordinal)).rejects.toThrow("queue unavailable");
    expect((await storeEvents(companyId))[0]!.dispatched_at).not.toBeNull();
    const [made] = await storeRows<{ id: string; status: string; attempts: number }>(companyId, "SELECT id, status, attempts FROM webhook_deliveries");
    expect(made).toMatchObject({ status: "PENDING", attempts: 0 });
    // A retried notice finds nothing left to fan out and makes no second delivery.
    expect(await fanOutStore(createDb(env.DB), env, companyId, ordinal)).toMatchObject({ events: 0, deliveries: 0 });
    // Time passes (the delivery's attempt time is 3 minutes old): the store's alarm queues it again.
    await storeFor(env, companyId, ordinal).db.run(sql`UPDATE webhook_deliveries SET next_attempt_at = ${new Date(Date.now() - 180_000).toISOString()}`);
    await fireAlarm(companyId, ordinal);
    const [got] = await until(r.path, (x) => x.length === 1);
    expect(verified(hook.secret, got!).id).toBe(event);
  });

  it("an event of partition 1 fanned out after the company rolled to partition 2: its delivery beside it, listed, redelivered by event id", async () => {
    const owner = await newOwner("Store events, roll-over");
    const companyId = await newCompany(owner);
    const r = receiverUrl("store-events-rollover");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const first = (await openStore(env, companyId)).ordinal;
    const event = await silentEvent(companyId, first);
    await closePartition(env, companyId, first, "SIZE", null);
    const second = (await openStore(env, companyId)).ordinal;
    expect(second).toBe(first + 1);
    expect(await stubOf(companyId, first).noticeFanout()).toBe(true);
    const [got] = await until(r.path, (x) => x.length === 1);
    expect(verified(hook.secret, got!).id).toBe(event);
    const inFirst = await storeFor(env, companyId, first).db.all<{ id: string }>(sql`SELECT id FROM webhook_deliveries WHERE event_id = ${event}`);
    expect(inFirst).toHaveLength(1);
    expect(inFirst[0]!.id.startsWith(`dlv_p${first}_`)).toBe(true);
    expect(await storeFor(env, companyId, second).db.all(sql`SELECT id FROM webhook_deliveries`)).toEqual([]);
    const log = await call("GET", `/api/companies/${companyId}/webhook-deliveries?event_id=${event}`, { key: owner.key });
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect((log.body as { data: { id: string }[] }).data.map((d) => d.id)).toEqual([inFirst[0]!.id]);
    // Redelivery by event id finds the store event and its delivery, and sends it again (same webhook-id).
    const again = await call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/redeliver`, { key: owner.key, json: { event_id: event } });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect((again.body as { delivery: { id: string } }).delivery.id).toBe(inFirst[0]!.id);
    const both = await until(r.path, (x) => x.length === 2);
    expect(both.map((x) => x.headers["webhook-id"])).toEqual([event, event]);
    expect(await d1Events(companyId)).toEqual([]);
  });

  it("a state transition of a document in a store records its invoice event there, once", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const { store, id } = await writeWithEvent(companyId, "ENU:test:4");
    await store.db.update(invoices).set({ status: "SIGNED" }).where(eq(invoices.id, id));
    const moved = await transition(store.db, id, MOVES.send, { trackId: "123" }, "uploaded");
    expect(moved?.status).toBe("SENT");
    expect(await transition(store.db, id, MOVES.send, { trackId: "123" })).toBeNull();
    const events = await storeRows<{ type: string; dedupe_key: string; payload: string }>(companyId, "SELECT type, dedupe_key, payload FROM event_outbox ORDER BY created_at, id");
    expect(events.map((e) => [e.type, e.dedupe_key])).toEqual([["ENU", "ENU:test:4"], ["invoice.sent", `invoice:${id}:SENT`]]);
    expect(JSON.parse(events[1]!.payload)).toMatchObject({ invoice: { id, status: "SENT", track_id: "123" }, cancelled_by: null });
    expect(await d1Events(companyId)).toEqual([]);
  });
});
