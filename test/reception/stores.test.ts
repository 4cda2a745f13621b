/**
 * Received documents and inbound messages in the company's document stores: a document of
 * a previous month's partition is read, listed, downloaded, answered and marked by the deadline job
 * where it lives; the list pages across partitions with the same pages and `total`; a register-only
 * document is filled in its own partition after a roll-over; the duplicate check is one claim in the
 * company's index store, with exactly one winner under concurrency; the deadline job is a task of each
 * store's alarm, set at the earliest moment one of its documents needs an action, and the one-time
 * walk arms the stores from before the change closed in the last 45 days only.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { closePartition, indexStore, partitionedId, partitionsOf, storeFor } from "../../src/storage/db/document-store";
import { receivedKeys } from "../../src/storage/db/document-store/tables";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { ReceptionDeadlines } from "../../src/operations/objects/document-store/reception-deadlines";
import { pollReceptionRegister } from "../../src/reception/cron";
import { APPROACHING_MS, verifyInbound, xmlDocumentBytes } from "../../src/countries/cl";
import { EVENT_RETENTION_MS } from "../../src/webhooks/retention";
import { intakeFile } from "../../src/reception/intake";
import { claimKeys } from "../../src/reception/keys";
import { sha256Hex } from "../../src/lib/crypto";
import { call, expectError } from "../helpers/api";
import { envelope, ISSUER_RUT, signedDte } from "../sii/helpers";
import { afterAlarms, alarmAt, getDoc, inject, receiver, receptionFixture, respond, storeStub, upload, type Receiver } from "./helpers";

const DAY = 86_400_000;
/** No deadline work left: no alarm, or only the one that deletes the store's fanned-out events after their 30 days of retention. */
const noDeadlineAlarm = (at: number | null) => at === null || at > Date.now() + EVENT_RETENTION_MS - DAY;
const LAST_MONTH = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15));

let cert: SigningCredentials;
let caf33: Caf;

beforeAll(async () => {
  ({ cert, caf33 } = await receptionFixture());
});

async function companyOf(r: Receiver) {
  return (await env.DB.prepare("SELECT id, tax_id AS taxId, livemode FROM companies WHERE id = ?").bind(r.companyId).first<{ id: string; taxId: string; livemode: number }>())!;
}

/** A received document's row, read from one partition's store directly. */
async function rowIn(r: Receiver, ordinal: number, id: string) {
  const [row] = (await storeFor(env, r.companyId, ordinal).db.all(sql`SELECT id, response_state, sii_received_at, xml_sha256 FROM received_documents WHERE id = ${id}`)) as { id: string; response_state: string; sii_received_at: string | null; xml_sha256: string | null }[];
  return row;
}

const eventsIn = async (r: Receiver, ordinal: number, type: string) =>
  ((await storeFor(env, r.companyId, ordinal).db.all(sql`SELECT payload FROM event_outbox WHERE type = ${type}`)) as { payload: string }[]).map((e) => JSON.parse(e.payload).id);

