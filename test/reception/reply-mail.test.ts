/**
 * The mailing of the replies to the supplier (src/reception/reply-mail.ts): recorded before it is
 * attempted, attempted at once, tried again by the issuance queue when the mail service refuses it,
 * FAILED with its event after the last attempt; and two answers sent at once both kept.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { companyControl } from "../../src/domain/companies/control-cache";
import { intakeFile } from "../../src/reception/intake";
import { attemptReplyMail, REPLY_MAIL_ATTEMPTS, replyMailBody } from "../../src/reception/reply-mail";
import { respondToDocument } from "../../src/reception/respond";
import { storeRows } from "../helpers/store";
import { envelope, signedDte } from "../sii/helpers";
import { getDoc, inject, receptionFixture, respond, upload, type Receiver } from "./helpers";

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

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${what}: still ${JSON.stringify(await read())}`);
}

const mailEvents = (id: string) => storeRows<{ payload: string }>(r.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`);

describe("reply mails", () => {
  it("a response's replies: recorded PENDING, then SENT by the attempt made at once", async () => {
    const id = await received(301);
    const acd = await respond(r, id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(acd.body.responses[0].mail).toMatchObject({ state: expect.stringMatching(/^(PENDING|SENT)$/) });
    const doc = await until(async () => (await getDoc(r, id)).body, (d) => d.responses[0].mail.state === "SENT", "the ACD's mail");
    expect(doc.responses[0].mail).toEqual({ state: "SENT", attempts: 1, sent_at: expect.any(String), message: null });
    // The file's RecepcionEnvio, mailed at intake, says the same.
    expect(doc.received_file.acknowledgment.mail).toEqual({ state: "SENT", attempts: 1, sent_at: expect.any(String), message: null });
    // The first attempt is made even when its follow-up cannot be queued.
    const other = await received(306);
    await respondToDocument({ ...env, ISSUANCE_QUEUE: { send: async () => { throw new Error("queue unavailable"); } } as unknown as Queue } as Env, undefined, await company(), other, "ACD", null);
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
    const noQueue = { ...env, ISSUANCE_QUEUE: { send: async () => { throw new Error("queue unavailable"); } } as unknown as Queue } as Env;
    await expect(attemptReplyMail(noQueue, { companyId: r.companyId, receivedId: id, reply: "ERM", attempt: 2 })).rejects.toThrow("queue unavailable");
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
    expect(doc.responses[0].mail).toEqual({ state: "FAILED", attempts: REPLY_MAIL_ATTEMPTS, sent_at: null, message: "550 5.1.1 mailbox unavailable" });
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
