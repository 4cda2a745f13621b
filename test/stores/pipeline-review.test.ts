/**
 * Review of the pipeline per document store: what a failure between two writes of
 * different stores leaves behind, and whether the next delivery finishes it.
 *
 * A cancelling note that ends REJECTED or FAILED releases its cancellation beside itself and in the
 * cancelled document's partition, after the batch that recorded its verdict: two further writes, the
 * second one to another Durable Object. When either fails (the store unavailable, the isolate gone),
 * the message is retried, but the note is then final (its message) or its envelope DONE (its poll):
 * the retry must release what is still held, or the cancelled document can never be cancelled again.
 * The fixtures are that state, written as the pipeline writes it: the note final, its envelope DONE,
 * its cancellation still in both partitions.
 *
 * Also: a store past the size threshold while its documents are in flight (closed once, and a
 * failed close never reported as the committed store call's failure), and one consumer batch over
 * two companies and two partitions of each (one envelope per store, folios distinct, nothing in D1).
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import type { Db } from "../../src/storage/db/client";
import { closePartition, openStore, ordinalOfId, partitionedId, partitionsOf, storeFor } from "../../src/storage/db/document-store";

import { cancellations, envelopes, invoices, type InvoiceStatus } from "../../src/storage/db/schema";
import { handleIssuanceBatch } from "../../src/invoices/pipeline/consumer";
import { handleDeadLetters } from "../../src/invoices/pipeline/dead-letters";
import { invoiceDetail } from "../../src/invoices/queries";
import { assignFolio, signDocument, type StepDeps } from "../../src/invoices/pipeline/steps";
import type { StoreRpc } from "../../src/storage/db/document-store/client";
import type { StoreStatement } from "../../src/storage/db/document-store/schema";
import { envelopePollBody, invoiceBody } from "../../src/invoices/pipeline/messages";
import { noteProblem } from "../../src/invoices/state";
import { newCompany, newOwner } from "../helpers/api";
import { createDb } from "../../src/storage/db/client";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { allocator } from "../../src/folios/cafs";
import { issueInvoice } from "../../src/invoices/issue";
import { invoiceEvents } from "../../src/storage/db/schema";
import { invoiceBody as sampleBody, readyIssuer, type Issuer } from "../helpers/issuer";

const silentQueue = { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue;
const quietEnv = { ...env, ISSUANCE_QUEUE: silentQueue, WEBHOOK_QUEUE: silentQueue };

function documentRow(companyId: string, id: string, status: InvoiceStatus, extra: Partial<typeof invoices.$inferInsert> = {}): typeof invoices.$inferInsert {
  const at = new Date().toISOString();
  return { id, companyId, documentType: 33, status, issueDate: at.slice(0, 10), recipientRut: "77879240-0", recipientName: "Cliente Ltda", currency: "CLP", total: "9926", body: "{}", createdAt: at, updatedAt: at, ...extra };
}

/**
 * A company whose document (type 33, ACCEPTED) is in last month's closed partition and whose note
 * cancelling it, in `noteStatus`, is in the open one, in a DONE envelope; the cancellation row is in
 * both partitions (beside the note and where the cancelled document's reads look for it).
 */
async function noteAcrossPartitions(noteStatus: InvoiceStatus) {
  const companyId = await newCompany(await newOwner(`review-${noteStatus}`));
  const old = await openStore(env, companyId);
  const targetId = partitionedId("inv", old.ordinal);
  await old.db.insert(invoices).values(documentRow(companyId, targetId, "ACCEPTED", { folio: 7 }));
  await closePartition(env, companyId, old.ordinal, "MONTH_END", null);
  const open = await openStore(env, companyId);
  expect(open.ordinal).toBe(old.ordinal + 1);
  const noteId = partitionedId("inv", open.ordinal);
  const envelopeId = partitionedId("env", open.ordinal);
  const at = new Date().toISOString();
  await open.db.batch([
    open.db.insert(invoices).values(documentRow(companyId, noteId, noteStatus, { documentType: 61, folio: 3, cancelsInvoiceId: targetId, envelopeId, trackId: "1" })),
    open.db.insert(envelopes).values({ id: envelopeId, companyId, kind: "EnvioDTE", xmlKey: `companies/${companyId}/envelopes/${envelopeId}.xml`, documentCount: 1, status: "DONE", trackId: "1", createdAt: at, updatedAt: at }),
    open.db.insert(cancellations).values({ cancelledInvoiceId: targetId, creditNoteId: noteId, createdAt: at }),
  ]);
  await old.db.insert(cancellations).values({ cancelledInvoiceId: targetId, creditNoteId: noteId, createdAt: at });
  return { companyId, targetId, noteId, envelopeId, noteStore: storeFor(env, companyId, open.ordinal).db, targetStore: storeFor(env, companyId, old.ordinal).db };
}

