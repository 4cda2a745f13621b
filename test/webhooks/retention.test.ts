/**
 * Events, deliveries and attempts are kept 30 days (src/webhooks/retention.ts). A document
 * store's alarm deletes its fanned-out events and settled deliveries past retention
 * (src/operations/objects/document-store/event-retention.ts); the cron deletes D1's fanned-out events in
 * bounded batches; a redelivery of an event past retention is refused in our envelope, and an attempt
 * whose event is gone ends FAILED.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { openStore, partitionedId, storeName } from "../../src/storage/db/document-store";
import { outboxInsert } from "../../src/storage/db/document-store/outbox";
import { webhookDeliveries } from "../../src/storage/db/schema";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { EventRetention, RETENTION_CONTINUE_MS, RETENTION_INTERVAL_MS } from "../../src/operations/objects/document-store/event-retention";
import { encodeUlidTime, newId, randomUlid } from "../../src/lib/ids";
import { deliver } from "../../src/webhooks/delivery";
import { EVENT_RETENTION_MS, purgeD1Events } from "../../src/webhooks/retention";
import { call, expectError, newCompany, newOwner } from "../helpers/api";
import { receiverUrl, register } from "./helpers";

const DAY = 86_400_000;
const ago = (days: number, from = Date.now()) => new Date(from - days * DAY).toISOString();
const enu = { reason: "LOW_AVAILABILITY", document_type: "33", available: 3, threshold: 10, detected_at: new Date().toISOString() };

async function companyStore(name: string) {
  const owner = await newOwner(name);
  const companyId = await newCompany(owner);
  const store = await openStore(env, companyId);
  const stub = env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, store.ordinal))) as DurableObjectStub<DocumentStore>;
  return { owner, companyId, store, stub };
}

/** Rows put straight into a store's SQLite (as they would be after relays and deliveries). */
function seed(stub: DurableObjectStub<DocumentStore>, statements: [string, ...unknown[]][]) {
  return runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => {
    for (const [q, ...params] of statements) state.storage.sql.exec(q, ...params);
  });
}