const list = async (r: Receiver, query: string) => (await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&${query}`, { key: r.owner.key })).body;

describe("a received document in a previous month's partition", () => {
  it("is read, downloaded, listed, answered and marked accepted by law where it lives", async () => {
    const r = await receiver();
    const company = await companyOf(r);
    const [e1, e2, e3] = [await envelope([await signedDte(caf33, 401, cert)], cert), await envelope([await signedDte(caf33, 402, cert)], cert), await envelope([await signedDte(caf33, 403, cert)], cert)];
    await inject(e1, new Date(Date.now() - DAY));
    await inject(e2, new Date(Date.now() - 9 * DAY));
    await inject(e3);
    // Last month: the company's first partition.
    const [a] = (await intakeFile(env, { ...company, livemode: !!company.livemode }, e1.xml, { channel: "UPLOAD", message: null, now: LAST_MONTH })).documents;
    const [b] = (await intakeFile(env, { ...company, livemode: !!company.livemode }, e2.xml, { channel: "UPLOAD", message: null, now: LAST_MONTH })).documents;
    expect([a!.id, b!.id]).toEqual([expect.stringMatching(/^rcv_p1_/), expect.stringMatching(/^rcv_p1_/)]);
    // This month: the upload closes last month's partition and opens the next.
    const c = (await upload(r, e3.xml)).body.documents[0];
    expect(c.id).toMatch(/^rcv_p2_/);
    expect((await partitionsOf(env, r.companyId)).map((p) => [p.ordinal, p.closedReason])).toEqual([[2, null], [1, "MONTH_END"]]);

    expect((await getDoc(r, a!.id)).body).toMatchObject({ id: a!.id, folio: 401, xml_status: "RECEIVED" });
    const xml = await call("POST", `/api/reception/invoices/${a!.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    expect(xml.status).toBe(200);
    // Oldest first across partitions, the same pages and total as one table.
    const all = await list(r, "per_page=10");
    expect([all.total, all.data.map((d: any) => d.folio)]).toEqual([3, [401, 402, 403]]);
    for (const [page, folio] of [[1, 401], [2, 402], [3, 403]]) {
      const one = await list(r, `per_page=1&page=${page}`);
      expect([one.total, one.data.map((d: any) => d.folio)]).toEqual([3, [folio]]);
    }
    expect((await list(r, "per_page=2&page=2")).data.map((d: any) => d.folio)).toEqual([403]);
    expect((await list(r, "folio=402")).data.map((d: any) => d.id)).toEqual([b!.id]);
    expect((await list(r, `issuer_tax_id=${ISSUER_RUT}&document_type=33&verification=VERIFIED`)).total).toBe(3);

    // The register gives each its SII reception time, in its own store; then the deadline job.
    await pollReceptionRegister(env, new Date());
    expect((await rowIn(r, 1, a!.id))!.sii_received_at).not.toBeNull();
    // The poll's write armed the closed partition's store: its alarm marks the document where it lives.
    await afterAlarms(r.companyId, () => rowIn(r, 1, b!.id), (row) => row?.response_state === "ACCEPTED_BY_LAW", "accepted by law by the store's alarm");
    expect(await eventsIn(r, 1, "received_document.deadline_passed")).toEqual([b!.id]);
    expect((await list(r, "response_state=ACCEPTED_BY_LAW")).data.map((d: any) => d.id)).toEqual([b!.id]);
    expect((await list(r, `deadline_before=${encodeURIComponent(new Date(Date.now() + 7.5 * DAY).toISOString())}`)).data.map((d: any) => d.folio)).toEqual([401, 402]);
    expectError(await respond(r, b!.id, "RCD"), 422, "RECEPTION_DEADLINE_PASSED");

    // Answered in its partition, with its event there; nothing of it in the open one.
    const acd = await respond(r, a!.id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(await rowIn(r, 1, a!.id)).toMatchObject({ response_state: "ACCEPTED" });
    expect(await eventsIn(r, 1, "received_document.response_recorded")).toEqual([a!.id]);
    expect(await rowIn(r, 2, a!.id)).toBeUndefined();
    const reply = await call("POST", `/api/reception/invoices/${a!.id}/download/resultado_dte?company_id=${r.companyId}`, { key: r.owner.key });
    expect(reply.status).toBe(200);

    // The same XML again is that document; a different one with its folio is a duplicate in the open partition.
    expect((await upload(r, e1.xml)).body.documents[0]).toMatchObject({ id: a!.id, outcome: "ALREADY_RECEIVED" });
    const other = await envelope([await signedDte(caf33, 401, cert, "33", { items: [{ quantity: 9, unit_price: 1000, description: "Otro" }] })], cert);
    const dup = (await upload(r, other.xml)).body.documents[0];
    expect(dup).toMatchObject({ outcome: "DUPLICATE", verification: { reception_status: 4, duplicate: true } });
    expect(dup.id).toMatch(/^rcv_p2_/);
    expect((await list(r, "folio=401")).data.map((d: any) => d.id)).toEqual([a!.id, dup.id]);
  });

  it("a document the register listed before its XML is filled in its own partition after a roll-over", async () => {
    const r = await receiver();
    const e = await envelope([await signedDte(caf33, 410, cert)], cert);
    await inject(e, undefined, true);
    await pollReceptionRegister(env, new Date());
    const [listed] = (await list(r, "folio=410")).data;
    expect(listed).toMatchObject({ xml_status: "NOT_YET_RECEIVED", id: expect.stringMatching(/^rcv_p1_/) });
    await closePartition(env, r.companyId, 1, "SIZE", 1);
    // A second poll finds the same placeholder (the index store): no second row.
    await env.DB.prepare("UPDATE reception_addresses SET polled_at = NULL WHERE company_id = ?").bind(r.companyId).run();
    await pollReceptionRegister(env, new Date());
    const up = await upload(r, e.xml);
    expect(up.body.documents[0]).toMatchObject({ id: listed.id, outcome: "NEW", xml_status: "RECEIVED", sii_received_at: listed.sii_received_at });
    expect(await rowIn(r, 1, listed.id)).toMatchObject({ xml_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await storeFor(env, r.companyId, 2).db.all(sql`SELECT id FROM received_documents`)).toEqual([]);
    expect((await list(r, "folio=410")).total).toBe(1);
    // The upload's message is in the open partition.
    expect(await storeFor(env, r.companyId, 2).db.all(sql`SELECT channel, outcome, documents FROM inbound_messages`)).toEqual([{ channel: "UPLOAD", outcome: "STORED", documents: 1 }]);
  });
});

