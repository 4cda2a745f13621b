/**
 * An accepted document mailed to its buyer: the pipeline's acceptance starts the delivery, the
 * document store's alarm sends the attempt to the issuance queue, whose consumer signs an EnvioDTE
 * addressed to the buyer and mails it (the SEND_EMAIL binding) to the buyer's exchange address in
 * the SII's taxpayer directory (in simulator mode, the simulator's own companies). The envelope sent
 * is taken in by the buyer's own reception, verified; a buyer the directory does not know, a failing
 * attempt and its retries, on-request sends and boletas.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyInbound } from "../../src/countries/cl/exchange/verify";
import { ordinalOfId, storeFor } from "../../src/storage/db/document-store";
import { buyerEnvelopeSetId, deliverToBuyer, DELIVERY_ATTEMPTS, DELIVERY_LEASE_MS } from "../../src/invoices/buyer-delivery";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { recipient as sampleRecipient } from "../helpers/cl-samples";
import { storeRows } from "../helpers/store";
import { createDb } from "../../src/storage/db/client";
import { receptionEmail, receptionToken } from "../../src/accounts/companies/reception-address";
import { receiveMail } from "../../src/reception/email";
import { afterDelivery as afterDeliveryOf, bounceMail, receiver, upload } from "./helpers";

const LOS_ANDES = "76086428-5";

let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer([33, 39]);
}, 60_000);

async function accepted(recipientRut: string, type = "33") {
  const body = invoiceBody(issuer.rut, type, type === "33" ? { recipient: { ...sampleRecipient, document_number: recipientRut } } : {});
  const res = await issue(issuer, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const doc = await untilFinal(issuer, res.body.id);
  expect(doc.status).toBe("ACCEPTED");
  return doc;
}

/** The document once its due attempts have run and `ok` holds. */
const afterDelivery = (id: string, ok: (d: any) => boolean) => afterDeliveryOf(issuer, id, ok);

