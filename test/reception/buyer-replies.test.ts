/**
 * A buyer's own replies to documents the company issued, read onto those documents: one simulated
 * company issues a factura to another, the buyer's company receives it (the reception cron), accepts
 * it and acknowledges the goods (send_response), and its three signed replies (RecepcionEnvio,
 * ResultadoDTE, EnvioRecibos) are mailed to the issuer's reception address through the Worker's
 * email() handler; then uploads of replies built here: tampered, about another copy of the document,
 * about documents that are not the issuer's, and files that are not replies.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { buildEnvioRecibos, buildRecepcionEnvio, buildResultadoDte } from "../../src/countries/cl/exchange/responses";
import { buyerEnvelopeSetId } from "../../src/invoices/buyer-delivery";
import { readBuyerReply } from "../../src/countries/cl/exchange/replies-read";
import { xmlDocumentBytes } from "../../src/countries/cl/xml/xml";
import { normalizeRut } from "../../src/countries/cl/documents/rut";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { call } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { envelope, fakeCredentials, signedDte, simulatorCaf } from "../sii/helpers";
import { emailMessage, issuedAccepted, receivedCopy, receiver, respond, RECIPIENT, type Receiver } from "./helpers";

let issuer: Issuer;
let buyer: Receiver;
let invoice: any;
let address: string;
let signer: SigningCredentials;

beforeAll(async () => {
  issuer = await readyIssuer([33]);
  buyer = await receiver();
  invoice = await issuedAccepted(issuer);
  address = (await call("GET", `${issuer.base}/settings`, { key: issuer.owner.key })).body.reception_email;
  signer = await fakeCredentials({ rut: "22222222-2" });
}, 120_000);

const b64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join("")).replace(/.{76}/g, "$&\r\n");

function mime(files: { name: string; bytes: Uint8Array }[]): string {
  const head = [`From: Cliente <dte@cliente.cl>`, `To: ${address}`, "Subject: Respuesta DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="XYZ"', "", "--XYZ", "Content-Type: text/plain", "", "Respuesta", ""];
  const body = files.flatMap((f) => ["--XYZ", `Content-Type: application/xml; name="${f.name}"`, `Content-Disposition: attachment; filename="${f.name}"`, "Content-Transfer-Encoding: base64", "", b64(f.bytes), ""]);
  return [...head, ...body, "--XYZ--", ""].join("\r\n");
}

const getInvoice = async (id = invoice.id) => (await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key })).body;
const replyEvents = (id = invoice.id) => storeRows<{ type: string; payload: string }>(issuer.companyId, sql`SELECT type, payload FROM event_outbox WHERE type = 'invoice.buyer_reply' AND payload LIKE ${`%${id}%`} ORDER BY created_at`);
const lastMessage = async () => (await storeRows<{ id: string; outcome: string; detail: string | null; documents: number }>(issuer.companyId, sql`SELECT id, outcome, detail, documents FROM inbound_messages WHERE recipient = ${address} ORDER BY created_at DESC, id DESC LIMIT 1`))[0];

function uploadReply(bytes: Uint8Array | string, name = "respuesta.xml") {
  const form = new FormData();
  form.append("file", new File([bytes as BlobPart], name, { type: "text/xml" }));
  return call("POST", `${issuer.base}/invoices/buyer_replies`, { key: issuer.owner.key, body: form });
}

/** A ResultadoDTE about the issued factura as the buyer would sign it; `over` changes its copy of the document. */
function resultFor(over: Partial<{ folio: number; issuerRut: string; total: string; receiverRut: string; status: 0 | 1 | 2 }> = {}) {
  return buildResultadoDte({
    responderRut: RECIPIENT, recipientRut: issuer.rut, timestamp: "2026-11-24T09:30:00", signer, responseId: 7,
    results: [{ type: 33, folio: over.folio ?? invoice.folio, issueDate: invoice.issue_date, issuerRut: over.issuerRut ?? issuer.rut, receiverRut: over.receiverRut ?? RECIPIENT, total: over.total ?? invoice.total, receptionCode: 1, status: over.status ?? 0, statusText: "Conforme" }],
  });
}