async function deliver(body: unknown) {
  const message = { id: crypto.randomUUID(), timestamp: new Date(), attempts: 2, body };
  const batch = createMessageBatch("dte-issuance", [message]);
  await handleIssuanceBatch(batch, quietEnv as Env, siiAuthority(env));
}

const held = (db: Db, targetId: string) => db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId));

describe("a cancellation whose release was lost after the note's verdict", () => {
  it("the note's message delivered again (the note REJECTED) releases it in both partitions", async () => {
    const f = await noteAcrossPartitions("REJECTED");
    await deliver(invoiceBody(f.noteId, f.companyId));
    expect(await held(f.noteStore, f.targetId)).toEqual([]);
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
  });

  it("a FAILED note's message delivered again releases it too", async () => {
    const f = await noteAcrossPartitions("FAILED");
    await deliver(invoiceBody(f.noteId, f.companyId));
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
  });

  it("its envelope's poll delivered again (the envelope DONE) releases it in both partitions", async () => {
    const f = await noteAcrossPartitions("REJECTED");
    await deliver(envelopePollBody(f.envelopeId, f.companyId));
    expect(await held(f.noteStore, f.targetId)).toEqual([]);
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
  });

  it("an ACCEPTED note keeps the document cancelled, whatever is delivered again", async () => {
    const f = await noteAcrossPartitions("ACCEPTED");
    await deliver(invoiceBody(f.noteId, f.companyId));
    await deliver(envelopePollBody(f.envelopeId, f.companyId));
    expect(await held(f.noteStore, f.targetId)).toHaveLength(1);
    expect(await held(f.targetStore, f.targetId)).toEqual([{ cancelledInvoiceId: f.targetId, creditNoteId: f.noteId, createdAt: expect.any(String) }]);
  });
});

/** A message of the issuance queue's dead-letter queue, through its consumer; the queue's verdict on it. */
async function deadLetter(body: unknown, useEnv: Env = env) {
  const message = { id: crypto.randomUUID(), timestamp: new Date(), attempts: 100, body };
  const batch = createMessageBatch("dte-issuance-dlq", [message]);
  await handleDeadLetters(batch, useEnv);
  const result = await getQueueResult(batch, createExecutionContext());
  return { acked: result.explicitAcks.includes(message.id), retried: result.retryMessages.some((m) => m.msgId === message.id) };
}

/** The namespace, with the stores of `companyId`'s partition `ordinal` refusing every write. */
function writesRefusedIn(companyId: string, ordinal: number): Env["DOCUMENT_STORE"] {
  const ns = env.DOCUMENT_STORE;
  const refused = ns.idFromName(`${companyId}:${ordinal}`).toString();
  return {
    idFromName: (n: string) => ns.idFromName(n),
    get: (id: DurableObjectId) => {
      const stub = ns.get(id) as unknown as StoreRpc;
      if (id.toString() !== refused) return stub;
      const refuse = (sql: string) => /^(delete|update|insert)/i.test(sql);
      return {
        query: (st: StoreStatement) => (refuse(st.sql) ? Promise.reject(new Error("store unavailable")) : stub.query(st)),
        batch: (sts: StoreStatement[]) => (sts.some((st) => refuse(st.sql)) ? Promise.reject(new Error("store unavailable")) : stub.batch(sts)),
      };
    },
  } as unknown as Env["DOCUMENT_STORE"];
}

