/**
 * Bounces (src/reception/bounces.ts, src/lib/dsn.ts): the replies to a supplier are sent from the
 * company's reception address, and a receiving server's delivery status notification that comes
 * back there makes the SENT mail it names FAILED, with the server's reason and the
 * reply_mail_failed event; the message is logged as BOUNCE. A report that is no failure, names no
 * mail of ours, or a mail of another company, changes nothing.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { createDb } from "../../src/storage/db/client";
import { companyControl } from "../../src/accounts/companies/control-cache";
import { receptionEmail, receptionToken } from "../../src/accounts/companies/reception-address";
import { failedDelivery } from "../../src/lib/dsn";
import { receiveMail } from "../../src/reception/email";
import { respondToDocument } from "../../src/reception/respond";
import { call, expectError } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { envelope, signedDte } from "../sii/helpers";
import { bounceMail, getDoc, inject, receiver, receptionFixture, respond, until, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

const addressOf = async (companyId: string) => receptionEmail(await receptionToken(createDb(env.DB), companyId), env.RECEPTION_DOMAIN)!;

/** What the mail service was handed: envelope sender and recipient of each message. */
const handed: { from: string; to: string }[] = [];
const recording: Env = { ...env, SEND_EMAIL: { send: async (m: { from: string; to: string }) => void handed.push({ from: m.from, to: m.to }) } as unknown as SendEmail };

async function received(r: Receiver, folio: number): Promise<string> {
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  await inject(e);
  const res = await upload(r, e.xml);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.documents[0].id;
}