const deliverNow = (id: string, json?: unknown) => call("POST", `${issuer.base}/invoices/${id}/buyer_delivery`, { key: issuer.owner.key, ...(json ? { json } : {}) });
/** The `invoice.buyer_delivery` events of a document: the delivery each one carries. */
const deliveryEvents = async (id: string) =>
  (await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'invoice.buyer_delivery' AND payload LIKE ${`%${id}%`} ORDER BY created_at, rowid`)).map((e) => {
    const inv = JSON.parse(e.payload).invoice;
    expect(inv.id).toBe(id);
    return JSON.parse(inv.buyer_delivery);
  });
/** Sets the document's buyer_delivery_at (`at`: in the past, the store's alarm takes the attempt at once), and `extra` columns. */
const dueNow = (id: string, extra = "", at = "2000-01-01T00:00:00.000Z") => storeFor(env, issuer.companyId, ordinalOfId(id)!).db.run(sql.raw(`UPDATE invoices SET buyer_delivery_at = '${at}'${extra} WHERE id = '${id}'`));

describe("an accepted factura is mailed to its buyer", () => {
  it("to the buyer's exchange address in the directory: an EnvioDTE addressed to the buyer, which the buyer's reception takes in verified", async () => {
    const doc = await accepted(LOS_ANDES);
    const sent = await afterDelivery(doc.id, (d) => d.state === "SENT");
    expect(sent.buyer_delivery).toMatchObject({ state: "SENT", email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY", attempts: 1, message: null });
    expect(Date.parse(sent.buyer_delivery.sent_at)).toBeGreaterThan(0);
    // The A4 PDF was rendered for the mail (and kept for downloads): no note says it was left out.
    const pdfs = await env.FILES.list({ prefix: `companies/${issuer.companyId}/invoices/${doc.id}/pdf/A4-` });
    expect(pdfs.objects).toHaveLength(1);
    const pdf = new Uint8Array(await (await env.FILES.get(pdfs.objects[0]!.key))!.arrayBuffer());
    expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe("%PDF-");

    const dl = await call("GET", `${issuer.base}/invoices/${doc.id}/buyer_delivery/xml`, { key: issuer.owner.key });
    expect(dl.status).toBe(200);
    const xml = new Uint8Array(await dl.raw.arrayBuffer());
    const text = new TextDecoder("latin1").decode(xml);
    expect(text).toContain(`<RutReceptor>${LOS_ANDES}</RutReceptor>`);
    // Its SetDTE ID names the document, for the buyer's verdict on the whole envelope (buyer-replies.test.ts).
    expect(text).toContain(`<SetDTE ID="${buyerEnvelopeSetId(doc.id)}">`);
    const report = await verifyInbound(xml, { mode: "simulator" });
    expect(report.kind).toBe("EnvioDTE");
    expect(report.documents).toHaveLength(1);

    // The buyer's company (its RUT) takes the envelope in: verified, the envelope's signature checked.
    const buyer = await receiver(LOS_ANDES, false);
    const up = await upload(buyer, xml);
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const received = up.body.documents[0];
    expect(received).toMatchObject({ folio: doc.folio, verification: { status: "VERIFIED", reception_status: 0 } });
    expect(received.verification.checks.find((c: any) => c.name === "envelope_signature").result).toBe("PASSED");

    // Sending again on request: a second attempt to the same address.
    const again = await deliverNow(doc.id);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.buyer_delivery).toMatchObject({ state: "SENT", email: "dte@losandes.example", attempts: 2 });
    // One event per attempt that settled the delivery, each with the delivery as it left it.
    expect(await deliveryEvents(doc.id)).toMatchObject([{ state: "SENT", attempts: 1 }, { state: "SENT", attempts: 2 }]);
  });

  it("a buyer the directory does not know: NO_ADDRESS, then sent on request to the address given", async () => {
    const doc = await accepted("77879240-0");
    const none = await afterDelivery(doc.id, (d) => d.state !== "PENDING");
    expect(none.buyer_delivery).toMatchObject({ state: "NO_ADDRESS", email: null, attempts: 0 });
    expect(none.buyer_delivery.message).toMatch(/no exchange address for 77879240-0/);
    expect(await deliveryEvents(doc.id)).toMatchObject([{ state: "NO_ADDRESS", attempts: 0 }]);
    const missing = await call("GET", `${issuer.base}/invoices/${doc.id}/buyer_delivery/xml`, { key: issuer.owner.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("INVOICE_BUYER_DELIVERY_NOT_SENT");

    const noAddress = await deliverNow(doc.id);
    expect(noAddress.status).toBe(422);
    expect(noAddress.body.error.code).toBe("INVOICE_BUYER_DELIVERY_NO_ADDRESS");
    const bad = await deliverNow(doc.id, { email: "not an address" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_FAILED");

    const sent = await deliverNow(doc.id, { email: "compras@cliente.example" });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.buyer_delivery).toMatchObject({ state: "SENT", email: "compras@cliente.example", source: "REQUEST", attempts: 1 });
    expect((await call("GET", `${issuer.base}/invoices/${doc.id}/buyer_delivery/xml`, { key: issuer.owner.key })).status).toBe(200);
  });

  it("an attempt that fails waits and is tried again; after the last attempt it is FAILED", async () => {
    const doc = await accepted(LOS_ANDES);
    await afterDelivery(doc.id, (d) => d.state === "SENT");
    // The signed XML gone from R2: the envelope cannot be built.
    const [stored] = await storeRows<{ xml_key: string }>(issuer.companyId, sql`SELECT xml_key FROM invoices WHERE id = ${doc.id}`);
    await env.FILES.delete(stored!.xml_key.split("#")[0]!);
    await dueNow(doc.id, `, buyer_delivery = '{"state":"PENDING","email":null,"source":null,"attempts":1,"sent_at":null,"message":null}'`);
    const retrying = await afterDelivery(doc.id, (d) => d.attempts === 2);
    expect(retrying.buyer_delivery).toMatchObject({ state: "PENDING", attempts: 2, message: "The signed XML of the document is missing" });
    // A failure that will be tried again sends no event: only the first attempt's SENT so far.
    expect(await deliveryEvents(doc.id)).toMatchObject([{ state: "SENT", attempts: 1 }]);
    const [waiting] = await storeRows<{ buyer_delivery_at: string }>(issuer.companyId, sql`SELECT buyer_delivery_at FROM invoices WHERE id = ${doc.id}`);
    // The second failure waits 10 minutes (5 doubling).
    expect(Date.parse(waiting!.buyer_delivery_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    await dueNow(doc.id, `, buyer_delivery = json_set(buyer_delivery, '$.attempts', ${DELIVERY_ATTEMPTS - 1})`);
    const failed = await afterDelivery(doc.id, (d) => d.state === "FAILED");
    expect(failed.buyer_delivery.attempts).toBe(DELIVERY_ATTEMPTS);
    const [after] = await storeRows<{ buyer_delivery_at: string | null }>(issuer.companyId, sql`SELECT buyer_delivery_at FROM invoices WHERE id = ${doc.id}`);
    expect(after!.buyer_delivery_at).toBeNull();
    expect((await deliveryEvents(doc.id)).map((d) => `${d.state}/${d.attempts}`)).toEqual(["SENT/1", `FAILED/${DELIVERY_ATTEMPTS}`]);
    const now = await deliverNow(doc.id);
    expect(now.status).toBe(503);
    expect(now.body.error.code).toBe("INVOICE_BUYER_DELIVERY_FAILED");
  });

  it("a delivery the buyer's server bounces after it was SENT is FAILED with the server's reason, read from the bounce at the company's reception address", async () => {
    const doc = await accepted(LOS_ANDES);
    const sent = (await afterDelivery(doc.id, (d) => d.state === "SENT")).buyer_delivery;
    const address = receptionEmail(await receptionToken(createDb(env.DB), issuer.companyId), env.RECEPTION_DOMAIN)!;
    const raw = new TextEncoder().encode(bounceMail({ to: address, messageId: `${doc.id}.1732800000000@${env.RECEPTION_DOMAIN}`, status: "5.2.2" }));
    const read = await receiveMail(env, { from: "MAILER-DAEMON@mx.losandes.example", to: address, raw, rawSize: raw.length });
    expect(read.outcome).toBe("BOUNCE");
    const after = (await call("GET", `${issuer.base}/invoices/${doc.id}`, { key: issuer.owner.key })).body.buyer_delivery;
    expect(after).toEqual({ ...sent, state: "FAILED", message: "Bounced by dte@losandes.example: 5.2.2 550 5.1.1 <dte@losandes.example>: Recipient address rejected: User unknown" });
    expect((await deliveryEvents(doc.id)).map((d) => `${d.state}/${d.attempts}`)).toEqual(["SENT/1", "FAILED/1"]);
  });

  it("a queue message of one attempt delivered twice at once mails once; a message whose lease the document no longer holds does nothing", async () => {
    const doc = await accepted(LOS_ANDES);
    await afterDelivery(doc.id, (d) => d.state === "SENT");
    // Attempt 2 taken by the store's alarm: its lease is the buyer_delivery_at the message carries,
    // DELIVERY_LEASE_MS ahead (a lease in the past would be due, and the alarm would take it first).
    const lease = new Date(Date.now() + DELIVERY_LEASE_MS).toISOString();
    await dueNow(doc.id, `, buyer_delivery = '{"state":"PENDING","email":"dte@losandes.example","source":"TAXPAYER_DIRECTORY","attempts":1,"sent_at":null,"message":"451 4.3.0 try again later"}'`, lease);
    const sends: string[] = [];
    const counting = { ...env, SEND_EMAIL: { send: async (m: { to: string }) => void (sends.push(m.to), await new Promise((r) => setTimeout(r, 25))) } } as unknown as Env;
    const outcomes = await Promise.all([0, 1].map(() => deliverToBuyer(counting, issuer.companyId, doc.id, { scheduled: true, lease })));
    expect(sends).toEqual(["dte@losandes.example"]);
    expect(outcomes.filter((o) => o.kind === "done")).toEqual([expect.objectContaining({ delivery: expect.objectContaining({ state: "SENT", attempts: 2, message: null }) })]);
    // The same message again once the attempt is recorded: the lease it names is gone.
    expect(await deliverToBuyer(counting, issuer.companyId, doc.id, { scheduled: true, lease })).toEqual({ kind: "skipped" });
    expect(sends).toHaveLength(1);
    expect((await deliveryEvents(doc.id)).map((d) => `${d.state}/${d.attempts}`)).toEqual(["SENT/1", "SENT/2"]);
    // Asked for by the user meanwhile: it is sent (the attempt is the user's own).
    const again = await deliverNow(doc.id);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.buyer_delivery).toMatchObject({ state: "SENT", attempts: 3 });
  });

  it("with no reception domain, or no send_email binding, the attempt fails saying which; nothing is mailed", async () => {
    const doc = await accepted(LOS_ANDES);
    await afterDelivery(doc.id, (d) => d.state === "SENT");
    const noDomain = await deliverToBuyer({ ...env, RECEPTION_DOMAIN: "" } as Env, issuer.companyId, doc.id, { scheduled: false });
    expect(noDomain).toMatchObject({ kind: "done", delivery: { state: "PENDING", attempts: 2, message: "RECEPTION_DOMAIN is not configured: there is no address to send from" } });
    const noBinding = await deliverToBuyer({ ...env, SEND_EMAIL: undefined } as unknown as Env, issuer.companyId, doc.id, { scheduled: false });
    expect(noBinding).toMatchObject({ kind: "done", delivery: { state: "PENDING", attempts: 3, message: "No send_email binding is configured" } });
  });

  it("a boleta is not mailed to a buyer", async () => {
    const doc = await accepted("66666666-6", "39");
    expect(doc.buyer_delivery).toBeNull();
    const res = await deliverNow(doc.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("INVOICE_NO_BUYER_DELIVERY");
  });
});