describe("a cancelling note's message dead-lettered after the note ended", () => {
  it("the dead-letter consumer releases a REJECTED note's cancellation in both partitions (no re-drive needed)", async () => {
    const f = await noteAcrossPartitions("REJECTED");
    expect(await deadLetter(invoiceBody(f.noteId, f.companyId))).toEqual({ acked: true, retried: false });
    expect(await held(f.noteStore, f.targetId)).toEqual([]);
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
  });

  it("a dead-lettered poll of a FAILED note's envelope releases it too", async () => {
    const f = await noteAcrossPartitions("FAILED");
    expect(await deadLetter(envelopePollBody(f.envelopeId, f.companyId))).toEqual({ acked: true, retried: false });
    expect(await held(f.noteStore, f.targetId)).toEqual([]);
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
  });

  it("an ACCEPTED note's dead letters leave the document cancelled", async () => {
    const f = await noteAcrossPartitions("ACCEPTED");
    await deadLetter(invoiceBody(f.noteId, f.companyId));
    await deadLetter(envelopePollBody(f.envelopeId, f.companyId));
    expect(await held(f.targetStore, f.targetId)).toHaveLength(1);
  });

  it("when the cancelled document's store refuses the release, the dead letter is retried, not acked; once it answers, the release is done", async () => {
    const f = await noteAcrossPartitions("REJECTED");
    const targetOrdinal = ordinalOfId(f.targetId)!;
    const failing = { ...env, DOCUMENT_STORE: writesRefusedIn(f.companyId, targetOrdinal) } as Env;
    expect(await deadLetter(invoiceBody(f.noteId, f.companyId), failing)).toEqual({ acked: false, retried: true });
    expect(await held(f.targetStore, f.targetId)).toHaveLength(1);
    expect(await deadLetter(invoiceBody(f.noteId, f.companyId))).toEqual({ acked: true, retried: false });
    expect(await held(f.targetStore, f.targetId)).toEqual([]);
    // Reads of the document no longer name the rejected note as cancelling it.
    const [target] = await f.targetStore.select().from(invoices).where(eq(invoices.id, f.targetId));
    expect((await invoiceDetail(env, target!)).cancelledBy).toBeNull();
  });
});

/** D1 as the platform gives it, its write batches counted; `down` makes them fail (D1 unavailable). */
function watchedD1() {
  const watch = { batches: 0, down: false };
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          watch.batches++;
          return watch.down ? Promise.reject(new Error("D1_ERROR: unavailable")) : target.batch(statements);
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db, watch };
}

describe("a partition closed by size while its documents are in flight", () => {
  it("is closed once: the pipeline's later reads and writes of its documents there write nothing to D1", async () => {
    const companyId = await newCompany(await newOwner("review-size"));
    const { ordinal } = await openStore(env, companyId);
    const { db, watch } = watchedD1();
    const small = { ...env, DB: db, DOCUMENT_STORE_MAX_BYTES: "1" };
    const store = storeFor(small, companyId, ordinal).db;
    const id = partitionedId("inv", ordinal);
    await store.insert(invoices).values(documentRow(companyId, id, "SIGNED"));
    expect((await partitionsOf(env, companyId)).map((p) => [p.ordinal, p.closedReason])).toEqual([
      [ordinal + 1, null],
      [ordinal, "SIZE"],
    ]);
    expect(watch.batches).toBe(1);
    // The document's next steps in its (closed) partition: a read, a note, a read.
    await store.select().from(invoices).where(eq(invoices.id, id));
    await noteProblem(store, { invoiceId: id }, "Sending failed, will retry");
    const [row] = await store.select().from(invoices).where(eq(invoices.id, id));
    expect(row).toMatchObject({ status: "SIGNED", attempts: 1 });
    expect(watch.batches).toBe(1);
  });

  it("D1 unavailable when the store passes the size: the store's write stands and is reported done; the close follows on a later call", async () => {
    const companyId = await newCompany(await newOwner("review-size-down"));
    const { ordinal } = await openStore(env, companyId);
    const { db, watch } = watchedD1();
    const small = { ...env, DB: db, DOCUMENT_STORE_MAX_BYTES: "1" };
    const store = storeFor(small, companyId, ordinal).db;
    const id = partitionedId("inv", ordinal);
    watch.down = true;
    // Before: the committed write was reported as failed, so the pipeline retried a step that was done.
    await store.insert(invoices).values(documentRow(companyId, id, "SIGNED"));
    expect(await store.select({ id: invoices.id }).from(invoices).where(eq(invoices.id, id))).toEqual([{ id }]);
    expect((await partitionsOf(env, companyId)).map((p) => [p.ordinal, p.closedReason])).toEqual([[ordinal, null]]);
    watch.down = false;
    await store.select({ id: invoices.id }).from(invoices).where(eq(invoices.id, id));
    expect((await partitionsOf(env, companyId)).map((p) => [p.ordinal, p.closedReason])).toEqual([
      [ordinal + 1, null],
      [ordinal, "SIZE"],
    ]);
  });
});