const bounce = async (to: string, messageId: string, o: Partial<Parameters<typeof bounceMail>[0]> = {}) => {
  const raw = new TextEncoder().encode(bounceMail({ to, messageId, ...o }));
  return receiveMail(env, { from: "MAILER-DAEMON@mx.losandes.example", to, raw, rawSize: raw.length });
};
const failedEvents = (companyId: string, id: string) => storeRows<{ payload: string }>(companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.reply_mail_failed' AND json_extract(payload, '$.id') = ${id}`);
const noDocumentEvents = (companyId: string, messageId: string) => storeRows(companyId, sql`SELECT 1 FROM event_outbox WHERE type = 'inbound_message.no_documents' AND json_extract(payload, '$.id') = ${messageId}`);
const message = async (id: string) => (await call("GET", `/api/reception/messages/${id}?company_id=${r.companyId}`, { key: r.owner.key })).body;

describe("a bounce of a reply mail", () => {
  it("is sent from the company's reception address; the bounce makes it FAILED with the server's reason, once, and a resend that bounces again says so again", async () => {
    const id = await received(r, 401);
    const company = (await companyControl(env, r.companyId, Date.now(), true))!.company;
    await respondToDocument(recording, undefined, company, id, "ACD", null);
    const address = await addressOf(r.companyId);
    expect(handed.at(-1)).toEqual({ from: address, to: "dte@losandes.example" });
    const sent = (await getDoc(r, id)).body.responses[0].mail;
    expect(sent).toMatchObject({ state: "SENT", attempts: 1 });

    const first = await bounce(address, `${id}.acd.1732800000000@${env.RECEPTION_DOMAIN}`);
    expect(first.outcome).toBe("BOUNCE");
    const failed = (await getDoc(r, id)).body.responses[0].mail;
    expect(failed).toEqual({ state: "FAILED", attempts: 1, sent_at: sent.sent_at, message: "Bounced by dte@losandes.example: 5.1.1 550 5.1.1 <dte@losandes.example>: Recipient address rejected: User unknown", next_attempt_at: null, delivered_at: null });
    expect(await failedEvents(r.companyId, id)).toHaveLength(1);
    // Logged as what it was, with no "brought nothing" event.
    expect(await message(first.id)).toMatchObject({ outcome: "BOUNCE", documents: 0, detail: `Bounced by dte@losandes.example: 5.1.1 550 5.1.1 <dte@losandes.example>: Recipient address rejected: User unknown. Read onto the ACD replies of ${id}.` });
    expect(await noDocumentEvents(r.companyId, first.id)).toEqual([]);

    // The same report again: logged, nothing changes.
    const again = await bounce(address, `${id}.acd.1732800000000@${env.RECEPTION_DOMAIN}`, { original: "text/rfc822-headers" });
    expect(again.outcome).toBe("BOUNCE");
    expect((await message(again.id)).detail).toContain("(not SENT: left as it was)");
    expect(await failedEvents(r.companyId, id)).toHaveLength(1);

    // Sent again (the same response), and bounced again: FAILED again, with a second event.
    expect((await respond(r, id, "ACD")).status).toBe(200);
    await until(async () => (await getDoc(r, id)).body.responses[0].mail, (m) => m.state === "SENT", "the ACD mailed again");
    expect((await bounce(address, `${id}.acd.1732800000001@${env.RECEPTION_DOMAIN}`)).outcome).toBe("BOUNCE");
    expect((await getDoc(r, id)).body.responses[0].mail.state).toBe("FAILED");
    expect(await failedEvents(r.companyId, id)).toHaveLength(2);
  });

  it("of a file's RecepcionEnvio, whose Message-ID the mail service replaced: read by its reference header, FAILED on the document", async () => {
    const id = await received(r, 402);
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail.state).toBe("SENT");
    expect((await bounce(await addressOf(r.companyId), "9BKrZ0WOF6vZN0RPIIZYXn6a8lh3@dte.localhost", { reference: `${id}.ack` })).outcome).toBe("BOUNCE");
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail).toMatchObject({ state: "FAILED", attempts: 1, message: expect.stringMatching(/^Bounced by dte@losandes\.example: 5\.1\.1 /) });
  });

  it("changes nothing when the report is no failure, names no mail of ours, or names another company's document", async () => {
    const id = await received(r, 403);
    const address = await addressOf(r.companyId);
    const messageId = `${id}.ack.1732800000000@${env.RECEPTION_DOMAIN}`;
    // A delay is no failure; a report naming a message we did not send, or none, is an ordinary message.
    expect((await bounce(address, messageId, { action: "delayed", status: "4.4.7" })).outcome).toBe("NO_DTE");
    expect((await bounce(address, "CAFEBABE.1@mx.example")).outcome).toBe("NO_DTE");
    expect((await bounce(address, `rcv_p0_NOSUCHDOCUMENT.ack.1@${env.RECEPTION_DOMAIN}`)).outcome).toBe("NO_DTE");
    // Another company's reception address, naming this company's document: not read.
    const other = await receiver();
    const foreign = await bounce(await addressOf(other.companyId), messageId);
    expect(foreign.outcome).toBe("NO_DTE");
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail.state).toBe("SENT");
  });
});

