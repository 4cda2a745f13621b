/**
 * Email Sending events (src/reception/sending-events.ts): Cloudflare Email Service reports that a
 * mail did not arrive as an event on a queue subscribed to the sending domain, naming the mail by
 * the id the service gave it. The mails sent from a company's reception address keep that id
 * (domain/companies/company-mail.ts), so a bounced, failed or rejected event makes the delivery to a
 * buyer, or the reply to a supplier, FAILED with what was said, with its event. The events are
 * delivered here through the Worker's queue handler, shaped as the documentation's examples.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { createDb } from "../../src/storage/db/client";
import { indexStore, ordinalOfId, storeFor } from "../../src/storage/db/document-store";
import { invoices } from "../../src/storage/db/schema";
import { applyMailReport } from "../../src/accounts/companies/company-mail";
import { deliveryOf, recordDeliveryReport } from "../../src/invoices/buyer-delivery";
import { recordReplyMailReport, restartReplyMail, sentReplyMail } from "../../src/reception/reply-mail";
import { sentMails } from "../../src/storage/db/document-store/tables";
import { companyControl } from "../../src/accounts/companies/control-cache";
import { receptionEmail, receptionToken } from "../../src/accounts/companies/reception-address";
import { deliveredAt, failureOf, handleSendingEvents, readSendingEvent, sendingEvent } from "../../src/reception/sending-events";
import { respondToDocument } from "../../src/reception/respond";
import { call } from "../helpers/api";
import { recipient as sampleRecipient } from "../helpers/cl-samples";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { envelope, signedDte } from "../sii/helpers";
import { afterDelivery, getDoc, inject, receptionFixture, until, upload, type Receiver } from "./helpers";

const LOS_ANDES = "76086428-5";
let issuer: Issuer;
let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  issuer = await readyIssuer([33]);
  ({ cert, caf33, r } = await receptionFixture());
}, 60_000);

const addressOf = async (companyId: string) => receptionEmail(await receptionToken(createDb(env.DB), companyId), env.RECEPTION_DOMAIN)!;
/** The ids the mail service gave the company's mails about `reference`, oldest first. */
const mailIds = async (companyId: string, reference: string) =>
  (await indexStore(env, companyId).select().from(sentMails).where(eq(sentMails.reference, reference)).orderBy(sentMails.createdAt)).map((m) => m.messageId);

/** An event as the documentation shows it (schema version 1). */
function event(kind: string, messageId: string, sender: string, payload: Record<string, unknown> = {}) {
  return {
    type: `cf.email.sending.message.${kind}`,
    source: { type: "email.sending", zoneId: "023e105f4ecef8ad9ca31a8372d0c353", domain: env.RECEPTION_DOMAIN },
    payload: { eventId: crypto.randomUUID(), messageId, sender, recipient: "dte@losandes.example", subject: "Envio DTE", terminal: true, ...payload },
    metadata: { accountId: "f9f79265f388666de8122cfb508d7776", eventSubscriptionId: "1830c4bb612e43c3af7f4cada31fbf3f", eventSchemaVersion: 1, eventTimestamp: new Date().toISOString() },
  };
}
const bounced = (messageId: string, sender: string) =>
  event("bounced", messageId, sender, {
    delivery: { status: "bounced", provider: "external_smtp", deliveryTimeMs: 2143, smtpStatusCode: "550", smtpEnhancedStatusCode: "5.1.1", smtpResponse: "550 5.1.1 User unknown" },
    bounce: { type: "hard", classification: "permanent_failure", reason: "550 5.1.1 User unknown" },
  });

const deliveredEvent = (messageId: string, sender: string) =>
  event("delivered", messageId, sender, { delivery: { status: "delivered", provider: "external_smtp", deliveryTimeMs: 1234, smtpStatusCode: "250", smtpEnhancedStatusCode: "2.0.0", smtpResponse: "250 2.0.0 OK" } });

/** Delivers `bodies` to the Worker's queue handler as one batch of the events queue; what it acknowledged and retried. */
async function deliver(bodies: unknown[], on: Env = env, queue = "dte-email-events") {
  const batch = createMessageBatch(queue, bodies.map((body, i) => ({ id: `evt-${i}-${crypto.randomUUID()}`, timestamp: new Date(), attempts: queue.endsWith("-dlq") ? 10 : 1, body })));
  const ctx = createExecutionContext();
  if (on === env) await worker.queue!(batch, env, ctx);
  else await handleSendingEvents(batch, on);
  return getQueueResult(batch, ctx);
}