/**
 * A RECEIVED document of `issuer` (with its folio reservation) in partition `ordinal` of its company,
 * never queued: issued as the POST does (in the open store), then placed in the partition by hand.
 */
async function receivedIn(issuer: Issuer, ordinal: number) {
  const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
  const d1Row = await issueInvoice(createDb(env.DB), quietEnv as Env, company, sampleBody(issuer.rut, "33"), "req_review");
  const folios = allocator(env, issuer.companyId, 33);
  await folios.release(d1Row.id);
  const id = partitionedId("inv", ordinal);
  expect(await folios.reserve(id, { issueDate: d1Row.issueDate })).toMatchObject({ ok: true });
  const db = storeFor(env, issuer.companyId, ordinal).db;
  await db.batch([db.insert(invoices).values({ ...d1Row, id }), db.insert(invoiceEvents).values({ id: partitionedId("evt", ordinal), invoiceId: id, status: "RECEIVED", message: "Received", createdAt: d1Row.createdAt })]);
  return { id, companyId: issuer.companyId, ordinal };
}

describe("one batch over two companies and two partitions of each", () => {
  it("each document is sent in an envelope of its own partition, its poll finds it there, folios distinct per company; nothing in D1", async () => {
    const issuers = [await readyIssuer([33], 10), await readyIssuer([33], 10)];
    const docs: { id: string; companyId: string; ordinal: number }[] = [];
    for (const issuer of issuers) {
      const old = await openStore(env, issuer.companyId);
      docs.push(await receivedIn(issuer, old.ordinal), await receivedIn(issuer, old.ordinal));
      await closePartition(env, issuer.companyId, old.ordinal, "SIZE", 1);
      const open = await openStore(env, issuer.companyId);
      docs.push(await receivedIn(issuer, open.ordinal));
    }
    const polls: { envelope_id: string; company_id: string }[] = [];
    const capture = { send: async () => undefined, sendBatch: async (m: { body: { envelope_id: string; company_id: string } }[]) => void polls.push(...m.map((x) => x.body)) } as unknown as Queue;
    const run = (bodies: unknown[]) =>
      handleIssuanceBatch(createMessageBatch("dte-issuance", bodies.map((body) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body }))), { ...quietEnv, ISSUANCE_QUEUE: capture } as Env, siiAuthority(env));
    await run(docs.map((d) => invoiceBody(d.id, d.companyId)));

    const rows = await Promise.all(docs.map(async (d) => (await storeFor(env, d.companyId, d.ordinal).db.select().from(invoices).where(eq(invoices.id, d.id)))[0]!));
    for (const [i, r] of rows.entries()) {
      expect(r.status, r.lastError ?? "").toBe("SENT");
      expect(r.envelopeId).toMatch(new RegExp(`^env_p${docs[i]!.ordinal}_[0-9A-Z]{26}$`));
      const [envelope] = await storeFor(env, docs[i]!.companyId, docs[i]!.ordinal).db.select().from(envelopes).where(eq(envelopes.id, r.envelopeId!));
      expect(envelope, `envelope of ${r.id}`).toMatchObject({ status: "SENT", companyId: docs[i]!.companyId });
    }
    // One envelope per company and partition, holding exactly that store's documents.
    const byEnvelope = new Map<string, string[]>();
    for (const r of rows) byEnvelope.set(r.envelopeId!, [...(byEnvelope.get(r.envelopeId!) ?? []), r.id]);
    expect([...byEnvelope.values()].map((ids) => ids.length).sort()).toEqual([1, 1, 2, 2]);
    for (const issuer of issuers) {
      const folios = rows.filter((r) => r.companyId === issuer.companyId).map((r) => r.folio);
      expect(new Set(folios).size).toBe(3);
    }
    expect(polls.map((p) => p.envelope_id).sort()).toEqual([...byEnvelope.keys()].sort());

    // The polls, in one batch too: every document reaches its verdict in its own store.
    for (let round = 0; round < 10 && polls.length > 0; round++) await run(polls.splice(0));
    for (const d of docs) {
      const [r] = await storeFor(env, d.companyId, d.ordinal).db.select({ status: invoices.status }).from(invoices).where(eq(invoices.id, d.id));
      expect(r!.status).toBe("ACCEPTED");
    }
  });
});