const ids = (stub: DurableObjectStub<DocumentStore>, table: string) =>
  runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.sql.exec<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`).toArray().map((r) => r.id));

/** Runs the retention task on the store's own SQLite at `now`, with `rows` per run. */
const purgeIn = (stub: DurableObjectStub<DocumentStore>, now: number, rows?: number) =>
  runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => {
    const task = new EventRetention(state.storage.sql, rows);
    const run = task.purge(now);
    return { run, next: task.nextAt(now) };
  });

const event = (id: string, companyId: string, createdAt: string, dispatchedAt: string | null, dedupeKey: string | null = null): [string, ...unknown[]] => [
  "INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', ?, '{}', ?, ?)",
  id, companyId, dedupeKey ?? id, createdAt, dispatchedAt,
];
const delivery = (id: string, companyId: string, status: string, createdAt: string): [string, ...unknown[]] => [
  "INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at, updated_at) VALUES (?, ?, 'whk_x', ?, 'ENU', ?, ?, ?, ?)",
  id, companyId, `evt_of_${id}`, status, status === "PENDING" ? createdAt : null, createdAt, createdAt,
];
const attempt = (id: string, deliveryId: string, companyId: string, n: number): [string, ...unknown[]] => [
  "INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, event_type, attempt, started_at, duration_ms) VALUES (?, ?, ?, 'whk_x', ?, 'ENU', ?, ?, 1)",
  id, companyId, deliveryId, `evt_of_${deliveryId}`, n, new Date().toISOString(),
];

describe("retention in a document store (its alarm's task)", () => {
  it("relayed events and settled deliveries older than 30 days go, with their attempts; younger, unrelayed and PENDING ones stay", async () => {
    const { companyId, stub } = await companyStore("retention-store");
    await seed(stub, [
      event("evt_old_relayed", companyId, ago(31), ago(31)),
      event("evt_old_unrelayed", companyId, ago(31), null),
      event("evt_young_relayed", companyId, ago(29), ago(29)),
      delivery("dlv_old_ok", companyId, "SUCCEEDED", ago(31)),
      delivery("dlv_old_failed", companyId, "FAILED", ago(40)),
      delivery("dlv_old_pending", companyId, "PENDING", ago(31)),
      delivery("dlv_young_failed", companyId, "FAILED", ago(29)),
      attempt("att_1", "dlv_old_ok", companyId, 1),
      attempt("att_2", "dlv_old_failed", companyId, 1),
      attempt("att_3", "dlv_old_failed", companyId, 2),
      attempt("att_4", "dlv_young_failed", companyId, 1),
    ]);
    const { run } = await purgeIn(stub, Date.now());
    expect(run).toEqual({ events: 1, deliveries: 2, attempts: 3 });
    expect(await ids(stub, "event_outbox")).toEqual(["evt_old_unrelayed", "evt_young_relayed"]);
    expect(await ids(stub, "webhook_deliveries")).toEqual(["dlv_old_pending", "dlv_young_failed"]);
    expect(await ids(stub, "webhook_attempts")).toEqual(["att_4"]);
    // A day later the young ones have crossed the line too.
    expect((await purgeIn(stub, Date.now() + 2 * DAY)).run).toEqual({ events: 1, deliveries: 1, attempts: 1 });
  });

  it("keeps the approaching-deadline event of a received document still PENDING (the deadlines task reads it)", async () => {
    const { companyId, stub } = await companyStore("retention-deadline");
    const pending = partitionedId("rcv", 1);
    const answered = partitionedId("rcv", 1);
    const rcv = (id: string, state: string): [string, ...unknown[]] => [
      "INSERT INTO received_documents (id, company_id, issuer_rut, document_type, folio, channel, response_state) VALUES (?, ?, '76086428-5', 33, ?, 'UPLOAD', ?)",
      id, companyId, Math.floor(Math.random() * 1e6), state,
    ];
    await seed(stub, [
      rcv(pending, "PENDING"),
      rcv(answered, "ACCEPTED"),
      event("evt_pending_doc", companyId, ago(35), ago(35), `deadline_approaching:${pending}`),
      event("evt_answered_doc", companyId, ago(35), ago(35), `deadline_approaching:${answered}`),
    ]);
    expect((await purgeIn(stub, Date.now())).run.events).toBe(1);
    expect(await ids(stub, "event_outbox")).toEqual(["evt_pending_doc"]);
  });

  it("is bounded per run and resumes: a full run comes back a second later", async () => {
    const { companyId, stub } = await companyStore("retention-bounded");
    await seed(stub, [1, 2, 3, 4, 5].map((n) => event(`evt_b${n}`, companyId, ago(31 + n), ago(31 + n))));
    const now = Date.now();
    const first = await purgeIn(stub, now, 2);
    expect(first.run.events).toBe(2);
    expect(first.next).toBe(now + RETENTION_CONTINUE_MS);
    // Oldest first: the two oldest went.
    expect(await ids(stub, "event_outbox")).toEqual(["evt_b1", "evt_b2", "evt_b3"]);
    expect((await purgeIn(stub, now, 2)).run.events).toBe(2);
    const last = await purgeIn(stub, now, 2);
    expect(last.run.events).toBe(1);
    expect(last.next).toBeNull();
    expect(await ids(stub, "event_outbox")).toEqual([]);
  });

  it("an old event written into a store is fanned out there, never reaching D1, and the store's alarm is set for its deletion", async () => {
    const { companyId, store, stub } = await companyStore("retention-alarm");
    await outboxInsert(store.db, { companyId, type: "ENU", payload: enu, dedupeKey: "ENU:retention:1", createdAt: ago(31) });
    const dispatched = () => runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.sql.exec("SELECT count(*) AS n FROM event_outbox WHERE dispatched_at IS NOT NULL").one().n);
    for (let i = 0; i < 200 && (await dispatched()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await dispatched()).toBe(1);
    const d1 = await env.DB.prepare("SELECT dedupe_key FROM event_outbox WHERE company_id = ?").bind(companyId).all();
    expect(d1.results).toEqual([]);
    // The fan-out's mark set the alarm again from every task: the retention's next run (at most hourly).
    const alarm = await runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(Date.now() + RETENTION_INTERVAL_MS);
    expect((await purgeIn(stub, Date.now())).run.events).toBe(1);
    expect(await ids(stub, "event_outbox")).toEqual([]);
  });
});

describe("retention in D1 (the cron)", () => {
  it("deletes fanned-out events past retention, oldest first, in bounded batches that resume; keeps younger and undispatched ones", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const base = Date.parse("2001-01-01T00:00:00.000Z");
    const put = (id: string, createdAt: string, dispatchedAt: string | null) =>
      env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', '{}', ?, ?)").bind(id, companyId, createdAt, dispatchedAt);
    await env.DB.batch([
      ...[0, 1, 2, 3, 4].map((n) => put(`evt_d1_old_${n}`, new Date(base + n * 1000).toISOString(), new Date(base).toISOString())),
      put("evt_d1_old_undispatched", new Date(base).toISOString(), null),
      put("evt_d1_young", ago(29), ago(29)),
    ]);
    const now = new Date();
    const left = async () => (await env.DB.prepare("SELECT id FROM event_outbox WHERE company_id = ? ORDER BY id").bind(companyId).all<{ id: string }>()).results.map((r) => r.id);
    // 2 batches of 2: 4 rows, and the last batch was full, so more may be left.
    expect(await purgeD1Events(createDb(env.DB), now, 2, 2)).toEqual({ deleted: 4, more: true });
    expect(await left()).toEqual(["evt_d1_old_4", "evt_d1_old_undispatched", "evt_d1_young"]);
    expect(await purgeD1Events(createDb(env.DB), now, 2, 2)).toEqual({ deleted: 1, more: false });
    expect(await left()).toEqual(["evt_d1_old_undispatched", "evt_d1_young"]);
  });
});

describe("redelivery and delivery past retention", () => {
  it("redelivering an event past retention answers 410 WEBHOOK_EVENT_EXPIRED; an unknown one 404", async () => {
    const owner = await newOwner("retention-redeliver");
    const companyId = await newCompany(owner);
    const hook = await register(owner, companyId, { url: receiverUrl("retention-redeliver").url, events: ["*"] });
    const old = newId("evt");
    await env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', ?, ?, ?)")
      .bind(old, companyId, JSON.stringify(enu), ago(31), ago(31))
      .run();
    const redeliver = (event_id: string) => call("POST", `/api/companies/${companyId}/webhooks/${hook.id}/redeliver`, { key: owner.key, json: { event_id } });
    // Still in D1 (the purge has not reached it) but past retention.
    expectError(await redeliver(old), 410, "WEBHOOK_EVENT_EXPIRED");
    // Already purged: its id says how old it was.
    const purged = `evt_${encodeUlidTime(Date.now() - EVENT_RETENTION_MS - DAY)}${randomUlid().slice(10)}`;
    const res = await redeliver(purged);
    expectError(res, 410, "WEBHOOK_EVENT_EXPIRED");
    expect(res.body.error.message).toContain("30-day retention");
    expectError(await redeliver(newId("evt")), 404, "WEBHOOK_DELIVERY_NOT_FOUND");
    // Nothing was made for either.
    const store = await openStore(env, companyId);
    expect(await store.db.all(sql`SELECT id FROM webhook_deliveries`)).toEqual([]);
  });

  it("an attempt whose event is gone ends the delivery FAILED with the reason, nothing sent", async () => {
    const owner = await newOwner("retention-deliver");
    const companyId = await newCompany(owner);
    const hook = await register(owner, companyId, { url: receiverUrl("retention-deliver").url, events: ["*"] });
    const store = await openStore(env, companyId);
    const id = partitionedId("dlv", store.ordinal);
    const at = new Date().toISOString();
    await store.db.insert(webhookDeliveries).values({ id, companyId, endpointId: hook.id, eventId: newId("evt"), eventType: "ENU", nextAttemptAt: at, createdAt: at, updatedAt: at });
    expect(await deliver(createDb(env.DB), env, { id, companyId, partition: store.ordinal })).toBe("failed");
    const [row] = (await store.db.all(sql`SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = ${id}`)) as { status: string; attempts: number; last_error: string }[];
    expect(row).toMatchObject({ status: "FAILED", attempts: 0 });
    expect(row!.last_error).toContain("30-day retention");
  });
});