async function delivered(): Promise<any> {
  const res = await issue(issuer, invoiceBody(issuer.rut, "33", { recipient: { ...sampleRecipient, document_number: LOS_ANDES } }));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect((await untilFinal(issuer, res.body.id)).status).toBe("ACCEPTED");
  return afterDelivery(issuer, res.body.id, (d) => d.state === "SENT");
}
const deliveryStates = async (id: string) =>
  (await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'invoice.buyer_delivery' AND payload LIKE ${`%${id}%`} ORDER BY created_at, rowid`)).map((e) => JSON.parse(JSON.parse(e.payload).invoice.buyer_delivery).state);
const deliveredAts = async (id: string) =>
  (await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'invoice.buyer_delivery' AND payload LIKE ${`%${id}%`} ORDER BY created_at, rowid`)).map((e) => JSON.parse(JSON.parse(e.payload).invoice.buyer_delivery).delivered_at ?? null);
const delivery = async (id: string) => (await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key })).body.buyer_delivery;

/** A supplier's document received by upload (its RecepcionEnvio mailed) and accepted (ACD, its replies mailed): its id. */
async function acceptedSupplierDocument(folio: number): Promise<string> {
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  await inject(e);
  const up = await upload(r, e.xml);
  expect(up.status, JSON.stringify(up.body)).toBe(201);
  const id = up.body.documents[0].id;
  const company = (await companyControl(env, r.companyId, Date.now(), true))!.company;
  await respondToDocument(env, undefined, company, id, "ACD", null);
  return id;
}