describe("one store failing in a batch over two companies", () => {
  /** The namespace, with company `failing`'s stores refusing the read of their SIGNED documents' envelopes. */
  function failingFor(failing: string): Env["DOCUMENT_STORE"] {
    const ns = env.DOCUMENT_STORE;
    const names = new Map<string, string>();
    return {
      idFromName: (n: string) => {
        const id = ns.idFromName(n);
        names.set(id.toString(), n);
        return id;
      },
      get: (id: DurableObjectId) => {
        const stub = ns.get(id) as unknown as StoreRpc;
        if (!names.get(id.toString())?.startsWith(`${failing}:`)) return stub;
        return {
          query: (s: StoreStatement) => (/^select "id", "status", "envelope_id" from "invoices"/.test(s.sql) ? Promise.reject(new Error("store unavailable")) : stub.query(s)),
          batch: (s: StoreStatement[]) => stub.batch(s),
        };
      },
    } as unknown as Env["DOCUMENT_STORE"];
  }

  async function signedIn(issuer: Issuer) {
    const ordinal = (await openStore(env, issuer.companyId)).ordinal;
    const { id } = await receivedIn(issuer, ordinal);
    const store = storeFor(env, issuer.companyId, ordinal).db;
    const deps: StepDeps = { db: createDb(env.DB), store, ordinal, env, authority: siiAuthority(env), now: () => new Date() };
    const [row] = await store.select().from(invoices).where(eq(invoices.id, id));
    await signDocument(deps, await assignFolio(deps, row!));
    return { id, companyId: issuer.companyId, store };
  }

  it("the failed company's SIGNED documents are retried; the other company's are sent and acked", async () => {
    const [a, b] = [await signedIn(await readyIssuer([33], 5)), await signedIn(await readyIssuer([33], 5))];
    const messages = [a, b].map((d) => ({ id: `m-${d.id}`, timestamp: new Date(), attempts: 1, body: invoiceBody(d.id, d.companyId) }));
    const batch = createMessageBatch("dte-issuance", messages);
    await handleIssuanceBatch(batch, { ...quietEnv, DOCUMENT_STORE: failingFor(a.companyId) } as Env, siiAuthority(env));
    const result = await getQueueResult(batch, createExecutionContext());
    expect(result.explicitAcks).toEqual([`m-${b.id}`]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([`m-${a.id}`]);
    expect((await b.store.select().from(invoices).where(eq(invoices.id, b.id)))[0]).toMatchObject({ status: "SENT" });
    expect((await a.store.select().from(invoices).where(eq(invoices.id, a.id)))[0]).toMatchObject({ status: "SIGNED" });
  });
});
