/**
 * send_response: our rules before the SII (type, verification, compatibility, repeat, 8-day window),
 * the simulated SII's accept/claim register over its wire protocol, the signed replies.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { verifySignedXml } from "../../src/countries/cl/exchange/verify";
import { checkRules } from "../../src/reception/respond";
import { replyRecipient } from "../../src/reception/replies";
import type { ReceivedRow } from "../../src/reception/view";
import { env } from "cloudflare:workers";
import { partitionedId, storeFor } from "../../src/storage/db/document-store";
import { inboundMessages } from "../../src/storage/db/schema";
import { call, expectError } from "../helpers/api";
import { envelope, signedDte } from "../sii/helpers";
import { addCertificate, getDoc, inject, RECIPIENT, receiver, respond, upload, type Receiver, receptionFixture } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

/** A factura folio `folio` declared to the simulated SII (received `daysAgo` days ago) and uploaded to the receiver. */
async function received(folio: number, daysAgo = 0): Promise<string> {
  const e = await envelope([await signedDte(caf33, folio, cert)], cert);
  await inject(e, new Date(Date.now() - daysAgo * 86_400_000));
  const res = await upload(r, e.xml);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.documents[0].id;
}

describe("send_response", () => {
  it("ACD then ERM combine; signed ResultadoDTE and EnvioRecibos are downloadable; a repeat is idempotent; a claim after them is refused", async () => {
    const id = await received(101);
    const acd = await respond(r, id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(acd.body).toMatchObject({ response_state: "ACCEPTED", responses: [{ action: "ACD", sii_code: 0, files: ["resultado_dte"] }] });
    // Uploaded, not mailed: the reply still goes to the issuer's exchange address from the taxpayer directory.
    expect(acd.body.responses[0].reply_to).toEqual({ email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" });
    expect(acd.body.sii_received_at).not.toBeNull();
    expect(Date.parse(acd.body.response_deadline) - Date.parse(acd.body.sii_received_at)).toBe(8 * 86_400_000);
    const erm = await respond(r, id, "ERM", "Bodega central");
    expect(erm.body.response_state).toBe("ACCEPTED_AND_RECEIVED");
    const again = await respond(r, id, "ACD");
    expect(again.status).toBe(200);
    expect(again.body.responses.map((x: any) => x.action)).toEqual(["ACD", "ERM"]);
    expectError(await respond(r, id, "RCD"), 409, "RECEPTION_ACTION_CONFLICT");
    for (const type of ["resultado_dte", "envio_recibos", "recepcion_envio"]) {
      const f = await call("POST", `/api/reception/invoices/${id}/download/${type}?company_id=${r.companyId}`, { key: r.owner.key });
      expect(f.status, type).toBe(200);
      const bytes = new Uint8Array(await f.raw.arrayBuffer());
      const check = await verifySignedXml(bytes);
      expect(check.ok, `${type}: ${check.message}`).toBe(true);
      if (type === "envio_recibos") expect(decodeLatin1(bytes)).toContain("Ley 19.983");
      if (type === "resultado_dte") expect(decodeLatin1(bytes)).toContain("<EstadoDTE>0</EstadoDTE>");
    }
  });

  it("a claim excludes acceptance", async () => {
    const id = await received(102);
    const rcd = await respond(r, id, "RCD", "Precio no corresponde");
    expect(rcd.body.response_state).toBe("CLAIMED");
    expectError(await respond(r, id, "ACD"), 409, "RECEPTION_ACTION_CONFLICT");
    expectError(await respond(r, id, "RFT"), 409, "RECEPTION_ACTION_CONFLICT");
    const f = await call("POST", `/api/reception/invoices/${id}/download/resultado_dte?company_id=${r.companyId}`, { key: r.owner.key });
    expect(decodeLatin1(new Uint8Array(await f.raw.arrayBuffer()))).toContain("<EstadoDTE>2</EstadoDTE>");
  });

  it("past 8 days from the SII reception time the action is refused, with a sentence", async () => {
    const id = await received(103, 9);
    const res = await respond(r, id, "ACD");
    expectError(res, 422, "RECEPTION_DEADLINE_PASSED");
    expect(res.body.error.message).toMatch(/8 days/);
    expect((await getDoc(r, id)).body.sii_received_at).not.toBeNull();
  });

  it("a document that failed verification cannot be accepted, but can be claimed", async () => {
    const d = await signedDte(caf33, 104, cert);
    const e = await envelope([d], cert);
    await inject(e);
    const tampered = decodeLatin1(e.xml).replace("<NmbItem>Servicio de prueba</NmbItem>", "<NmbItem>Servicio de prueba X</NmbItem>");
    const id = (await upload(r, encodeLatin1(tampered))).body.documents[0].id;
    expectError(await respond(r, id, "ACD"), 422, "RECEPTION_ACTION_UNVERIFIED");
    expectError(await respond(r, id, "ERM"), 422, "RECEPTION_ACTION_UNVERIFIED");
    expect((await respond(r, id, "RCD")).status).toBe(200);
  });

  it("a document the SII does not hold is refused; nothing recorded", async () => {
    // In test mode only what verifies becomes known to the simulated register: a tampered copy does not.
    const e = await envelope([await signedDte(caf33, 105, cert)], cert);
    const tampered = decodeLatin1(e.xml).replace("<NmbItem>Servicio de prueba</NmbItem>", "<NmbItem>Servicio de prueba X</NmbItem>");
    const id = (await upload(r, encodeLatin1(tampered))).body.documents[0].id;
    expect((await getDoc(r, id)).body.sii_received_at).toBeNull();
    expectError(await respond(r, id, "RCD", "Contenido alterado"), 422, "RECEPTION_NOT_AT_AUTHORITY");
    expect((await getDoc(r, id)).body.responses).toEqual([]);
  });

  it("test mode: an uploaded document that verifies is known to the simulated register, its deadline shown, and can be accepted offline", async () => {
    const before = Date.now();
    const id = (await upload(r, (await signedDte(caf33, 107, cert)).xml)).body.documents[0].id;
    const doc = (await getDoc(r, id)).body;
    expect(Date.parse(doc.sii_received_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(doc.response_deadline) - Date.parse(doc.sii_received_at)).toBe(8 * 86_400_000);
    expect(doc.seconds_left).toBeGreaterThan(8 * 86_400 - 60);
    const acd = await respond(r, id, "ACD");
    expect(acd.status, JSON.stringify(acd.body)).toBe(200);
    expect(acd.body).toMatchObject({ response_state: "ACCEPTED", responses: [{ action: "ACD", sii_code: 0 }] });
    const erm = await respond(r, id, "ERM");
    expect(erm.body).toMatchObject({ response_state: "ACCEPTED_AND_RECEIVED", responses: [{ action: "ACD" }, { action: "ERM", sii_code: 0 }] });
  });

  it("only 33, 34 and 43 take actions; a bad body is a validation error", async () => {
    const row = { documentType: 52, folio: 1, issuerRut: "76086428-5", xmlKey: "k", responses: "[]", responseState: "NOT_APPLICABLE", responseDeadline: null, receptionStatus: 0, duplicate: false } as any;
    expect(() => checkRules(row, "ACD", Date.now())).toThrow(/Only facturas/);
    const id = await received(106);
    expectError(await call("POST", `/api/reception/invoices/${id}/send_response?company_id=${r.companyId}`, { key: r.owner.key, json: { action: "XYZ" } }), 400, "VALIDATION_FAILED");
  });
});

describe("the RecepcionEnvio answers the file that brought the document", () => {
  const download = async (id: string) => {
    const f = await call("POST", `/api/reception/invoices/${id}/download/recepcion_envio?company_id=${r.companyId}`, { key: r.owner.key });
    expect(f.status).toBe(200);
    const bytes = new Uint8Array(await f.raw.arrayBuffer());
    const check = await verifySignedXml(bytes);
    expect(check.ok, check.message).toBe(true);
    const xml = decodeLatin1(bytes);
    const field = (name: string) => xml.match(new RegExp(`<${name}>([^<]*)</${name}>`))?.[1] ?? null;
    return { xml, field };
  };

  it("names the envelope: its file name, SetDTE ID, signature digest and Caratula RUTs; EstadoRecepEnv on the envelope, EstadoRecepDTE on the document", async () => {
    // The exchange envelope a supplier mails: its Caratula names the buyer as RutReceptor.
    const e = await envelope([await signedDte(caf33, 131, cert)], cert, { setId: "EnvioProveedor-0131", receiverRut: RECIPIENT });
    const res = await upload(r, e.xml, "EnvioDTE_76086428-5_F131.xml");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.documents[0];
    // The company has a certificate: the file was answered at intake and the answer mailed to the issuer's exchange address.
    expect(doc.received_file).toEqual({
      name: "EnvioDTE_76086428-5_F131.xml", envelope_id: "EnvioProveedor-0131", message_id: expect.stringMatching(/^inm_/), received_at: expect.stringMatching(/^\d{4}-/),
      acknowledgment: { at: expect.any(String), reply_to: { email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" }, mail: { state: "SENT", attempts: 1, sent_at: expect.any(String), message: null, next_attempt_at: null, delivered_at: null } },
      superseded: [],
    });
    // Taken in with the document (only a document the SII's register listed first has an earlier received_at).
    expect(Math.abs(Date.parse(doc.received_file.received_at) - Date.parse(doc.received_at))).toBeLessThan(60_000);
    const { xml, field } = await download(doc.id);
    // The envelope's own signature is the file's last: its DigestValue is the one over the SetDTE.
    const digests = [...decodeLatin1(e.xml).matchAll(/<DigestValue>([^<]*)<\/DigestValue>/g)].map((m) => m[1]);
    expect({ NmbEnvio: field("NmbEnvio"), EnvioDTEID: field("EnvioDTEID"), Digest: field("Digest"), RutEmisor: field("RutEmisor"), RutReceptor: field("RutReceptor"), EstadoRecepEnv: field("EstadoRecepEnv"), RecepEnvGlosa: field("RecepEnvGlosa"), NroDTE: field("NroDTE"), EstadoRecepDTE: field("EstadoRecepDTE") }).toEqual({
      NmbEnvio: "EnvioDTE_76086428-5_F131.xml", EnvioDTEID: "EnvioProveedor-0131", Digest: digests[digests.length - 1], RutEmisor: "76086428-5", RutReceptor: RECIPIENT, EstadoRecepEnv: "0", RecepEnvGlosa: "Envio Recibido Conforme", NroDTE: "1", EstadoRecepDTE: "0",
    });
    expect(xml).toContain("<Folio>131</Folio>");
    // The document's own view links the inbound message that brought it.
    const message = await call("GET", `/api/reception/messages/${doc.received_file.message_id}?company_id=${r.companyId}`, { key: r.owner.key });
    expect(message.status).toBe(200);
  });

  it("an envelope whose signature fails: EstadoRecepEnv 2 and no Digest; a standalone DTE: its document's id as EnvioDTEID", async () => {
    const d = await signedDte(caf33, 132, cert);
    const tampered = decodeLatin1((await envelope([d], cert)).xml).replace(`<MntTotal>${d.total}</MntTotal>`, `<MntTotal>${Number(d.total) + 1}</MntTotal>`);
    const bad = await upload(r, encodeLatin1(tampered), "tampered.xml");
    expect(bad.status).toBe(201);
    const b = await download(bad.body.documents[0].id);
    // This one is the envelope made for the SII: RutReceptor says what its Caratula says (the field is "informado en la Caratula").
    expect([b.field("NmbEnvio"), b.field("EstadoRecepEnv"), b.field("RecepEnvGlosa"), b.field("Digest"), b.field("RutReceptor"), b.field("EstadoRecepDTE")]).toEqual(["tampered.xml", "2", "Envio Rechazado - Error de Firma", null, "60803000-K", "1"]);

    const lone = await upload(r, (await signedDte(caf33, 133, cert)).xml, "F133 factura ✓.xml");
    expect(lone.status, JSON.stringify(lone.body)).toBe(201);
    const doc = lone.body.documents[0];
    expect(doc.received_file).toMatchObject({ name: "F133 factura ✓.xml", envelope_id: null, acknowledgment: { reply_to: { source: "TAXPAYER_DIRECTORY" } } });
    const s = await download(doc.id);
    // The ISO-8859-1 reply cannot hold every character of a file name: those become "_".
    expect([s.field("NmbEnvio"), s.field("EnvioDTEID"), s.field("EstadoRecepEnv"), s.field("EstadoRecepDTE")]).toEqual(["F133 factura _.xml", doc.id, "0", "0"]);
  });
});

describe("the RecepcionEnvio of a file of several documents", () => {
  it("is built at intake, one for the file: both documents download it, each listed with its own EstadoRecepDTE", async () => {
    const dup = await signedDte(caf33, 141, cert);
    await upload(r, (await envelope([dup], cert)).xml);
    // Folio 141 again with other content: a duplicate (EstadoRecepDTE 4) beside a new folio 142.
    const other = await signedDte(caf33, 141, cert, "33", { items: [{ quantity: 3, unit_price: 777, description: "Otro" }] });
    const e = await envelope([await signedDte(caf33, 142, cert), other], cert, { setId: "Lote-142", receiverRut: RECIPIENT });
    const res = await upload(r, e.xml, "lote.xml");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.documents.map((d: any) => [d.folio, d.outcome, d.verification.reception_status])).toEqual([[142, "NEW", 0], [141, "DUPLICATE", 4]]);
    const acks = res.body.documents.map((d: any) => d.received_file.acknowledgment);
    expect(acks[0]).toEqual({ at: expect.any(String), reply_to: { email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" }, mail: { state: "SENT", attempts: 1, sent_at: expect.any(String), message: null, next_attempt_at: null, delivered_at: null } });
    expect(acks[1]).toEqual(acks[0]);
    const files = await Promise.all(res.body.documents.map(async (d: any) => decodeLatin1(new Uint8Array(await (await call("POST", `/api/reception/invoices/${d.id}/download/recepcion_envio?company_id=${r.companyId}`, { key: r.owner.key })).raw.arrayBuffer()))));
    expect(files[1]).toBe(files[0]);
    expect((await verifySignedXml(encodeLatin1(files[0]!))).ok).toBe(true);
    expect(files[0]).toContain("<NmbEnvio>lote.xml</NmbEnvio>");
    expect(files[0]).toContain("<EnvioDTEID>Lote-142</EnvioDTEID>");
    expect(files[0]).toContain("<NroDTE>2</NroDTE>");
    const listed = [...files[0]!.matchAll(/<RecepcionDTE>[\s\S]*?<Folio>(\d+)<\/Folio>[\s\S]*?<EstadoRecepDTE>(\d+)<\/EstadoRecepDTE>/g)].map((m) => [m[1], m[2]]);
    expect(listed).toEqual([["142", "0"], ["141", "4"]]);
  });

  it("a company without a certificate: none at intake; the download says a certificate is needed, then builds the document's own", async () => {
    const bare = await receiver(RECIPIENT, false);
    const res = await upload(bare, (await envelope([await signedDte(caf33, 151, cert)], cert)).xml);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.documents[0];
    expect(doc.received_file.acknowledgment).toBeNull();
    const url = `/api/reception/invoices/${doc.id}/download/recepcion_envio?company_id=${bare.companyId}`;
    expectError(await call("POST", url, { key: bare.owner.key }), 422, "CERTIFICATE_REQUIRED");
    await addCertificate(bare);
    const f = await call("POST", url, { key: bare.owner.key });
    expect(f.status).toBe(200);
    const xml = decodeLatin1(new Uint8Array(await f.raw.arrayBuffer()));
    expect(xml).toContain("<NmbEnvio>envio.xml</NmbEnvio>");
    expect(xml).toContain("<Folio>151</Folio>");
    // Nothing was mailed at intake, and a download mails nothing: the record still says so.
    expect((await call("GET", `/api/reception/invoices/${doc.id}?company_id=${bare.companyId}`, { key: bare.owner.key })).body.received_file.acknowledgment).toBeNull();
  });
});

describe("where replies are mailed", () => {
  const row = (over: Partial<ReceivedRow>) => ({ companyId: r.companyId, issuerRut: "76086428-5", channel: "UPLOAD", messageId: null, ...over }) as ReceivedRow;

  it("the directory's exchange address first, then the sender of the mail that brought it, else none", async () => {
    // The message that brought a document is in the store its id names.
    const messageId = partitionedId("inm", 1);
    await storeFor(env, r.companyId, 1).db.insert(inboundMessages).values({ id: messageId, companyId: r.companyId, channel: "EMAIL", sender: "facturas@proveedor.cl", recipient: "x@y", size: 10, outcome: "STORED" });
    expect(await replyRecipient(env, row({}))).toEqual({ email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" });
    expect(await replyRecipient(env, row({ channel: "EMAIL", messageId }))).toEqual({ email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" });
    expect(await replyRecipient(env, row({ issuerRut: "77777777-7", channel: "EMAIL", messageId }))).toEqual({ email: "facturas@proveedor.cl", source: "EMAIL_SENDER" });
    expect(await replyRecipient(env, row({ issuerRut: "77777777-7" }))).toBeNull();
    expect(await replyRecipient(env, row({ issuerRut: "77777777-7", channel: "SII" }))).toBeNull();
  });
});