describe("a delivery to a buyer", () => {
  it("keeps the id the mail service gave it; a bounced event naming it makes the delivery FAILED with the server's words, once", async () => {
    const doc = await delivered();
    const ids = await mailIds(issuer.companyId, doc.id);
    expect(ids).toHaveLength(1);
    const sender = await addressOf(issuer.companyId);
    const first = await deliver([bounced(ids[0]!, sender)]);
    expect(first.explicitAcks).toHaveLength(1);
    expect(first.retryMessages).toEqual([]);
    expect(await delivery(doc.id)).toMatchObject({ state: "FAILED", attempts: 1, email: "dte@losandes.example", message: "Bounced by dte@losandes.example: 5.1.1 550 5.1.1 User unknown" });
    expect(await deliveryStates(doc.id)).toEqual(["SENT", "FAILED"]);
    // The same event again (queues deliver at least once): nothing more.
    expect((await deliver([bounced(ids[0]!, sender)])).explicitAcks).toHaveLength(1);
    expect(await deliveryStates(doc.id)).toEqual(["SENT", "FAILED"]);
  });

  it("a late event about a mail sent again since changes nothing; the same event about the new mail does", async () => {
    const doc = await delivered();
    const again = await call("POST", `${issuer.base}/invoices/${doc.id}/buyer_delivery`, { key: issuer.owner.key });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const ids = await mailIds(issuer.companyId, doc.id);
    expect(ids).toHaveLength(2);
    const sender = await addressOf(issuer.companyId);
    expect(await readSendingEvent(env, bounced(ids[0]!, sender))).toBe("email sending event: about a mail sent again since");
    expect((await delivery(doc.id)).state).toBe("SENT");
    expect(await readSendingEvent(env, bounced(ids[1]!, sender))).toMatch(/^email sending event: Bounced by dte@losandes\.example: 5\.1\.1 550 5\.1\.1 User unknown\. Read onto the delivery of inv_/);
    expect((await delivery(doc.id)).state).toBe("FAILED");
  });

  it("a delivered event records when the buyer's server accepted it, with an invoice.buyer_delivery event, once; a new attempt starts without it, and a late event about the old mail changes nothing", async () => {
    const doc = await delivered();
    expect(doc.buyer_delivery.delivered_at).toBeNull();
    const [id] = await mailIds(issuer.companyId, doc.id);
    const sender = await addressOf(issuer.companyId);
    const accepted = { ...deliveredEvent(id!, sender), metadata: { ...deliveredEvent(id!, sender).metadata, eventTimestamp: "2026-11-29T02:48:57.132Z" } };
    const first = await deliver([accepted]);
    expect(first.explicitAcks).toHaveLength(1);
    expect(first.retryMessages).toEqual([]);
    expect(await delivery(doc.id)).toMatchObject({ state: "SENT", attempts: 1, email: "dte@losandes.example", sent_at: doc.buyer_delivery.sent_at, delivered_at: "2026-11-29T02:48:57.132Z" });
    expect(await deliveryStates(doc.id)).toEqual(["SENT", "SENT"]);
    expect(await deliveredAts(doc.id)).toEqual([null, "2026-11-29T02:48:57.132Z"]);
    // Again (queues deliver at least once), or a later one: nothing more.
    expect(await readSendingEvent(env, accepted)).toMatch(/\(its delivery recorded already: left as it was\)\.$/);
    expect(await deliveredAts(doc.id)).toEqual([null, "2026-11-29T02:48:57.132Z"]);
    // A bounce after the acceptance (a server may accept and bounce later) still fails it; the acceptance stays recorded.
    expect(await readSendingEvent(env, bounced(id!, sender))).toMatch(/Read onto the delivery of inv_\w+ to its buyer\.$/);
    expect(await delivery(doc.id)).toMatchObject({ state: "FAILED", delivered_at: "2026-11-29T02:48:57.132Z" });
    // Sent again: SENT without delivered_at until its own event; the old mail's event is about a mail sent again since.
    const again = await call("POST", `${issuer.base}/invoices/${doc.id}/buyer_delivery`, { key: issuer.owner.key });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.buyer_delivery).toMatchObject({ state: "SENT", attempts: 2, delivered_at: null });
    expect(await readSendingEvent(env, accepted)).toBe("email sending event: about a mail sent again since");
    expect((await delivery(doc.id)).delivered_at).toBeNull();
    const ids = await mailIds(issuer.companyId, doc.id);
    const at = new Date("2026-11-29T03:00:00Z");
    const noStamp = { ...deliveredEvent(ids[1]!, sender), metadata: { eventSchemaVersion: 1, eventTimestamp: "yesterday" } };
    expect(await readSendingEvent(env, noStamp, at)).toMatch(/^email sending event: Delivered at 2026-11-29T03:00:00\.000Z\. Read onto the delivery of inv_/);
    expect((await delivery(doc.id)).delivered_at).toBe("2026-11-29T03:00:00.000Z");
  });

  it("an event about a mail whose record still says PENDING (the attempt that sent it has not recorded SENT yet) is read again later, not dropped", async () => {
    const doc = await delivered();
    const [id] = await mailIds(issuer.companyId, doc.id);
    const sender = await addressOf(issuer.companyId);
    const setState = (state: string) => storeRows(issuer.companyId, sql`UPDATE invoices SET buyer_delivery = json_set(buyer_delivery, '$.state', ${state}) WHERE id = ${doc.id}`);
    await setState("PENDING");
    const early = await deliver([deliveredEvent(id!, sender), bounced(id!, sender)]);
    expect(early.explicitAcks).toEqual([]);
    expect(early.retryMessages).toHaveLength(2);
    expect(await delivery(doc.id)).toMatchObject({ state: "PENDING", delivered_at: null });
    // The attempt records SENT: the same event, read again, is recorded.
    await setState("SENT");
    expect((await deliver([deliveredEvent(id!, sender)])).explicitAcks).toHaveLength(1);
    expect((await delivery(doc.id)).delivered_at).not.toBeNull();
  });

  it("an event still unread after its 10 tries is dead-lettered to the company that sent the mail; sent back once the mail is SENT, it is read onto it", async () => {
    const doc = await delivered();
    const [id] = await mailIds(issuer.companyId, doc.id);
    const sender = await addressOf(issuer.companyId);
    await storeRows(issuer.companyId, sql`UPDATE invoices SET buyer_delivery = json_set(buyer_delivery, '$.state', 'PENDING') WHERE id = ${doc.id}`);
    const late = { ...deliveredEvent(id!, sender), metadata: { eventSchemaVersion: 1, eventTimestamp: "2026-11-29T05:00:00Z" } };
    const stranger = deliveredEvent(id!, "noreply@example.com");
    const dead = await deliver([late, stranger, "not an event"], env, "dte-email-events-dlq");
    expect(dead.ackAll).toBe(true);
    expect(dead.retryMessages).toEqual([]);
    // Listed to the company whose address sent the mail, as the mail service sent it; the others are kept unlisted.
    const listed = await call("GET", `${issuer.base}/dead-letters?queue=email_events&status=DEAD`, { key: issuer.owner.key });
    expect(listed.status).toBe(200);
    const letters = listed.body.data.filter((d: any) => d.body?.payload?.messageId === id);
    expect(letters).toEqual([expect.objectContaining({ queue: "email_events", attempts: 10, body: late, status: "DEAD" })]);
    const orphans = await env.DB.prepare("SELECT body FROM dead_letters WHERE queue = 'email_events' AND company_id = '' ORDER BY body").all<{ body: string }>();
    expect(orphans.results.map((o) => o.body)).toEqual(expect.arrayContaining([JSON.stringify(stranger), JSON.stringify("not an event")]));
    expect((await delivery(doc.id)).delivered_at).toBeNull();
    // The attempt records SENT at last; sent back, the event is read onto the mail.
    await storeRows(issuer.companyId, sql`UPDATE invoices SET buyer_delivery = json_set(buyer_delivery, '$.state', 'SENT') WHERE id = ${doc.id}`);
    const redriven = await call("POST", `${issuer.base}/dead-letters/${letters[0].id}/redrive`, { key: issuer.owner.key });
    expect(redriven.status, JSON.stringify(redriven.body)).toBe(202);
    const after = await until(() => delivery(doc.id), (d) => d.delivered_at !== null, "the re-driven event read onto the delivery");
    expect(after).toMatchObject({ state: "SENT", delivered_at: "2026-11-29T05:00:00.000Z" });
  });

  it("deferred and complained events change nothing; nor does an event naming no mail of the sender's, another company's address, or no company", async () => {
    const doc = await delivered();
    const [id] = await mailIds(issuer.companyId, doc.id);
    const sender = await addressOf(issuer.companyId);
    const unchanged = [
      deliveredEvent("0101018f7d0c4d9a-msg-deadbeef", sender),
      deliveredEvent(id!, await addressOf(r.companyId)),
      event("deferred", id!, sender, { terminal: false, bounce: { type: "soft", reason: "451 4.2.0 Temporary mailbox error" } }),
      event("complained", id!, sender, { complaint: { type: "abuse" } }),
      bounced("0101018f7d0c4d9a-msg-bounced", sender),
      bounced(id!, await addressOf(r.companyId)),
      bounced(id!, `dte+nosuchtoken@${env.RECEPTION_DOMAIN}`),
      bounced(id!, "noreply@example.com"),
    ];
    const result = await deliver(unchanged);
    expect(result.explicitAcks).toHaveLength(unchanged.length);
    expect(await delivery(doc.id)).toMatchObject({ state: "SENT", delivered_at: null });
    expect(await deliveryStates(doc.id)).toEqual(["SENT"]);
  });
});