describe("a buyer's replies mailed to the issuer", () => {
  it("the buyer's RecepcionEnvio, ResultadoDTE and EnvioRecibos are read onto the factura, each signature checked, one event each, and downloadable", async () => {
    const copy = await receivedCopy(buyer, issuer, invoice.folio);
    expect((await respond(buyer, copy, "ACD")).status).toBe(200);
    const erm = await respond(buyer, copy, "ERM");
    expect(erm.status, JSON.stringify(erm.body)).toBe(200);
    const files: { name: string; bytes: Uint8Array }[] = [];
    for (const type of ["recepcion_envio", "resultado_dte", "envio_recibos"]) {
      const res = await call("POST", `/api/reception/invoices/${copy}/download/${type}?company_id=${buyer.companyId}`, { key: buyer.owner.key });
      expect(res.status, type).toBe(200);
      files.push({ name: `${type}.xml`, bytes: new Uint8Array(await res.raw.arrayBuffer()) });
    }

    await worker.email!(emailMessage(mime(files), address, "dte@cliente.cl"), env);
    const message = await lastMessage();
    expect(message).toMatchObject({ outcome: "REPLY", documents: 0 });
    expect(message!.detail).toBe([`A RespuestaDTE (RecepcionEnvio): 1 of 1 entries read onto 33 N° ${invoice.folio}.`, `A RespuestaDTE (ResultadoDTE): 1 of 1 entries read onto 33 N° ${invoice.folio}.`, `An EnvioRecibos (Recibo): 1 of 1 entries read onto 33 N° ${invoice.folio}.`].join(" | "));

    const doc = await getInvoice();
    expect(doc.buyer_replies.map((r: any) => [r.kind, r.status])).toEqual([["RECEPTION", "RECEIVED"], ["RESULT", "ACCEPTED"], ["RECEIPT", "GOODS_RECEIVED"]]);
    for (const r of doc.buyer_replies) {
      expect(r).toMatchObject({ signature: { valid: true, message: null, signer_tax_id: "22222222-2" }, discrepancies: [], from_tax_id: RECIPIENT, channel: "EMAIL", message_id: message!.id });
    }
    expect(doc.buyer_replies[1]).toMatchObject({ code: 0, code_text: "DTE Aceptado OK", receipt: null });
    expect(doc.buyer_replies[2].receipt).toMatchObject({ signer_tax_id: "22222222-2" });
    expect(doc.buyer_replies[2].receipt.place).toBeTruthy();

    const events = await replyEvents();
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[2]!.payload).invoice.buyer_replies).toContain('"RECEIPT"');

    for (const [i, r] of doc.buyer_replies.entries()) {
      const dl = await call("GET", `${issuer.base}/invoices/${invoice.id}/buyer_replies/${r.id}/xml`, { key: issuer.owner.key });
      expect(dl.status).toBe(200);
      // The reply as read: its signed content and signatures in canonical form, behind a declaration of its encoding.
      const read = await readBuyerReply(files[i]!.bytes);
      if ("problem" in read) throw new Error(read.problem);
      expect(new Uint8Array(await dl.raw.arrayBuffer())).toEqual(xmlDocumentBytes(read.xml).bytes);
    }

    // The same mail again: nothing new on the document, no new event.
    await worker.email!(emailMessage(mime(files), address, "dte@cliente.cl"), env);
    expect((await lastMessage())!.outcome).toBe("REPLY");
    expect((await getInvoice()).buyer_replies).toHaveLength(3);
    expect(await replyEvents()).toHaveLength(3);
  });

  it("the buyer's company never sees the issuer's replies, and an unknown reply id is a 404", async () => {
    const doc = await getInvoice();
    const other = await call("GET", `${issuer.base}/invoices/${invoice.id}/buyer_replies/${doc.buyer_replies[0].id}/xml`, { key: buyer.owner.key });
    expect([403, 404]).toContain(other.status);
    const unknown = await call("GET", `${issuer.base}/invoices/${invoice.id}/buyer_replies/rpl_nothing/xml`, { key: issuer.owner.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("INVOICE_BUYER_REPLY_NOT_FOUND");
  });
});

