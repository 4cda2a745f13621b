/**
 * The issuance pipeline against a document store: a document whose id names a store
 * partition is moved RECEIVED → ACCEPTED in that store (its history and its envelope with it, the
 * envelope's id naming the same partition), nothing of it is written to D1, and the store's own alarm
 * re-drives it when its queue message was lost, or polls its envelope again when its polling stopped
 * (src/operations/objects/document-store/stuck-documents.ts; the cron asks no store). Until the POST
 * writes new documents to the open store, the fixture is a document issued without its queue message
 * and moved into the store by hand.
 */
import { createMessageBatch, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import { createDb } from "../../src/storage/db/client";
import { openStore, ordinalOfId, partitionedId, storeFor, storeName } from "../../src/storage/db/document-store";
import { envelopes as envelopesTable, invoices } from "../../src/storage/db/schema";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { StuckDocuments } from "../../src/operations/objects/document-store/stuck-documents";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { STUCK_AFTER_MS } from "../../src/invoices/pipeline/messages";
import { newCompany, newOwner } from "../helpers/api";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { issueInvoice } from "../../src/invoices/issue";
import { invoiceBody, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33], 10);
});

/** A RECEIVED document (with its first history row and folio reservation) in the company's open store, never queued. */
async function receivedInStore(updatedAt = new Date().toISOString()) {
  const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
  const silentEnv = { ...env, ISSUANCE_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  // The POST writes the document into the company's open store; its queue message is lost (silent queue).
  const row = await issueInvoice(createDb(env.DB), silentEnv, company, invoiceBody(issuer.rut, "33"), "req_test");
  const ordinal = ordinalOfId(row.id)!;
  expect(ordinal).toBeGreaterThan(0);
  await storeFor(env, issuer.companyId, ordinal).db.update(invoices).set({ updatedAt }).where(eq(invoices.id, row.id));
  return { id: row.id, ordinal };
}

const silentQueue = { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue;
const stub = (companyId: string, ordinal: number) => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, ordinal))) as DurableObjectStub<DocumentStore>;
const alarmOf = (s: DurableObjectStub<DocumentStore>) => runInDurableObject(s, (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm());

describe("the pipeline in a document store", () => {
  it("a lost queue message: the store's alarm re-drives the document, which reaches ACCEPTED with its envelope, D1 untouched", async () => {
    const { id, ordinal } = await receivedInStore(new Date(Date.now() - 11 * 60_000).toISOString());
    // The write armed the store's alarm at once (the document is past the interval); it fires by
    // itself, and running it here (if it has not fired yet) changes nothing else: no cron runs.
    await runDurableObjectAlarm(stub(issuer.companyId, ordinal));
    const done = await untilFinal(issuer, id);
    expect(done.status).toBe("ACCEPTED");
    expect(done.folio).toBeGreaterThan(0);

    const [row] = await storeRows<{ status: string; envelope_id: string }>(issuer.companyId, sql`SELECT status, envelope_id FROM invoices WHERE id = ${id}`);
    expect(row).toMatchObject({ status: "ACCEPTED" });
    expect(row!.envelope_id).toMatch(new RegExp(`^env_p${ordinal}_[0-9A-Z]{26}$`));
    const envelopes = await storeRows<{ status: string; document_count: number }>(issuer.companyId, sql`SELECT status, document_count FROM envelopes WHERE id = ${row!.envelope_id}`);
    expect(envelopes).toEqual([{ status: "DONE", document_count: 1 }]);
    const history = (await storeRows<{ status: string }>(issuer.companyId, sql`SELECT status FROM invoice_events WHERE invoice_id = ${id} ORDER BY created_at, id`)).map((e) => e.status);
    // Polls record the SII's intermediate codes as further SENT rows.
    expect(history.filter((s, i) => s !== history[i - 1])).toEqual(["RECEIVED", "GENERATED", "SIGNED", "SENT", "ACCEPTED"]);
  });

  it("an envelope whose polling stopped: the store's alarm polls it again and its document reaches ACCEPTED", async () => {
    const { id, ordinal } = await receivedInStore();
    // The consumer takes the document to SENT, but the envelope's first poll is lost (a silent queue).
    const message = { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { v: 1, type: "invoice", invoice_id: id, company_id: issuer.companyId } };
    await handleIssuanceBatch(createMessageBatch("dte-issuance", [message]), { ...env, ISSUANCE_QUEUE: silentQueue }, siiAuthority(env));
    const store = storeFor(env, issuer.companyId, ordinal).db;
    const [sent] = await store.select({ status: invoices.status, envelopeId: invoices.envelopeId }).from(invoices).where(eq(invoices.id, id));
    expect(sent!.status).toBe("SENT");
    const [envelope] = await store.select().from(envelopesTable).where(eq(envelopesTable.id, sent!.envelopeId!));
    expect(envelope).toMatchObject({ status: "SENT", polls: 0 });
    // Eleven minutes without a poll: the write brings the store's alarm to now, which sends the poll
    // again (it fires by itself; running it here if it has not yet changes nothing else).
    await store.update(envelopesTable).set({ updatedAt: new Date(Date.now() - 11 * 60_000).toISOString() }).where(eq(envelopesTable.id, envelope!.id));
    await runDurableObjectAlarm(stub(issuer.companyId, ordinal));
    expect((await untilFinal(issuer, id)).status).toBe("ACCEPTED");
    const [done] = await store.select().from(envelopesTable).where(eq(envelopesTable.id, envelope!.id));
    expect(done).toMatchObject({ status: "DONE" });
    expect(done!.polls).toBeGreaterThan(0);
  });
});

/** Rows of a store written as the pipeline writes them: documents and envelopes in a state, untouched since `updatedAt`. */
function documentRow(companyId: string, id: string, status: (typeof invoices.$inferInsert)["status"], updatedAt: string): typeof invoices.$inferInsert {
  return { id, companyId, documentType: 33, status, issueDate: updatedAt.slice(0, 10), recipientRut: "77879240-0", recipientName: "Cliente Ltda", currency: "CLP", total: "35700", body: "{}", createdAt: updatedAt, updatedAt };
}
function envelopeRow(companyId: string, id: string, status: "PREPARED" | "SENT" | "DONE", updatedAt: string): typeof envelopesTable.$inferInsert {
  return { id, companyId, kind: "EnvioDTE", xmlKey: `companies/${companyId}/envelopes/${id}.xml`, documentCount: 1, status, trackId: "123", createdAt: updatedAt, updatedAt };
}

type Sent = { body: { type: string; invoice_id?: string; envelope_id?: string } };
/** A queue that records what is sent to it. */
function capturing(): { queue: Queue; sent: Sent[]; take: () => string[] } {
  const sent: Sent[] = [];
  const queue = { send: async (b: Sent["body"]) => void sent.push({ body: b }), sendBatch: async (m: Sent[]) => void sent.push(...m) } as unknown as Queue;
  return { queue, sent, take: () => sent.splice(0).map((m) => m.body.invoice_id ?? `poll:${m.body.envelope_id}`).sort() };
}

describe("stuck documents and envelopes: a task of the store's alarm", () => {
  it("the alarm is set at the oldest non-final row's time plus the interval; a run re-drives what is due, within its bound, and the same rows not again before an interval", async () => {
    const companyId = await newCompany(await newOwner("stuck-task"));
    const { ordinal, db } = await openStore(env, companyId);
    const t0 = Date.now();
    const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
    const id = (prefix: "inv" | "env") => partitionedId(prefix, ordinal);
    const [received, generated, signed, fresh, accepted] = [id("inv"), id("inv"), id("inv"), id("inv"), id("inv")];
    const [sentEnvelope, doneEnvelope, freshEnvelope] = [id("env"), id("env"), id("env")];
    await db.insert(invoices).values([
      documentRow(companyId, received, "RECEIVED", at(-5)),
      documentRow(companyId, generated, "GENERATED", at(-5)),
      documentRow(companyId, signed, "SIGNED", at(-4)),
      documentRow(companyId, fresh, "RECEIVED", at(0)),
      documentRow(companyId, accepted, "ACCEPTED", at(-60)),
    ]);
    await db.insert(envelopesTable).values([envelopeRow(companyId, sentEnvelope, "SENT", at(-4.5)), envelopeRow(companyId, doneEnvelope, "DONE", at(-60)), envelopeRow(companyId, freshEnvelope, "SENT", at(0))]);
    // The final document and the finished envelope count for nothing: the oldest RECEIVED one does.
    expect(await alarmOf(stub(companyId, ordinal))).toBe(t0 + 5 * 60_000);

    const { queue, take } = capturing();
    const runs = await runInDurableObject(stub(companyId, ordinal), async (_i: DocumentStore, state: DurableObjectState) => {
      const task = new StuckDocuments(state.storage.sql, { ...env, ISSUANCE_QUEUE: queue }, 2);
      const step = async (minutes: number) => {
        const now = t0 + minutes * 60_000;
        await task.run(now);
        return { sent: take(), next: task.nextAt(now) };
      };
      return { before: task.nextAt(t0), early: await step(4), first: await step(6), second: await step(6), quiet: await step(7), later: await step(11), again: await step(16), rest: await step(16) };
    });
    const min = (m: number) => t0 + m * 60_000;
    expect(runs.before).toBe(min(5));
    expect(runs.early).toEqual({ sent: [], next: min(5) });
    // At +6: two documents (the bound), the oldest first, and the stale envelope's poll; the rest at once.
    expect(runs.first).toEqual({ sent: [generated, received, `poll:${sentEnvelope}`].sort(), next: min(6) });
    expect(runs.second).toEqual({ sent: [signed], next: min(10) });
    // Nothing new is due, and what was re-driven waits a full interval.
    expect(runs.quiet).toEqual({ sent: [], next: min(10) });
    expect(runs.later).toEqual({ sent: [fresh, `poll:${freshEnvelope}`].sort(), next: min(16) });
    // An interval after the pass began, everything still untouched is re-driven again, within the bound.
    expect(runs.again).toEqual({ sent: [generated, received, `poll:${sentEnvelope}`, `poll:${freshEnvelope}`].sort(), next: min(16) });
    expect(runs.rest).toEqual({ sent: [fresh, signed].sort(), next: min(26) });
  });

  it("a touched document leaves the pass; the queue refusing a re-drive brings the alarm back after a delay, not at once", async () => {
    const companyId = await newCompany(await newOwner("stuck-task-touched"));
    const { ordinal, db } = await openStore(env, companyId);
    const t0 = Date.now();
    const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
    const [a, b] = [partitionedId("inv", ordinal), partitionedId("inv", ordinal)];
    await db.insert(invoices).values([documentRow(companyId, a, "RECEIVED", at(-20)), documentRow(companyId, b, "RECEIVED", at(-20))]);
    const { queue, take } = capturing();
    const down = { send: async () => Promise.reject(new Error("queue down")), sendBatch: async () => Promise.reject(new Error("queue down")) } as unknown as Queue;
    const runs = await runInDurableObject(stub(companyId, ordinal), async (_i: DocumentStore, state: DurableObjectState) => {
      const failing = new StuckDocuments(state.storage.sql, { ...env, ISSUANCE_QUEUE: down });
      const refused = await failing.run(t0).then(() => "sent", (e: Error) => e.message);
      const afterRefusal = failing.nextAt(t0);
      const task = new StuckDocuments(state.storage.sql, { ...env, ISSUANCE_QUEUE: queue });
      await task.run(t0);
      const first = take();
      // The consumer moves one of them on (its updated_at with it); then it sits again.
      state.storage.sql.exec("UPDATE invoices SET status = 'GENERATED', updated_at = ? WHERE id = ?", at(1), a);
      const repeatAt = task.nextAt(t0 + 60_000);
      await task.run(t0 + 10 * 60_000);
      const repeated = take();
      const movedAt = task.nextAt(t0 + 10 * 60_000);
      await task.run(t0 + 11 * 60_000);
      const moved = take();
      // A time written without milliseconds, due by the clock but not by the text the run compares: no alarm loop.
      const whole = Math.floor((t0 + 2 * 60_000) / 1000) * 1000;
      state.storage.sql.exec("UPDATE invoices SET status = 'SIGNED', updated_at = ? WHERE id = ?", new Date(whole).toISOString().replace(".000Z", "Z"), a);
      const odd = whole + STUCK_AFTER_MS + 500;
      await task.run(odd);
      return { refused, afterRefusal, first, repeatAt, repeated, movedAt, moved, odd: { sent: take(), next: task.nextAt(odd)! - odd } };
    });
    expect(runs.refused).toBe("queue down");
    expect(runs.afterRefusal).toBe(t0 + 60_000);
    expect(runs.first).toEqual([a, b].sort());
    // An interval after the pass, only the untouched one is re-driven; the moved one an interval after its own write.
    expect(runs.repeatAt).toBe(t0 + 10 * 60_000);
    expect(runs.repeated).toEqual([b]);
    expect(runs.movedAt).toBe(t0 + 11 * 60_000);
    expect(runs.moved).toEqual([a]);
    expect(runs.odd).toEqual({ sent: [], next: STUCK_AFTER_MS });
  });

  it("between runs the next time is kept while writes stamp later times, and comes sooner for a row written with an older one", async () => {
    const companyId = await newCompany(await newOwner("stuck-task-kept"));
    const { ordinal, db } = await openStore(env, companyId);
    const t0 = Date.now();
    const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
    const s = stub(companyId, ordinal);
    const first = partitionedId("inv", ordinal);
    await db.insert(invoices).values(documentRow(companyId, first, "RECEIVED", at(0)));
    expect(await alarmOf(s)).toBe(t0 + STUCK_AFTER_MS);
    // Later writes (a new document, the first one moving on) leave it.
    await db.insert(invoices).values(documentRow(companyId, partitionedId("inv", ordinal), "RECEIVED", at(1)));
    await db.update(invoices).set({ status: "GENERATED", updatedAt: at(2) }).where(eq(invoices.id, first));
    expect(await alarmOf(s)).toBe(t0 + STUCK_AFTER_MS);
    // A copied row with an older time, then an envelope older still, bring it forward.
    await db.insert(invoices).values(documentRow(companyId, partitionedId("inv", ordinal), "SIGNED", at(-3)));
    expect(await alarmOf(s)).toBe(t0 - 3 * 60_000 + STUCK_AFTER_MS);
    await db.insert(envelopesTable).values(envelopeRow(companyId, partitionedId("env", ordinal), "SENT", at(-4)));
    expect(await alarmOf(s)).toBe(t0 - 4 * 60_000 + STUCK_AFTER_MS);
    // A final row with an older time counts for nothing.
    await db.insert(invoices).values(documentRow(companyId, partitionedId("inv", ordinal), "ACCEPTED", at(-9)));
    expect(await alarmOf(s)).toBe(t0 - 4 * 60_000 + STUCK_AFTER_MS);
  });
});