describe("a reply to a supplier", () => {
  it("a rejected event makes the response's reply mail FAILED with the reason, as a bounce does", async () => {
    const id = await acceptedSupplierDocument(471);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "SENT", attempts: 1 });
    const [mailId] = await mailIds(r.companyId, `${id}.acd`);
    const rejected = event("rejected", mailId!, await addressOf(r.companyId), { delivery: { status: "rejected" }, rejection: { reason: "suppressed", party: "recipient", detail: "Recipient is suppressed" } });
    expect((await deliver([rejected])).explicitAcks).toHaveLength(1);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "FAILED", attempts: 1, message: "Refused by the mail service before delivery to dte@losandes.example: Recipient is suppressed" });
    const failed = await storeRows(r.companyId, sql`SELECT 1 FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`);
    expect(failed).toHaveLength(1);
  });

  it("a delivered event records when the supplier's server accepted the reply mail, without an event; the file's RecepcionEnvio too", async () => {
    const id = await acceptedSupplierDocument(472);
    const sender = await addressOf(r.companyId);
    const [mailId] = await mailIds(r.companyId, `${id}.acd`);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "SENT", delivered_at: null });
    const accepted = { ...deliveredEvent(mailId!, sender), metadata: { eventSchemaVersion: 1, eventTimestamp: "2026-11-29T01:02:03Z" } };
    expect((await deliver([accepted])).explicitAcks).toHaveLength(1);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "SENT", attempts: 1, delivered_at: "2026-11-29T01:02:03.000Z" });
    expect(await storeRows(r.companyId, sql`SELECT 1 FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`)).toEqual([]);
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "SENT", delivered_at: null });
    const [ackId] = await mailIds(r.companyId, `${id}.ack`);
    await deliver([{ ...deliveredEvent(ackId!, sender), metadata: { eventSchemaVersion: 1, eventTimestamp: "2026-11-29T01:02:04Z" } }]);
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "SENT", delivered_at: "2026-11-29T01:02:04.000Z" });
  });
});