describe("uploaded replies", () => {
  it("a rejection whose signature was broken after signing is recorded as not valid; another copy of the document shows its discrepancies", async () => {
    const signed = await resultFor({ status: 0 });
    const tampered = signed.xmlString.replace("<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>2</EstadoDTE>");
    expect(tampered).not.toBe(signed.xmlString);
    const res = await uploadReply(tampered);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ kind: "RespuestaDTE", signature_valid: false, entries: [{ kind: "RESULT", status: "REJECTED", invoice_id: invoice.id, outcome: "RECORDED" }] });
    const forged = (await getInvoice()).buyer_replies.at(-1);
    expect(forged).toMatchObject({ status: "REJECTED", channel: "UPLOAD", signature: { valid: false } });
    expect(forged.signature.message).toMatch(/digest/);

    const other = await uploadReply((await resultFor({ total: "1", receiverRut: "11111111-1" })).xml);
    expect(other.body.entries[0].outcome).toBe("RECORDED");
    const seen = (await getInvoice()).buyer_replies.at(-1);
    expect(seen.signature.valid).toBe(true);
    expect(seen.discrepancies).toEqual([
      { field: "recipient_tax_id", reply: "11111111-1", document: RECIPIENT },
      { field: "total", reply: "1", document: invoice.total },
    ]);
    // Recorded in the inbound message log.
    const messages = await call("GET", `/api/reception/messages?company_id=${issuer.companyId}&outcome=REPLY&channel=UPLOAD`, { key: issuer.owner.key });
    expect(messages.body.data.length).toBeGreaterThanOrEqual(2);
  });

  it("entries about another company's documents or a folio never issued are named, not recorded", async () => {
    const before = (await getInvoice()).buyer_replies.length;
    const notOurs = await uploadReply((await resultFor({ issuerRut: "76086428-5" })).xml);
    expect(notOurs.body.entries).toMatchObject([{ outcome: "NOT_OURS", invoice_id: null }]);
    const unknown = await uploadReply((await resultFor({ folio: 99_999 })).xml);
    expect(unknown.body.entries).toMatchObject([{ outcome: "UNKNOWN_DOCUMENT", invoice_id: null }]);
    expect((await getInvoice()).buyer_replies).toHaveLength(before);
  });

  it("a receipt of goods signed by the buyer, uploaded twice: one entry", async () => {
    const recibos = await buildEnvioRecibos({
      responderRut: RECIPIENT, recipientRut: issuer.rut, timestamp: "2026-11-24T10:00:00", signer,
      receipts: [{ type: 33, folio: invoice.folio, issueDate: invoice.issue_date, issuerRut: issuer.rut, receiverRut: RECIPIENT, total: invoice.total, place: "Bodega central", signerRut: "22222222-2" }],
    });
    const first = await uploadReply(recibos.xml);
    expect(first.body).toMatchObject({ kind: "EnvioRecibos", signature_valid: true, entries: [{ kind: "RECEIPT", outcome: "RECORDED" }] });
    const again = await uploadReply(recibos.xml);
    expect(again.body.entries).toMatchObject([{ outcome: "ALREADY_RECORDED", invoice_id: invoice.id }]);
    const receipts = (await getInvoice()).buyer_replies.filter((r: any) => r.file_sha256 === first.body.file_sha256);
    expect(receipts).toHaveLength(1);
    expect(receipts[0].receipt).toEqual({ place: "Bodega central", signer_tax_id: "22222222-2", signed_at: "2026-11-24T10:00:00" });
  });

  it("the buyer's verdict on a whole envelope (no document named) is read onto the document mailed in it; another envelope is named, not recorded", async () => {
    const verdict = (envelopeId: string, status: number, statusText: string, issuerRut?: string) =>
      buildRecepcionEnvio({
        responderRut: RECIPIENT, recipientRut: issuer.rut, timestamp: "2026-11-24T11:00:00", signer, responseId: 9,
        envelopes: [{ fileName: "EnvioDTE.xml", receivedAt: "2026-11-24T10:59:00", receptionCode: 9, envelopeId, ...(issuerRut ? { issuerRut } : {}), receiverRut: RECIPIENT, status, statusText, documents: [] }],
      });
    // The envelope the service mails the buyer names the document in its SetDTE ID (buyer-delivery.ts).
    const rejected = await uploadReply((await verdict(buyerEnvelopeSetId(invoice.id), 2, "Envio Rechazado - Error de Firma", issuer.rut)).xml);
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ signature_valid: true, envelopes: [], entries: [{ kind: "RECEPTION", status: "NOT_RECEIVED", envelope_id: buyerEnvelopeSetId(invoice.id), document_type: null, folio: null, invoice_id: invoice.id, outcome: "RECORDED" }] });
    const logged = await call("GET", `/api/reception/messages/${rejected.body.message_id}?company_id=${issuer.companyId}`, { key: issuer.owner.key });
    expect(logged.body.detail).toBe(`A RespuestaDTE (RecepcionEnvio): 1 of 1 entries read onto the document of envelope ${buyerEnvelopeSetId(invoice.id)}.`);
    const entry = (await getInvoice()).buyer_replies.at(-1);
    expect(entry).toMatchObject({ kind: "RECEPTION", status: "NOT_RECEIVED", envelope_id: buyerEnvelopeSetId(invoice.id), code: 2, code_text: "Envio Rechazado - Error de Firma", signature: { valid: true }, discrepancies: [] });
    // Without RutEmisor (optional in the schema) the envelope is still looked for among the company's.
    const plain = await uploadReply((await verdict(buyerEnvelopeSetId(invoice.id), 0, "Envio Recibido Conforme")).xml);
    expect(plain.body.entries).toMatchObject([{ status: "RECEIVED", invoice_id: invoice.id, outcome: "RECORDED" }]);
    expect((await getInvoice()).buyer_replies.at(-1)).toMatchObject({ status: "RECEIVED", code_text: "Envio Recibido Conforme" });
    // An envelope the service did not mail (the SII's, another issuer's, a made-up document id): named only.
    const before = (await getInvoice()).buyer_replies.length;
    for (const id of ["SetDoc", buyerEnvelopeSetId("inv_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E")]) {
      const other = await uploadReply((await verdict(id, 0, "Envio Recibido Conforme", issuer.rut)).xml);
      expect(other.body).toMatchObject({ entries: [{ envelope_id: id, outcome: "UNKNOWN_DOCUMENT", invoice_id: null }], envelopes: [{ envelope_id: id, code: 0 }] });
    }
    const foreign = await uploadReply((await verdict(buyerEnvelopeSetId(invoice.id), 0, "Envio Recibido Conforme", "76086428-5")).xml);
    expect(foreign.body.entries).toMatchObject([{ outcome: "NOT_OURS", invoice_id: null }]);
    expect((await getInvoice()).buyer_replies).toHaveLength(before);
  });

  it("files that are not replies are refused with nothing stored", async () => {
    const caf = await simulatorCaf({ documentType: 33, from: 1, to: 10 });
    const supplierEnvelope = await envelope([await signedDte(caf, 1, signer)], signer, { senderRut: "22222222-2" });
    const cases: [string, string | Uint8Array][] = [
      ["an EnvioDTE", supplierEnvelope.xml],
      ["not XML", "hola"],
      ["a DTD", `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]><RespuestaDTE xmlns="http://www.sii.cl/SiiDte"><Resultado ID="R1"/></RespuestaDTE>`],
      ["another namespace", `<RespuestaDTE xmlns="urn:other"><Resultado ID="R1"/></RespuestaDTE>`],
      ["no entry", `<RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Resultado ID="R1"><Caratula version="1.0"><RutResponde>${RECIPIENT}</RutResponde></Caratula></Resultado></RespuestaDTE>`],
    ];
    const before = await replyEvents();
    for (const [what, body] of cases) {
      const res = await uploadReply(body);
      expect(res.status, what).toBe(422);
      expect(res.body.error.code, what).toBe("INVOICE_BUYER_REPLY_INVALID");
    }
    expect(await replyEvents()).toHaveLength(before.length);
  });
});