describe("the duplicate check: a claim in the company's index store", () => {
  it("concurrent intakes of the same XML: exactly one stores it, the others find it; one row", async () => {
    const r = await receiver();
    const e = await envelope([await signedDte(caf33, 420, cert)], cert);
    const results = await Promise.all(Array.from({ length: 6 }, () => upload(r, e.xml)));
    for (const res of results) expect(res.status, JSON.stringify(res.body)).toBe(201);
    const docs = results.map((res) => res.body.documents[0]);
    expect(docs.filter((d) => d.outcome === "NEW")).toHaveLength(1);
    expect(docs.filter((d) => d.outcome === "ALREADY_RECEIVED")).toHaveLength(5);
    expect(new Set(docs.map((d) => d.id)).size).toBe(1);
    expect((await list(r, "folio=420")).total).toBe(1);
    expect(await eventsIn(r, 1, "received_document.received")).toEqual([docs[0].id]);
  });

  it("concurrent intakes of different XMLs with the same issuer, type and folio: exactly one is the original", async () => {
    const r = await receiver();
    const variants = await Promise.all([1, 2, 3, 4, 5].map(async (q) => envelope([await signedDte(caf33, 421, cert, "33", { items: [{ quantity: q, unit_price: 1000, description: `Variante ${q}` }] })], cert)));
    const results = await Promise.all(variants.map((v) => upload(r, v.xml)));
    const docs = results.map((res) => res.body.documents[0]);
    expect(docs.map((d) => d.outcome).sort()).toEqual(["DUPLICATE", "DUPLICATE", "DUPLICATE", "DUPLICATE", "NEW"]);
    const listed = (await list(r, "folio=421")).data;
    expect(listed).toHaveLength(5);
    expect(listed.filter((d: any) => !d.verification.duplicate)).toHaveLength(1);
  });

  it("concurrent claims of one key: one NEW, every other one HELD by it", async () => {
    const companyId = (await receiver(undefined, false)).companyId;
    const key = { issuerRut: ISSUER_RUT, documentType: 33, folio: 1, sha: await sha256Hex(new TextEncoder().encode("x")) };
    const ids = Array.from({ length: 10 }, () => partitionedId("rcv", 1));
    const claims = (await Promise.all(ids.map((id) => claimKeys(env, companyId, [key], [id])))).map((c) => c[0]!);
    const winners = claims.filter((c) => c.kind === "NEW");
    expect(winners).toHaveLength(1);
    for (const c of claims) expect(c).toMatchObject({ documentId: winners[0]!.documentId, duplicate: false });
    expect(await indexStore(env, companyId).select().from(receivedKeys)).toHaveLength(1);
  });

  it("an intake that died after its claim: the next intake of that XML stores it under the claimed id", async () => {
    const r = await receiver();
    const d = await signedDte(caf33, 422, cert);
    const e = await envelope([d], cert);
    const claimed = partitionedId("rcv", 1);
    const [claim] = await claimKeys(env, r.companyId, [{ issuerRut: ISSUER_RUT, documentType: 33, folio: 422, sha: await sha256Hex(xmlDocumentBytes((await verifyInbound(e.xml, { mode: "simulator" })).documents[0]!.xml).bytes) }], [claimed]);
    expect(claim!.kind).toBe("NEW");
    const res = await upload(r, e.xml);
    expect(res.body.documents[0]).toMatchObject({ id: claimed, outcome: "NEW" });
    expect((await getDoc(r, claimed)).status).toBe(200);
  });
});