describe("a report read before the mail changed", () => {
  /** A reader that returns `stale` first (what a report read before the change), then what `now` reads. */
  const staleFirst = <T>(stale: T, now: () => Promise<T | null>) => {
    let reads = 0;
    return () => (reads++ === 0 ? Promise.resolve(stale) : now());
  };

  it("never writes over a buyer delivery sent again meanwhile: read again, it finds the new attempt's mail", async () => {
    const doc = await delivered();
    const db = storeFor(env, issuer.companyId, ordinalOfId(doc.id)!).db;
    const readRow = async () => (await db.select().from(invoices).where(eq(invoices.id, doc.id)))[0]!;
    const stale = await readRow();
    const staleMail = deliveryOf(stale)!;
    // Sent again between the report's reading and its writing: SENT, attempt 2, no delivered_at yet.
    const again = await call("POST", `${issuer.base}/invoices/${doc.id}/buyer_delivery`, { key: issuer.owner.key });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const events = await deliveryStates(doc.id);
    expect(await recordDeliveryReport(db, stale, { ...staleMail, state: "FAILED", message: "550 old mail bounced" }, new Date())).toBe(false);
    expect(await delivery(doc.id)).toMatchObject({ state: "SENT", attempts: 2, message: null });
    expect(await deliveryStates(doc.id)).toEqual(events);
    // The whole report: the stale reading loses its write, the next reading is of the new mail, which the report is then about.
    const fresh = async () => ({ db, row: await readRow(), mail: deliveryOf(await readRow())! });
    const outcome = await applyMailReport("delivery", staleFirst({ db, row: stale, mail: staleMail }, fresh), ({ row, mail }) => recordDeliveryReport(db, row, { ...mail, delivered_at: "2026-11-29T04:00:00.000Z" }, new Date()));
    expect(outcome).toBe("DELIVERED");
    expect(await delivery(doc.id)).toMatchObject({ state: "SENT", attempts: 2, delivered_at: "2026-11-29T04:00:00.000Z" });
  });

  it("never writes over a reply mail started again meanwhile; the new mailing is left to its attempt", async () => {
    const id = await acceptedSupplierDocument(473);
    const before = (await sentReplyMail(env, r.companyId, id, "ACD"))!;
    expect(before.mail).toMatchObject({ state: "SENT", attempts: 1 });
    expect(await restartReplyMail(env, before.row, "ACD", null, ["SENT", "FAILED", null])).toBe(true);
    expect(await recordReplyMailReport(env, before.row, "ACD", { ...before.mail, state: "FAILED", message: "550 old mail bounced", next_attempt_at: null }, before.mail)).toBe(false);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "PENDING", attempts: 0, message: null });
    expect(await storeRows(r.companyId, sql`SELECT 1 FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`)).toEqual([]);
    // A delivered report read before the restart: read again, the mail is PENDING (a new attempt under way), left as it is.
    const outcome = await applyMailReport("delivery", staleFirst(before, () => sentReplyMail(env, r.companyId, id, "ACD")), ({ row, mail }) => recordReplyMailReport(env, row, "ACD", { ...mail, delivered_at: "2026-11-29T04:00:00.000Z" }, mail));
    expect(outcome).toBe("PENDING");
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "PENDING", attempts: 0 });
    expect((await getDoc(r, id)).body.responses[0].mail.delivered_at ?? null).toBeNull();
    // Over the mail as it is, the same report is written.
    const now = (await sentReplyMail(env, r.companyId, id, "ACD"))!;
    expect(await recordReplyMailReport(env, now.row, "ACD", { ...now.mail, message: "checked" }, now.mail)).toBe(true);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "PENDING", message: "checked" });
  });

  it("a mail that keeps changing under a report is left PENDING after three readings (the report is read again later)", async () => {
    const reads: number[] = [];
    const outcome = await applyMailReport("failure", async () => (reads.push(reads.length), { mail: { state: "SENT" } }), async () => false);
    expect(outcome).toBe("PENDING");
    expect(reads).toEqual([0, 1, 2]);
    expect(await applyMailReport("failure", async () => null, async () => true)).toBeNull();
    expect(await applyMailReport("delivery", async () => ({ mail: { state: "SENT", delivered_at: "x" } }), async () => true)).toBe("RECORDED");
    expect(await applyMailReport("failure", async () => ({ mail: { state: "FAILED" } }), async () => true)).toBe("UNCHANGED");
    expect(await applyMailReport("failure", async () => ({ mail: { state: "SENT" } }), async () => true)).toBe("FAILED");
  });
});

