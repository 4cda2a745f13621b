/**
 * The mailing of the replies to the supplier (src/reception/reply-mail.ts): recorded before it is
 * attempted, attempted at once, tried again by the issuance queue when the mail service refuses it,
 * FAILED with its event after the last attempt; and two answers sent at once both kept.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { companyControl } from "../../src/accounts/companies/control-cache";
import { intakeFile } from "../../src/reception/intake";
import { closePartition, ordinalOfId, storeFor } from "../../src/storage/db/document-store";
import { pollReceptionRegister } from "../../src/reception/cron";
import { receivedDocuments } from "../../src/storage/db/schema";
import { overdueMailsIn, REPLY_MAIL_STALE_MS } from "../../src/reception/overdue-mails";
import { attemptReplyMail, REPLY_MAIL_ATTEMPTS, replyMailBody, replyMailWait } from "../../src/reception/reply-mail";
import { respondToDocument } from "../../src/reception/respond";
import { storeRows } from "../helpers/store";
import { envelope, signedDte } from "../sii/helpers";
import { call } from "../helpers/api";
import { alarmAt, getDoc, inject, receiver, receptionFixture, respond, storeStub, until, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

/** The Worker's bindings with a mail service that refuses every message. */
const refused: Env = { ...env, SEND_EMAIL: { send: async () => { throw new Error("550 5.1.1 mailbox unavailable"); } } as unknown as SendEmail };

async function received(folio: number): Promise<string> {
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  await inject(e);
  const res = await upload(r, e.xml);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.documents[0].id;
}

const company = async () => (await companyControl(env, r.companyId, Date.now(), true))!.company;

