/**
 * Webhook deliveries and attempts in the company's document stores: a delivery of a partition the
 * month has closed is still attempted where it lives, a message that names no partition finds its
 * delivery in the partition its id names, a fan-out that died before stamping its events makes no
 * second delivery (even across a roll-over), and a company without an endpoint has its events
 * stamped without a store being opened.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { closePartition, openStore, partitionedId, storeFor } from "../../src/storage/db/document-store";
import { webhookDeliveries } from "../../src/storage/db/schema";
import { newId } from "../../src/lib/ids";
import { deliver } from "../../src/webhooks/delivery";
import { fanOut } from "../../src/webhooks/fanout";
import { newCompany, newOwner } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { receiverUrl, register, until, verified } from "./helpers";

const LAST_MONTH = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15));

async function enuEvent(companyId: string, dispatched: boolean): Promise<string> {
  const id = newId("evt");
  const at = new Date().toISOString();
  const payload = { reason: "LOW_AVAILABILITY", document_type: "33", available: 3, threshold: 10, detected_at: at };
  await env.DB.prepare("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at, dispatched_at) VALUES (?, ?, 'ENU', ?, ?, ?, ?)")
    .bind(id, companyId, `ENU:${id}`, JSON.stringify(payload), at, dispatched ? at : null)
    .run();
  return id;
}

async function pendingDelivery(companyId: string, partition: number, id: string, endpointId: string, eventId: string, nextAttemptAt = new Date().toISOString()) {
  const at = new Date().toISOString();
  await storeFor(env, companyId, partition).db.insert(webhookDeliveries).values({ id, companyId, endpointId, eventId, eventType: "ENU", nextAttemptAt, createdAt: at, updatedAt: at });
}

type Row = { id: string; status: string; attempts: number };
async function settledIn(companyId: string, partition: number, id: string): Promise<{ delivery: Row; attempts: number }> {
  const db = storeFor(env, companyId, partition).db;
  for (let i = 0; i < 100; i++) {
    const [delivery] = (await db.all(sql`SELECT id, status, attempts FROM webhook_deliveries WHERE id = ${id}`)) as Row[];
    if (delivery && delivery.status !== "PENDING") {
      const [n] = (await db.all(sql`SELECT count(*) AS n FROM webhook_attempts WHERE delivery_id = ${id}`)) as { n: number }[];
      return { delivery, attempts: n!.n };
    }
    await new Promise((res) => setTimeout(res, 150));
  }
  throw new Error(`delivery ${id} never settled in partition ${partition}`);
}

describe("webhook deliveries in the document stores", () => {
  it("a delivery message for a previous month's partition is processed there, with or without the partition named", async () => {
    const owner = await newOwner("Webhook stores");
    const companyId = await newCompany(owner);
    const r = receiverUrl("stores-old-month");
    const hook = await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const old = await openStore(env, companyId, LAST_MONTH);
    const current = await openStore(env, companyId);
    expect(current.ordinal).toBeGreaterThan(old.ordinal);

    const [e1, e2] = [await enuEvent(companyId, true), await enuEvent(companyId, true)];
    const inOld = partitionedId("dlv", old.ordinal);
    await pendingDelivery(companyId, old.ordinal, inOld, hook.id, e1);
    await env.WEBHOOK_QUEUE.send({ v: 1, type: "deliver", delivery_id: inOld, company_id: companyId, partition: old.ordinal });
    // a message without partition: the delivery id names it
    const byId = partitionedId("dlv", old.ordinal);
    await pendingDelivery(companyId, old.ordinal, byId, hook.id, e2);
    await env.WEBHOOK_QUEUE.send({ v: 1, type: "deliver", delivery_id: byId, company_id: companyId });

    const got = await until(r.path, (x) => x.length >= 2);
    expect(got.map((x) => verified(hook.secret, x).id).sort()).toEqual([e1, e2].sort());
    expect(await settledIn(companyId, old.ordinal, inOld)).toEqual({ delivery: { id: inOld, status: "SUCCEEDED", attempts: 1 }, attempts: 1 });
    expect(await settledIn(companyId, old.ordinal, byId)).toEqual({ delivery: { id: byId, status: "SUCCEEDED", attempts: 1 }, attempts: 1 });
    // nothing of either landed in the open partition
    expect(await storeFor(env, companyId, current.ordinal).db.all(sql`SELECT id FROM webhook_deliveries`)).toEqual([]);
    // a message that names its partition and finds nothing is done with
    const db = createDb(env.DB);
    expect(await deliver(db, env, { id: partitionedId("dlv", current.ordinal), companyId, partition: current.ordinal })).toBe("skipped");
    expect(await deliver(db, env, { id: "dlv_not-an-id", companyId })).toBe("skipped");
  });

  it("a fan-out that died before stamping its events makes no second delivery, across a roll-over too", async () => {
    const owner = await newOwner("Webhook fan-out crash");
    const companyId = await newCompany(owner);
    const r = receiverUrl("stores-crash");
    await register(owner, companyId, { url: r.url, events: ["ENU"] });
    const events = [await enuEvent(companyId, false), await enuEvent(companyId, false), await enuEvent(companyId, false)];
    const db = createDb(env.DB);
    expect(await fanOut(db, env, companyId)).toMatchObject({ events: 3, deliveries: 3 });
    const first = await openStore(env, companyId);
    // the stamp is lost (the worker died between the store write and D1), then the partition rolls over
    await env.DB.prepare(`UPDATE event_outbox SET dispatched_at = NULL WHERE id IN (?, ?, ?)`).bind(...events).run();
    await closePartition(env, companyId, first.ordinal, "SIZE", null);
    expect((await openStore(env, companyId)).ordinal).toBe(first.ordinal + 1);
    expect(await fanOut(db, env, companyId)).toMatchObject({ events: 3, deliveries: 0 });
    const rows = await storeRows<{ event_id: string }>(companyId, "SELECT event_id FROM webhook_deliveries");
    expect(rows.map((x) => x.event_id).sort()).toEqual([...events].sort());
    const stamped = await env.DB.prepare("SELECT count(*) AS n FROM event_outbox WHERE company_id = ? AND dispatched_at IS NOT NULL").bind(companyId).first<{ n: number }>();
    expect(stamped!.n).toBe(3);
    await until(r.path, (x) => new Set(x.map((y) => y.headers["webhook-id"])).size === 3);
  });

  it("a company without an endpoint: the fan-out stamps its events dispatched and opens no document store", async () => {
    const owner = await newOwner("Webhook fan-out, no endpoint");
    const companyId = await newCompany(owner);
    const events = [await enuEvent(companyId, false), await enuEvent(companyId, false)];
    expect(await fanOut(createDb(env.DB), env, companyId)).toEqual({ events: 2, deliveries: 0, more: false });
    const stamped = await env.DB.prepare("SELECT id FROM event_outbox WHERE company_id = ? AND dispatched_at IS NOT NULL ORDER BY id").bind(companyId).all<{ id: string }>();
    expect(stamped.results.map((r) => r.id)).toEqual([...events].sort());
    const partitions = await env.DB.prepare("SELECT count(*) AS n FROM document_partitions WHERE company_id = ?").bind(companyId).first<{ n: number }>();
    expect(partitions!.n).toBe(0);
    expect(await fanOut(createDb(env.DB), env, companyId)).toEqual({ events: 0, deliveries: 0, more: false });
  });
});