describe("hostile or unreadable events", () => {
  it("are acknowledged and logged, never thrown: no body, not JSON objects, missing or oversized fields", async () => {
    const sender = await addressOf(issuer.companyId);
    const bad = [null, "cf.email.sending.message.bounced", 42, [], {}, { type: "cf.email.sending.message.bounced" }, { type: "cf.email.sending.message.bounced", payload: { sender } }, bounced("x".repeat(301), sender), bounced("", sender), { ...bounced("m", sender), type: 7 }];
    const result = await deliver(bad);
    expect(result.explicitAcks).toHaveLength(bad.length);
    expect(result.retryMessages).toEqual([]);
    for (const b of bad) expect(await readSendingEvent(env, b)).toBe("email sending event not understood");
  });

  it("an event read while D1 is unavailable is retried, not lost", async () => {
    const down = { ...env, DB: { prepare: () => { throw new Error("D1 is unavailable"); }, batch: async () => { throw new Error("D1 is unavailable"); } } } as unknown as Env;
    const result = await deliver([bounced("0101018f7d0c4d9a-msg-bounced", await addressOf(issuer.companyId))], down);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toHaveLength(1);
  });

  it("the failure's words: a soft bounce says the service gave up; a failed event names its reason; fields are cut and kept on one line", () => {
    const sender = "dte+x@dte.localhost";
    const soft = sendingEvent.parse(event("bounced", "m", sender, { bounce: { type: "soft", reason: "452 4.2.2 Mailbox full" } }));
    expect(failureOf(soft)).toBe("Bounced by dte@losandes.example: 452 4.2.2 Mailbox full (temporary failures until the mail service gave up)");
    expect(failureOf(sendingEvent.parse(event("failed", "m", sender, { failure: { reason: "delivery_failed" } })))).toBe("Not delivered to dte@losandes.example: the mail service failed (delivery_failed)");
    const long = sendingEvent.parse(event("bounced", "m", sender, { bounce: { reason: `550\r\n  ${"x".repeat(1000)}` } }));
    expect(failureOf(long)).toMatch(/^Bounced by dte@losandes\.example: 550 x+$/);
    expect(failureOf(long)!.length).toBeLessThan(400);
    expect(failureOf(sendingEvent.parse(event("delivered", "m", sender)))).toBeNull();
    // A delivered event's time: its timestamp, else (missing, unreadable, not text, no metadata) the time it is read; none for other events.
    const now = new Date("2026-11-29T05:00:00Z");
    const at = (metadata: unknown) => deliveredAt(sendingEvent.parse({ ...event("delivered", "m", sender), metadata }), now);
    expect(at({ eventTimestamp: "2026-11-29T04:59:58.5-03:00" })).toBe("2026-11-29T07:59:58.500Z");
    for (const bad of [{ eventTimestamp: "2026-11-29" }, { eventTimestamp: 1764392400000 }, { eventTimestamp: "x".repeat(100) }, {}, "metadata", undefined]) expect(at(bad)).toBe("2026-11-29T05:00:00.000Z");
    expect(deliveredAt(soft, now)).toBeNull();
  });
});