const mailEvents = (id: string, companyId = r.companyId) => storeRows<{ payload: string }>(companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`);

/** A queue that refuses every message. */
const noQueue = { send: async () => { throw new Error("queue unavailable"); }, sendBatch: async () => { throw new Error("queue unavailable"); } } as unknown as Queue;
/** A mail service that refuses and a queue that refuses: the first attempt fails and no next one is queued. */
const doubleFault: Env = { ...refused, ISSUANCE_QUEUE: noQueue };

/** The document's row in its store. */
const storeDb = (id: string) => storeFor(env, r.companyId, ordinalOfId(id)!).db;
const rowOf = async (id: string) => (await storeDb(id).select().from(receivedDocuments).where(eq(receivedDocuments.id, id)).get())!;

/**
 * Moves the document's mail times `ms` into the past, as if that long had passed: each mail's
 * next_attempt_at and the row's mail_due_at, written through its store (which sets its alarm from them).
 */
async function age(id: string, ms: number): Promise<void> {
  const row = await rowOf(id);
  const back = (t: string | null | undefined) => (t ? new Date(Date.parse(t) - ms).toISOString() : t);
  const file = row.receivedFile ? JSON.parse(row.receivedFile) : null;
  if (file?.acknowledgment?.mail) file.acknowledgment.mail.next_attempt_at = back(file.acknowledgment.mail.next_attempt_at);
  const responses = JSON.parse(row.responses).map((e: any) => (e.mail ? { ...e, mail: { ...e.mail, next_attempt_at: back(e.mail.next_attempt_at) } } : e));
  await storeDb(id).update(receivedDocuments).set({ receivedFile: file && JSON.stringify(file), responses: JSON.stringify(responses), mailDueAt: back(row.mailDueAt) }).where(eq(receivedDocuments.id, id));
}

describe("reply mails", () => {
  it("a response's replies: recorded PENDING, then SENT by the attempt made at once", async () => {
    const id = await received(301);
    const acd = await respond(r, id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(acd.body.responses[0].mail).toMatchObject({ state: expect.stringMatching(/^(PENDING|SENT)$/) });
    const doc = await until(async () => (await getDoc(r, id)).body, (d) => d.responses[0].mail.state === "SENT", "the ACD's mail");
    expect(doc.responses[0].mail).toEqual({ state: "SENT", attempts: 1, sent_at: expect.any(String), message: null, next_attempt_at: null, delivered_at: null });
    // The file's RecepcionEnvio, mailed at intake, says the same.
    expect(doc.received_file.acknowledgment.mail).toEqual({ state: "SENT", attempts: 1, sent_at: expect.any(String), message: null, next_attempt_at: null, delivered_at: null });
    // The first attempt is made even when its follow-up cannot be queued.
    const other = await received(306);
    await respondToDocument({ ...env, ISSUANCE_QUEUE: noQueue }, undefined, await company(), other, "ACD", null);
    expect((await getDoc(r, other)).body.responses[0].mail).toMatchObject({ state: "SENT", attempts: 1 });
    // A repeated or late queue message sends nothing once it is SENT.
    expect(await attemptReplyMail(env, { companyId: r.companyId, receivedId: id, reply: "ACD", attempt: 2 })).toMatchObject({ state: "SENT", attempts: 1 });
  });

  it("a mail the service refuses stays PENDING with the reason, is tried again (the queue's message), and is SENT then", async () => {
    const id = await received(302);
    const row = await respondToDocument(refused, undefined, await company(), id, "ERM", null);
    expect(row.responseState).toBe("GOODS_RECEIVED");
    const after = (await getDoc(r, id)).body;
    expect(after.responses[0]).toMatchObject({ action: "ERM", reply_to: { email: "dte@losandes.example" }, mail: { state: "PENDING", attempts: 1, sent_at: null, message: "550 5.1.1 mailbox unavailable" } });
    // The same attempt again (a repeated message) does nothing.
    expect(await attemptReplyMail(env, { companyId: r.companyId, receivedId: id, reply: "ERM", attempt: 1 })).toMatchObject({ state: "PENDING", attempts: 1 });
    // A later attempt whose own next one cannot be queued is not made: its message is retried instead.
    await expect(attemptReplyMail({ ...env, ISSUANCE_QUEUE: noQueue }, { companyId: r.companyId, receivedId: id, reply: "ERM", attempt: 2 })).rejects.toThrow("queue unavailable");
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "PENDING", attempts: 1 });
    // The next attempt, through the issuance queue and its consumer.
    await env.ISSUANCE_QUEUE.send(replyMailBody({ companyId: r.companyId, receivedId: id, reply: "ERM", attempt: 2 }));
    const sent = await until(async () => (await getDoc(r, id)).body, (d) => d.responses[0].mail.state === "SENT", "the ERM's second attempt");
    expect(sent.responses[0].mail).toMatchObject({ state: "SENT", attempts: 2, message: null });
    expect(await mailEvents(id)).toEqual([]);
  });

  it("after the last attempt it is FAILED, with one reply_mail_failed event", async () => {
    const id = await received(303);
    await respondToDocument(refused, undefined, await company(), id, "RCD", "Precio distinto al convenido");
    for (let attempt = 2; attempt <= REPLY_MAIL_ATTEMPTS; attempt++) await attemptReplyMail(refused, { companyId: r.companyId, receivedId: id, reply: "RCD", attempt });
    const doc = (await getDoc(r, id)).body;
    expect(doc.response_state).toBe("CLAIMED");
    expect(doc.responses[0].mail).toEqual({ state: "FAILED", attempts: REPLY_MAIL_ATTEMPTS, sent_at: null, message: "550 5.1.1 mailbox unavailable", next_attempt_at: null, delivered_at: null });
    // Nothing more once FAILED, not even with a working mail service; the replies stay downloadable.
    expect(await attemptReplyMail(env, { companyId: r.companyId, receivedId: id, reply: "RCD", attempt: REPLY_MAIL_ATTEMPTS + 1 })).toMatchObject({ state: "FAILED" });
    const events = await mailEvents(id);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.payload).responses[0].mail).toMatchObject({ state: "FAILED", attempts: REPLY_MAIL_ATTEMPTS });
    expect(doc.downloads).toContain("resultado_dte");
    // The same response again records nothing more at the SII and starts the mailing over.
    const again = await respond(r, id, "RCD");
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.responses).toHaveLength(1);
    const resent = await until(async () => (await getDoc(r, id)).body, (d) => d.responses[0].mail.state === "SENT", "the RCD's mail started over");
    expect(resent.responses[0].mail).toMatchObject({ state: "SENT", attempts: 1 });
    // A repeat when it was SENT starts nothing.
    expect((await respond(r, id, "RCD")).body.responses[0].mail).toMatchObject({ state: "SENT", attempts: 1 });
  });

  it("a file's RecepcionEnvio refused at intake is tried again for every document of the file", async () => {
    const e = await envelope([await signedDte(caf33, 304, cert), await signedDte(caf33, 305, cert)], cert);
    const result = await intakeFile(refused, await company(), e.xml, { channel: "UPLOAD", message: null, fileName: "dos.xml" });
    expect(result.acknowledgment).toMatchObject({ reply_to: { source: "TAXPAYER_DIRECTORY" }, mail: { state: "PENDING", attempts: 1, message: "550 5.1.1 mailbox unavailable" } });
    const [first, second] = result.documents.map((d) => d.id);
    for (const id of [first!, second!]) expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "PENDING", attempts: 1 });
    expect(await attemptReplyMail(env, { companyId: r.companyId, receivedId: first!, reply: "acknowledgment", attempt: 2 })).toMatchObject({ state: "SENT", attempts: 2 });
    for (const id of [first!, second!]) expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "SENT", attempts: 2 });
  });
});

describe("one mail per attempt", () => {
  /** The Worker's bindings with a mail service that counts what it is given (and takes a moment), and a queue that keeps what it is given. */
  const counting = () => {
    const sends: string[] = [];
    const queued: unknown[] = [];
    const slow = { send: async (m: { to: string }) => void (sends.push(m.to), await new Promise((r) => setTimeout(r, 25))) } as unknown as SendEmail;
    const queue = { send: async (body: unknown) => void queued.push(body), sendBatch: async (b: { body: unknown }[]) => void queued.push(...b.map((x) => x.body)) } as unknown as Queue;
    return { sends, queued, env: { ...env, SEND_EMAIL: slow, ISSUANCE_QUEUE: queue } as Env };
  };

  it("two messages of one attempt at the same time (the queue delivers at least once; the sweep may queue a late one again) mail once", async () => {
    const id = await received(331);
    await respondToDocument(refused, undefined, await company(), id, "ERM", null);
    const { sends, queued, env: withCount } = counting();
    const job = { companyId: r.companyId, receivedId: id, reply: "ERM" as const, attempt: 2 };
    await Promise.all([attemptReplyMail(withCount, job), attemptReplyMail(withCount, job)]);
    expect(sends).toEqual(["dte@losandes.example"]);
    expect((await getDoc(r, id)).body.responses[0].mail).toMatchObject({ state: "SENT", attempts: 2, next_attempt_at: null });
    // Each queued the next attempt before taking this one; those find the mail SENT.
    expect(queued).toHaveLength(2);
    expect(await attemptReplyMail(withCount, { ...job, attempt: 3 })).toMatchObject({ state: "SENT", attempts: 2 });
    expect(sends).toHaveLength(1);
  });

  it("a file's RecepcionEnvio: two messages of one attempt naming different documents of the file mail once", async () => {
    const e = await envelope([await signedDte(caf33, 332, cert), await signedDte(caf33, 333, cert)], cert);
    const result = await intakeFile(refused, await company(), e.xml, { channel: "UPLOAD", message: null, fileName: "dos.xml" });
    expect(result.acknowledgment).toMatchObject({ mail: { state: "PENDING", attempts: 1 } });
    const ids = result.documents.map((d) => d.id);
    const { sends, env: withCount } = counting();
    await Promise.all(ids.map((receivedId) => attemptReplyMail(withCount, { companyId: r.companyId, receivedId, reply: "acknowledgment", attempt: 2 })));
    expect(sends).toHaveLength(1);
    for (const id of ids) expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "SENT", attempts: 2 });
  });

  it("a file's RecepcionEnvio held in two partitions, settled in the lowest by an attempt that stopped before this document's copy: the next message finishes the copies and mails nothing", async () => {
    const other = await receiver();
    const listed = await signedDte(caf33, 335, cert);
    // The register lists folio 335 before its XML comes: its placeholder is in partition 1, which then closes.
    await inject(await envelope([listed], cert), undefined, true);
    await pollReceptionRegister(env, new Date());
    await closePartition(env, other.companyId, 1, "SIZE", 1);
    const e = await envelope([listed, await signedDte(caf33, 336, cert)], cert);
    await inject(e);
    const control = (await companyControl(env, other.companyId, Date.now(), true))!.company;
    const result = await intakeFile(refused, control, e.xml, { channel: "UPLOAD", message: null, fileName: "dos.xml" });
    const [inFirst, inSecond] = result.documents.map((d) => d.id);
    expect([ordinalOfId(inFirst!), ordinalOfId(inSecond!)]).toEqual([1, 2]);
    const ackOf = async (id: string) => (await getDoc(other, id)).body.received_file.acknowledgment.mail;
    expect(await ackOf(inSecond!)).toMatchObject({ state: "PENDING", attempts: 1 });
    // Attempt 2 mailed and recorded in partition 1 (the lowest, which decides), then stopped before partition 2's copy.
    const settled = { state: "SENT", attempts: 2, sent_at: new Date().toISOString(), message: null, next_attempt_at: null };
    await storeFor(env, other.companyId, 1).db.run(sql`UPDATE received_documents SET received_file = json_set(received_file, '$.acknowledgment.mail', json(${JSON.stringify(settled)})) WHERE id = ${inFirst!}`);
    const { sends, env: withCount } = counting();
    expect(await attemptReplyMail(withCount, { companyId: other.companyId, receivedId: inSecond!, reply: "acknowledgment", attempt: 2 })).toEqual(settled);
    expect(sends).toHaveLength(0);
    for (const id of [inFirst!, inSecond!]) expect(await ackOf(id)).toEqual({ ...settled, delivered_at: null });
  });
});

describe("the sweep of mails whose queued attempts were lost", () => {
  it("a response's mail: its next look follows the next attempt; once that is overdue it is queued again and SENT; then nothing is left to look at", async () => {
    const id = await received(321);
    await respondToDocument(doubleFault, undefined, await company(), id, "ACD", null);
    const entry = (await getDoc(r, id)).body.responses[0];
    expect(entry.mail).toMatchObject({ state: "PENDING", attempts: 1, message: "550 5.1.1 mailbox unavailable" });
    // The next attempt's time is recorded (5 minutes after the first), though no message carries it.
    const next = Date.parse(entry.mail.next_attempt_at);
    expect(next - Date.parse(entry.at)).toBeGreaterThanOrEqual(replyMailWait(1) * 1000);
    expect(next - Date.parse(entry.at)).toBeLessThan(replyMailWait(1) * 1000 + 60_000);
    // The document's next look is the response's time (its mail was PENDING from then; the file's, SENT at intake, left none), and the store's alarm is set.
    expect((await rowOf(id)).mailDueAt).toBe(entry.at);
    expect(await alarmAt(r.companyId, ordinalOfId(id)!)).not.toBeNull();
    // A sweep before the next attempt is overdue queues nothing and looks again at the next attempt.
    expect(await overdueMailsIn(storeDb(id), doubleFault, new Date(next - 60_000 + REPLY_MAIL_STALE_MS))).toBe(0);
    expect((await rowOf(id)).mailDueAt).toBe(entry.mail.next_attempt_at);
    // Overdue: queued again as attempt 2 (the queue is refused first: nothing moves, the next sweep tries again).
    const late = new Date(next + 60_000 + REPLY_MAIL_STALE_MS);
    await expect(overdueMailsIn(storeDb(id), doubleFault, late)).rejects.toThrow("queue unavailable");
    expect((await rowOf(id)).mailDueAt).toBe(entry.mail.next_attempt_at);
    expect(await overdueMailsIn(storeDb(id), env, late)).toBe(1);
    const sent = await until(async () => (await getDoc(r, id)).body, (d) => d.responses[0].mail.state === "SENT", "the ACD's mail queued by the sweep");
    expect(sent.responses[0].mail).toMatchObject({ state: "SENT", attempts: 2, next_attempt_at: null });
    // Nothing is PENDING any more: nothing left for the sweep to look at.
    expect((await rowOf(id)).mailDueAt).toBeNull();
  });

  it("a file's acknowledgment whose first attempt failed with no next one queued: queued once for the file by the store's alarm, SENT on every document", async () => {
    const e = await envelope([await signedDte(caf33, 322, cert), await signedDte(caf33, 323, cert)], cert);
    const result = await intakeFile(doubleFault, await company(), e.xml, { channel: "UPLOAD", message: null, fileName: "dos.xml" });
    expect(result.acknowledgment).toMatchObject({ mail: { state: "PENDING", attempts: 1 } });
    const ids = result.documents.map((d) => d.id);
    for (const id of ids) await age(id, REPLY_MAIL_STALE_MS + 10 * 60_000);
    // Both documents are due, the file's mail is queued once.
    const sent: unknown[] = [];
    const recording = { sendBatch: async (batch: { body: unknown }[]) => void sent.push(...batch.map((b) => b.body)) } as unknown as Queue;
    expect(await overdueMailsIn(storeDb(ids[0]!), { ISSUANCE_QUEUE: recording }, new Date())).toBe(1);
    expect(sent).toEqual([replyMailBody({ companyId: r.companyId, receivedId: ids[0]!, reply: "acknowledgment", attempt: 2, partitions: [ordinalOfId(ids[0]!)!] })]);
    // The same through the store's alarm (set by the writes, at most RETRY from now) and the real queue.
    for (const id of ids) await age(id, REPLY_MAIL_STALE_MS + 10 * 60_000);
    expect(await alarmAt(r.companyId, ordinalOfId(ids[0]!)!)).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
    expect(await runDurableObjectAlarm(storeStub(r.companyId, ordinalOfId(ids[0]!)!))).toBe(true);
    for (const id of ids) {
      const doc = await until(async () => (await getDoc(r, id)).body, (d) => d.received_file.acknowledgment.mail.state === "SENT", "the RecepcionEnvio queued by the store's alarm");
      expect(doc.received_file.acknowledgment.mail).toMatchObject({ state: "SENT", attempts: 2, next_attempt_at: null });
    }
  });

  it("a mail of a company deleted meanwhile is FAILED at its next attempt, with its event", async () => {
    const other = await receiver();
    const e = await envelope([await signedDte(caf33, 324, cert)], cert);
    await inject(e);
    const res = await upload(other, e.xml);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.documents[0].id;
    const row = (await companyControl(env, other.companyId, Date.now(), true))!.company;
    await respondToDocument(doubleFault, undefined, row, id, "ERM", null);
    expect((await call("DELETE", `/api/companies/${other.companyId}`, { key: other.owner.key })).status).toBe(200);
    const failed = await attemptReplyMail(env, { companyId: other.companyId, receivedId: id, reply: "ERM", attempt: 2 });
    expect(failed).toEqual({ state: "FAILED", attempts: 2, sent_at: null, message: "The company was deleted: its replies are no longer mailed", next_attempt_at: null });
    expect(await mailEvents(id, other.companyId)).toHaveLength(1);
  });
});

describe("answers sent at once", () => {
  it("an ACD and an ERM sent together are both kept, each with its event", async () => {
    const ids = await Promise.all([311, 312, 313].map(received));
    for (const id of ids) {
      const [acd, erm] = await Promise.all([respond(r, id, "ACD"), respond(r, id, "ERM")]);
      expect(acd.status, JSON.stringify(acd.body)).toBe(200);
      expect(erm.status, JSON.stringify(erm.body)).toBe(200);
      const doc = (await getDoc(r, id)).body;
      expect(doc.responses.map((x: { action: string }) => x.action).sort()).toEqual(["ACD", "ERM"]);
      expect(doc.response_state).toBe("ACCEPTED_AND_RECEIVED");
      const events = await storeRows<{ payload: string }>(r.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.response_recorded' AND json_extract(payload, '$.id') = ${id} ORDER BY created_at, rowid`);
      expect(events).toHaveLength(2);
      // The later event shows both answers.
      expect(events.map((ev) => (JSON.parse(ev.payload).responses as unknown[]).length).sort()).toEqual([1, 2]);
    }
  });
});