describe("mailing a reply again (POST …/reply_mail)", () => {
  const mailAgain = (id: string, json: unknown, who: Receiver = r) => call("POST", `/api/reception/invoices/${id}/reply_mail?company_id=${who.companyId}`, { key: who.owner.key, json });

  it("a bounced RecepcionEnvio to another address: SENT there, the address kept as given on request; SENT ones again; refusals each with its code", async () => {
    const id = await received(r, 404);
    const address = await addressOf(r.companyId);
    await bounce(address, `${id}.ack.1732800000000@${env.RECEPTION_DOMAIN}`);
    expect((await getDoc(r, id)).body.received_file.acknowledgment.mail.state).toBe("FAILED");
    const again = await mailAgain(id, { reply: "acknowledgment", email: "facturacion@losandes.example" });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.received_file.acknowledgment).toMatchObject({ reply_to: { email: "facturacion@losandes.example", source: "REQUEST" }, mail: { state: "SENT", attempts: 1, message: null, next_attempt_at: null } });
    // SENT: it can be sent again, to the address now on record.
    const twice = await mailAgain(id, { reply: "acknowledgment" });
    expect(twice.body.received_file.acknowledgment).toMatchObject({ reply_to: { email: "facturacion@losandes.example", source: "REQUEST" }, mail: { state: "SENT", attempts: 1 } });
    // A response not recorded; bad input; another company's key.
    expectError(await mailAgain(id, { reply: "ERM" }), 409, "RECEPTION_REPLY_MISSING");
    expectError(await mailAgain(id, { reply: "ACK" }), 400, "VALIDATION_FAILED");
    expectError(await mailAgain(id, { reply: "acknowledgment", email: "not an address" }), 400, "VALIDATION_FAILED");
    expectError(await mailAgain(id, { reply: "acknowledgment", extra: 1 }), 400, "VALIDATION_FAILED");
    const other = await receiver();
    expectError(await mailAgain(id, { reply: "acknowledgment" }, other), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
  });

  it("a response's replies still being retried are refused until settled; replies with no address need one", async () => {
    const id = await received(r, 405);
    const company = (await companyControl(env, r.companyId, Date.now(), true))!.company;
    await respondToDocument({ ...env, SEND_EMAIL: { send: async () => { throw new Error("421 try later"); } } as unknown as SendEmail }, undefined, company, id, "ACD", null);
    expectError(await mailAgain(id, { reply: "ACD" }), 409, "RECEPTION_REPLY_MAIL_PENDING");
    // The file's RecepcionEnvio with no address known (as for an issuer missing from the directory, uploaded): it needs one.
    await storeRows(r.companyId, sql`UPDATE received_documents SET received_file = json_set(received_file, '$.acknowledgment.reply_to', json('null'), '$.acknowledgment.mail', json('null')) WHERE id = ${id}`);
    expectError(await mailAgain(id, { reply: "acknowledgment" }), 422, "RECEPTION_REPLY_NO_ADDRESS");
    const given = await mailAgain(id, { reply: "acknowledgment", email: "dte@losandes.example" });
    expect(given.status, JSON.stringify(given.body)).toBe(200);
    expect(given.body.received_file.acknowledgment).toMatchObject({ reply_to: { email: "dte@losandes.example", source: "REQUEST" }, mail: { state: "SENT", attempts: 1 } });
  });
});

describe("reading a delivery status notification (lib/dsn.ts)", () => {
  const parse = async (raw: string) => failedDelivery(await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" }));

  it("reads the failed recipient's fields (folded lines joined) and the original's Message-ID; a report of no failure, or no report, is null", async () => {
    expect(await parse(bounceMail({ to: "x@y", messageId: "abc.1@dte.localhost" }))).toEqual({
      messageIds: ["abc.1@dte.localhost"],
      recipient: "dte@losandes.example",
      status: "5.1.1",
      diagnostic: "550 5.1.1 <dte@losandes.example>: Recipient address rejected: User unknown",
      original: new Map([["from", "someone@dte.localhost"], ["to", "dte@losandes.example"], ["subject", "Respuesta DTE"], ["message-id", "<abc.1@dte.localhost>"]]),
    });
    expect(await parse(bounceMail({ to: "x@y", messageId: "abc.1@dte.localhost", original: "text/rfc822-headers" }))).toMatchObject({ messageIds: ["abc.1@dte.localhost"] });
    expect(await parse(bounceMail({ to: "x@y", messageId: "abc.1@dte.localhost", action: "delivered", status: "2.0.0" }))).toBeNull();
    expect(await parse("From: a@b\r\nTo: c@d\r\nSubject: hola\r\n\r\nnothing\r\n")).toBeNull();
  });

  it("takes at most 20 Message-IDs, each capped, and long fields cut", async () => {
    const many = Array.from({ length: 40 }, (_, i) => `<m${i}@x.example>`).join(" ");
    const raw = bounceMail({ to: "x@y", messageId: "first@x.example", recipient: `${"a".repeat(2000)}@x.example` }).replace("Subject: Undelivered", `References: ${many}\r\nSubject: Undelivered`);
    const report = (await parse(raw))!;
    expect(report.messageIds).toHaveLength(20);
    expect(report.messageIds[0]).toBe("first@x.example");
    expect(report.recipient!.length).toBeLessThanOrEqual(320);
    expect(report.diagnostic!.length).toBeLessThanOrEqual(300);
  });
});
