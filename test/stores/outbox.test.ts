/**
 * The store outbox relay (issue 16): an event written into a document store's `event_outbox` in the
 * same batch as the change it describes is copied to D1's outbox by the store's alarm, once, also
 * after D1 failed, and the fan-out then delivers it like any event of D1's outbox.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openStore, partitionedId, storeName } from "../../src/db/document-store";
import { outboxInsert, relayNow } from "../../src/db/document-store/outbox";
import { invoices } from "../../src/db/schema";
import type { DocumentStore } from "../../src/durable-objects/document-store";
import { randomUlid } from "../../src/lib/ids";
import { STUCK_AFTER_MS } from "../../src/queues/issuance";
import { MOVES, transition } from "../../src/domain/invoices/state";
import { newCompany, newOwner } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { receiverUrl, register, until, verified } from "../webhooks/helpers";

const enu = (n: number) => ({ reason: "LOW_AVAILABILITY", document_type: "33", available: n, threshold: 10, detected_at: new Date().toISOString() });

/** One document inserted together with an event about it, in one store batch. */
async function writeWithEvent(companyId: string, dedupeKey: string) {
  const store = await openStore(env, companyId);
  const id = partitionedId("inv", store.ordinal);
  await store.db.batch([
    store.db.insert(invoices).values({ id, companyId, documentType: 33, status: "RECEIVED", issueDate: "2026-11-23", recipientRut: "77879240-0", recipientName: "Cliente Ltda", currency: "CLP", total: "1", body: "{}" }),
    outboxInsert(store.db, { companyId, type: "ENU", payload: enu(3), dedupeKey }),
  ]);
  return { store, name: storeName(companyId, store.ordinal), stub: env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, store.ordinal))), id };
}

const d1Events = async (companyId: string) =>
  (await env.DB.prepare("SELECT id, type, dedupe_key, payload, dispatched_at FROM event_outbox WHERE company_id = ? ORDER BY created_at, id").bind(companyId).all<{ id: string; type: string; dedupe_key: string; payload: string; dispatched_at: string | null }>()).results;

async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe("store outbox relay", () => {
  it("the batch arms the alarm, which copies the event to D1 once and marks it relayed", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const { name, id } = await writeWithEvent(companyId, "ENU:test:1");
    // Written atomically with the document: both are in the store.
    expect(await storeRows(companyId, sql`SELECT count(*) AS n FROM invoices WHERE id = ${id}`)).toEqual([{ n: 1 }]);
    // Nobody calls the relay: the store's own alarm does it.
    const rows = await waitFor(() => d1Events(companyId), (r) => r.length === 1, "the alarm relays the event");
    expect(rows[0]).toMatchObject({ type: "ENU", dedupe_key: "ENU:test:1" });
    expect(JSON.parse(rows[0]!.payload)).toMatchObject({ reason: "LOW_AVAILABILITY", available: 3 });
    const [local] = await storeRows<{ id: string; dispatched_at: string | null }>(companyId, "SELECT id, dispatched_at FROM event_outbox");
    expect(local!.id).toBe(rows[0]!.id);
    await waitFor(() => storeRows<{ dispatched_at: string | null }>(companyId, "SELECT dispatched_at FROM event_outbox"), (r) => r[0]!.dispatched_at !== null, "marked relayed");
    expect(await relayNow(env, name)).toBe(0);
    // A relay repeated after a crash between the D1 write and the local mark inserts nothing new.
    await (await openStore(env, companyId)).db.run(sql`UPDATE event_outbox SET dispatched_at = NULL`);
    expect(await relayNow(env, name)).toBe(1);
    expect(await d1Events(companyId)).toHaveLength(1);
  });

  it("a batch that writes no event arms nothing; a failed relay is retried by the alarm", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const store = await openStore(env, companyId);
    const stub = env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, store.ordinal)));
    const updatedAt = new Date().toISOString();
    await store.db.insert(invoices).values({ id: partitionedId("inv", store.ordinal), companyId, documentType: 33, status: "RECEIVED", issueDate: "2026-11-23", recipientRut: "77879240-0", recipientName: "X", currency: "CLP", total: "1", body: "{}", updatedAt });
    // Nothing to relay: the only alarm is the stuck-document check of the RECEIVED document, an interval later.
    expect(await runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm())).toBe(Date.parse(updatedAt) + STUCK_AFTER_MS);

    await env.DB.exec("ALTER TABLE event_outbox RENAME TO event_outbox_away");
    try {
      await store.db.batch([
        store.db.update(invoices).set({ status: "FAILED" }).where(eq(invoices.companyId, companyId)),
        outboxInsert(store.db, { companyId, type: "ENU", payload: enu(2), dedupeKey: "ENU:test:2" }),
      ]);
      await expect(relayNow(env, storeName(companyId, store.ordinal))).rejects.toThrow();
      // The alarm fails too and re-arms itself for a retry later.
      await waitFor(
        () => runInDurableObject(stub, (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm()),
        (at) => at !== null && at > Date.now() + 2_000,
        "the alarm re-armed for a retry",
      );
    } finally {
      await env.DB.exec("ALTER TABLE event_outbox_away RENAME TO event_outbox");
    }
    expect(await d1Events(companyId)).toEqual([]);
    expect(await storeRows(companyId, "SELECT dispatched_at FROM event_outbox")).toEqual([{ dispatched_at: null }]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await d1Events(companyId)).map((e) => e.dedupe_key)).toEqual(["ENU:test:2"]);
    expect((await storeRows<{ dispatched_at: string | null }>(companyId, "SELECT dispatched_at FROM event_outbox"))[0]!.dispatched_at).not.toBeNull();
  });

  it("a relayed event reaches the company's webhook endpoint through the fan-out", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const { url, path } = receiverUrl("store-outbox");
    const hook = await register(owner, companyId, { url, events: ["ENU"] });
    await writeWithEvent(companyId, "ENU:test:3");
    const [got] = await until(path, (r) => r.length === 1);
    const body = verified(hook.secret, got!);
    expect(body).toMatchObject({ type: "ENU", company_id: companyId, data: { reason: "LOW_AVAILABILITY", available: 3 } });
    const [event] = await d1Events(companyId);
    expect(body.id).toBe(event!.id);
  });

  it("a state transition of a document in a store records its invoice event there, and the relay carries it to D1", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const { store, name, id } = await writeWithEvent(companyId, "ENU:test:4");
    await store.db.update(invoices).set({ status: "SIGNED" }).where(eq(invoices.id, id));
    const moved = await transition(store.db, id, MOVES.send, { trackId: "123" }, "uploaded");
    expect(moved?.status).toBe("SENT");
    // A replayed move records nothing (the transition is conditional, the event deduplicated).
    expect(await transition(store.db, id, MOVES.send, { trackId: "123" })).toBeNull();
    await relayNow(env, name);
    const events = await d1Events(companyId);
    expect(events.map((e) => [e.type, e.dedupe_key])).toEqual([["ENU", "ENU:test:4"], ["invoice.sent", `invoice:${id}:SENT`]]);
    expect(JSON.parse(events[1]!.payload)).toMatchObject({ invoice: { id, status: "SENT", track_id: "123" }, cancelled_by: null });
    expect(await storeRows(companyId, sql`SELECT status, message FROM invoice_events WHERE invoice_id = ${id}`)).toEqual([{ status: "SENT", message: "uploaded" }]);
  });
});