describe("reading a reply", () => {
  it("a signed Resultado does not sign a forged one put before it, nor a second element holding its ID", async () => {
    const signed = (await resultFor()).xmlString;
    const forgedEntry = `<ResultadoDTE><TipoDTE>33</TipoDTE><Folio>${invoice.folio}</Folio><RUTEmisor>${normalizeRut(issuer.rut)}</RUTEmisor><EstadoDTE>2</EstadoDTE></ResultadoDTE>`;
    // The signature still verifies over R1, but the Resultado read is R2.
    const wrapped = await readBuyerReply(signed.replace('<Resultado ID="R1">', `<Resultado ID="R2">${forgedEntry}</Resultado><Resultado ID="R1">`));
    if ("problem" in wrapped) throw new Error(wrapped.problem);
    // (The Resultado read is the first; the one the signature names is not part of the reply as kept.)
    expect(wrapped.entries[0]).toMatchObject({ code: 2, signature: { ok: false, message: 'No element with ID="R1"' } });
    // Two elements with the ID R1.
    const twice = await readBuyerReply(signed.replace('<Resultado ID="R1">', `<Resultado ID="R1">${forgedEntry}</Resultado><Resultado ID="R1">`));
    if ("problem" in twice) throw new Error(twice.problem);
    expect(twice.signature.ok).toBe(false);
    expect(twice.entries[0]).toMatchObject({ code: 2, signature: { ok: false } });
    const plain = await readBuyerReply(signed);
    if ("problem" in plain) throw new Error(plain.problem);
    expect(plain.signature.ok).toBe(true);
    expect(plain.entries).toMatchObject([{ kind: "RESULT", documentType: 33, folio: invoice.folio, issuerRut: normalizeRut(issuer.rut), code: 0 }]);
  });
});