/** A company's received document in its open partition, its SII reception time set `daysAgo` days ago (the write the register poll makes). */
async function receivedAgo(r: Receiver, folio: number, daysAgo: number) {
  const company = await companyOf(r);
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  const received = new Date(Date.now() - daysAgo * DAY).toISOString();
  await inject(e, new Date(received));
  const [doc] = (await intakeFile(env, { ...company, livemode: !!company.livemode }, e.xml, { channel: "UPLOAD", message: null })).documents;
  const ordinal = Number(/_p(\d+)_/.exec(doc!.id)![1]);
  const deadline = new Date(Date.parse(received) + 8 * DAY).toISOString();
  await storeFor(env, r.companyId, ordinal).db.run(sql`UPDATE received_documents SET sii_received_at = ${received}, response_deadline = ${deadline} WHERE id = ${doc!.id}`);
  return { id: doc!.id, ordinal, deadline: Date.parse(deadline) };
}

describe("the deadline job: a task of the store's alarm", () => {
  it("a document without its SII time sets no alarm; its SII time sets it at 2 days before the deadline; a response moves it to the next document", async () => {
    const r = await receiver();
    const company = await companyOf(r);
    const e = await envelope([await signedDte(caf33, 450, cert)], cert);
    // Already in the simulated register (sent by its issuer), so the intake does not register it
    // itself (test-register.ts): its SII time comes with the register's poll, not yet run.
    await inject(e);
    const [unknown] = (await intakeFile(env, { ...company, livemode: !!company.livemode }, e.xml, { channel: "UPLOAD", message: null })).documents;
    const ordinal = Number(/_p(\d+)_/.exec(unknown!.id)![1]);
    await afterAlarms(r.companyId, () => alarmAt(r.companyId, ordinal), noDeadlineAlarm, "no deadline alarm");

    const later = await receivedAgo(r, 451, 1);
    expect(later.ordinal).toBe(ordinal);
    // (The intake's event is announced by the alarm at once and fanned out; the alarm then sets the deadline's time.)
    const settled = (at: number) => afterAlarms(r.companyId, () => alarmAt(r.companyId, ordinal), (t) => t === at, `the alarm at ${new Date(at).toISOString()}`);
    await settled(later.deadline - APPROACHING_MS);
    // An earlier document brings the alarm forward.
    const first = await receivedAgo(r, 452, 3);
    await settled(first.deadline - APPROACHING_MS);
    // An alarm that fires early changes nothing and comes back at the same time.
    expect(await runDurableObjectAlarm(storeStub(r.companyId, ordinal))).toBe(true);
    expect(await eventsIn(r, ordinal, "received_document.deadline_approaching")).toEqual([]);
    expect(await alarmAt(r.companyId, ordinal)).toBe(first.deadline - APPROACHING_MS);

    // The response records its event (announced by the alarm at once); the alarm then moves to the other document.
    const acd = await respond(r, first.id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    await settled(later.deadline - APPROACHING_MS);
    expect(await rowIn(r, ordinal, first.id)).toMatchObject({ response_state: "ACCEPTED" });
  });

  it("2 days left: the approaching event, then the alarm waits for the deadline; past it: accepted by law, then no alarm", async () => {
    const r = await receiver();
    const soon = await receivedAgo(r, 453, 6.5);
    await afterAlarms(r.companyId, () => alarmAt(r.companyId, soon.ordinal), (at) => at === soon.deadline, "the alarm waits for the deadline");
    expect(await eventsIn(r, soon.ordinal, "received_document.deadline_approaching")).toEqual([soon.id]);
    expect(await rowIn(r, soon.ordinal, soon.id)).toMatchObject({ response_state: "PENDING" });

    // The deadline passes (its SII time moved back, as if 9 days had gone by).
    const gone = new Date(Date.now() - DAY).toISOString();
    await storeFor(env, r.companyId, soon.ordinal).db.run(sql`UPDATE received_documents SET response_deadline = ${gone} WHERE id = ${soon.id}`);
    await afterAlarms(r.companyId, () => rowIn(r, soon.ordinal, soon.id), (row) => row?.response_state === "ACCEPTED_BY_LAW", "accepted by law by the store's alarm");
    expect(await eventsIn(r, soon.ordinal, "received_document.deadline_passed")).toEqual([soon.id]);
    // The approaching event was recorded once; both are fanned out from the store, none went to D1.
    expect(await eventsIn(r, soon.ordinal, "received_document.deadline_approaching")).toEqual([soon.id]);
    const fannedOut = () => storeFor(env, r.companyId, soon.ordinal).db.all<{ type: string }>(sql`SELECT type FROM event_outbox WHERE type LIKE 'received_document.deadline_%' AND dispatched_at IS NOT NULL ORDER BY type`).then((x) => x.map((e) => e.type));
    await afterAlarms(r.companyId, fannedOut, (types) => types.length === 2, "both events fanned out");
    expect(await fannedOut()).toEqual(["received_document.deadline_approaching", "received_document.deadline_passed"]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM event_outbox WHERE company_id = ?").bind(r.companyId).first("n")).toBe(0);
    expect(noDeadlineAlarm(await afterAlarms(r.companyId, () => alarmAt(r.companyId, soon.ordinal), noDeadlineAlarm, "no deadline alarm left"))).toBe(true);
  });

  it("one alarm marks at most its budget; the rest waits for the next, due at once", async () => {
    const r = await receiver();
    // Due in a day (their approaching events are recorded by the alarm meanwhile); the runs below look 2 days ahead.
    const first = await receivedAgo(r, 440, 7);
    const store = storeFor(env, r.companyId, first.ordinal).db;
    // Eleven more overdue documents in the same store: clones with other ids and folios.
    const [row] = (await store.all(sql`SELECT * FROM received_documents WHERE id = ${first.id}`)) as Record<string, unknown>[];
    const ids = [first.id];
    for (let k = 1; k <= 11; k++) {
      const clone = { ...row, id: partitionedId("rcv", first.ordinal), folio: 9000 + k };
      const cols = Object.keys(clone);
      await store.$client.prepare(`INSERT INTO received_documents (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).bind(...cols.map((k2) => clone[k2 as keyof typeof clone] ?? null)).run();
      ids.push(clone.id);
    }
    const marked = async () => (await Promise.all(ids.map(async (id) => (await rowIn(r, first.ordinal, id))?.response_state === "ACCEPTED_BY_LAW"))).filter(Boolean).length;
    const stub = storeStub(r.companyId, first.ordinal);
    const runWithBudget = () => runInDurableObject(stub, async (instance: DocumentStore, state: DurableObjectState) => {
      const task = new ReceptionDeadlines(state.storage.sql, instance, 5);
      await task.run(ahead);
      return task.nextAt();
    });
    const ahead = Date.now() + 2 * DAY;
    expect(await runWithBudget()).toBeLessThanOrEqual(ahead);
    expect(await marked()).toBe(5);
    expect(await runWithBudget()).toBeLessThanOrEqual(ahead);
    expect(await marked()).toBe(10);
    expect(await runWithBudget()).toBeNull();
    expect(await marked()).toBe(12);
    expect(await eventsIn(r, first.ordinal, "received_document.deadline_passed")).toHaveLength(12);
  });
});
