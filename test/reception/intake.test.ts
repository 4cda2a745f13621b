/**
 * Upload channel and the one intake: verification checks per DTE, idempotency, duplicates, the DTE
 * downloaded as verified, filters, and tenancy.
 */
import { strToU8, zipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { decodeLatin1, encodeLatin1, parseXml } from "../../src/countries/cl/xml/xml";
import { canonicalize, verifyInbound } from "../../src/countries/cl";
import { call, expectError, newOwner, newCompany } from "../helpers/api";
import { envelope, ISSUER_RUT, signedDte, simulatorCaf } from "../sii/helpers";
import { receiver, upload, RECIPIENT, type Receiver, receptionFixture } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

const checksOf = (doc: any) => Object.fromEntries(doc.verification.checks.map((c: any) => [c.name, c.result]));

describe("upload intake", () => {
  it("an EnvioDTE with two DTEs: both stored, verified, each check passed; the XML comes back as it verified", async () => {
    const d1 = await signedDte(caf33, 1, cert);
    const d2 = await signedDte(caf33, 2, cert);
    const env_ = await envelope([d1, d2], cert);
    const res = await upload(r, env_.xml);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.kind).toBe("EnvioDTE");
    expect(res.body.documents.map((d: any) => [d.folio, d.outcome, d.verification.status, d.verification.reception_status])).toEqual([[1, "NEW", "VERIFIED", 0], [2, "NEW", "VERIFIED", 0]]);
    const doc = res.body.documents[0];
    expect(checksOf(doc)).toEqual({ envelope_signature: "PASSED", dte_signature: "PASSED", signer: "PASSED", ted: "PASSED", caf: "PASSED", recipient_rut: "PASSED", issuer_rut: "PASSED", schema: "PASSED", totals: "PASSED", duplicate: "PASSED", sii_status: "NOT_CHECKED" });
    expect(doc).toMatchObject({ issuer: { tax_id: ISSUER_RUT, legal_name: "EMPRESA DE PRUEBA SPA" }, recipient: { tax_id: RECIPIENT }, document_type: "33", issue_date: d1.issueDate, totals: { total: d1.total }, channel: "UPLOAD", xml_status: "RECEIVED", response_state: "PENDING" });
    // Test mode: the simulated SII's register learned of it as it was taken in (test-register.ts).
    expect(Date.parse(doc.response_deadline) - Date.parse(doc.sii_received_at)).toBe(8 * 86_400_000);
    expect(doc.lines[0]).toMatchObject({ line: 1, name: "Servicio de prueba", quantity: "2" });
    const xml = await call("POST", `/api/reception/invoices/${doc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    expect(xml.status).toBe(200);
    // The verified element's canonical form behind a declaration of its encoding; verified again, it passes the same way.
    const served = new Uint8Array(await xml.raw.arrayBuffer());
    expect(xml.headers.get("Content-Type")).toBe("application/xml; charset=ISO-8859-1");
    expect(served).toEqual(encodeLatin1(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${canonicalize(parseXml(d1.element))}`));
    const again = await verifyInbound(served, { mode: "simulator" });
    expect(again.documents.map((d) => [d.ok, d.folio, d.total])).toEqual([[true, 1, d1.total]]);
    const pdf = await call("POST", `/api/reception/invoices/${doc.id}/download/pdf?company_id=${r.companyId}`, { key: r.owner.key });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
    const bytes = new Uint8Array(await pdf.raw.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe("%PDF-");
    expect(bytes.length).toBeGreaterThan(2000);
  });

  it("the same bytes again change nothing; a single DTE file is taken too", async () => {
    const env_ = await envelope([await signedDte(caf33, 3, cert)], cert);
    const first = await upload(r, env_.xml);
    const again = await upload(r, env_.xml);
    expect(again.status).toBe(201);
    expect(again.body.documents.map((d: any) => [d.id, d.outcome])).toEqual([[first.body.documents[0].id, "ALREADY_RECEIVED"]]);
    const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=3`, { key: r.owner.key });
    expect(list.body.total).toBe(1);
    const single = await signedDte(caf33, 4, cert);
    const res = await upload(r, single.xml, "dte.xml");
    expect(res.body.kind).toBe("DTE");
    expect(checksOf(res.body.documents[0]).envelope_signature).toBe("NOT_APPLICABLE");
    expect(res.body.documents[0].verification.reception_status).toBe(0);
  });

  it("a tampered amount fails the DTE signature (EstadoRecepDTE 1) and the stamp, which names the amount it holds, but is stored and flagged", async () => {
    const d = await signedDte(caf33, 5, cert);
    const env_ = await envelope([d], cert);
    const tampered = decodeLatin1(env_.xml).replace(`<MntTotal>${d.total}</MntTotal>`, `<MntTotal>${Number(d.total) + 1}</MntTotal>`);
    const res = await upload(r, encodeLatin1(tampered));
    expect(res.status).toBe(201);
    const doc = res.body.documents[0];
    expect(doc.verification).toMatchObject({ status: "FAILED", reception_status: 1 });
    expect(checksOf(doc)).toMatchObject({ envelope_signature: "FAILED", dte_signature: "FAILED", ted: "FAILED", caf: "PASSED" });
    // The stamp itself verifies under its CAF; what fails is its agreement with the altered document.
    const ted = doc.verification.checks.find((c: any) => c.name === "ted");
    expect(ted.message).toBe(`The stamp disagrees with the document: MNT ${d.total} ≠ MntTotal ${Number(d.total) + 1}`);
    // The record keeps the document's own (altered) total, as received.
    expect(doc.totals.total).toBe(String(Number(d.total) + 1));
  });

  it("a DTE that departs from the SII schema fails the schema check, which names the element and the rule", async () => {
    const d = await signedDte(caf33, 6, cert);
    const broken = decodeLatin1((await envelope([d], cert)).xml).replace(/<RznSocRecep>[^<]*<\/RznSocRecep>/, `<RznSocRecep>${"B".repeat(101)}</RznSocRecep>`).replace(/(<TipoDTE>33<\/TipoDTE>\n?)(<Folio>6<\/Folio>\n?)/, "$2$1");
    const res = await upload(r, encodeLatin1(broken));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const schema = res.body.documents[0].verification.checks.find((c: any) => c.name === "schema");
    expect(schema.result).toBe("FAILED");
    expect(schema.message).toContain("DTE/Documento/Encabezado/IdDoc: TipoDTE is missing (found Folio instead)");
    expect(schema.message).toContain("DTE/Documento/Encabezado/Receptor/RznSocRecep: 'BBBB");
    expect(schema.message).toContain("longer than 100 characters");
  });

  it("a removed signature and a foreign CAF are each reported on their own check", async () => {
    const d = await signedDte(caf33, 6, cert);
    const unsigned = d.xmlString.replace(/<Signature[\s\S]*<\/Signature>/, "");
    const a = await upload(r, encodeLatin1(unsigned), "x.xml");
    expect(checksOf(a.body.documents[0])).toMatchObject({ dte_signature: "FAILED", ted: "PASSED", caf: "PASSED" });
    const foreign = await simulatorCaf({ documentType: 33, from: 1, to: 10 }, {});
    // A CAF signed by a key the reception does not trust: rebuild one with an untrusted IDK.
    const bad = await signedDte(foreign, 7, cert);
    const xml = bad.xmlString.replace(/<IDK>\d+<\/IDK>/, "<IDK>12345</IDK>");
    const b = await upload(r, encodeLatin1(xml), "y.xml");
    expect(checksOf(b.body.documents[0])).toMatchObject({ caf: "FAILED", ted: "NOT_CHECKED" });
    expect(b.body.documents[0].verification.reception_status).toBe(1);
  });

  it("a DTE addressed to another RUT fails recipient_rut (3); a different DTE with a known folio is a duplicate (4)", async () => {
    const other = await receiver("96790240-3", false);
    const env_ = await envelope([await signedDte(caf33, 8, cert)], cert);
    const res = await upload(other, env_.xml);
    expect(res.body.documents[0].verification.reception_status).toBe(3);
    expect(checksOf(res.body.documents[0]).recipient_rut).toBe("FAILED");
    const again = await envelope([await signedDte(caf33, 8, cert, "33", { items: [{ quantity: 9, unit_price: 1000, description: "Otro" }] })], cert);
    const dup = await upload(r, (await envelope([await signedDte(caf33, 8, cert)], cert)).xml);
    expect(dup.body.documents[0].outcome).toBe("NEW");
    const res2 = await upload(r, again.xml);
    expect(res2.body.documents[0]).toMatchObject({ outcome: "DUPLICATE", verification: { reception_status: 4, duplicate: true } });
    const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=8&issuer_tax_id=76.086.428-5`, { key: r.owner.key });
    expect(list.body.total).toBe(2);
    const failed = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&verification=FAILED&folio=8`, { key: r.owner.key });
    expect(failed.body.data.map((d: any) => d.verification.reception_status)).toEqual([4]);
  });

  it("what is not an EnvioDTE or DTE is refused and nothing is stored; a DTD is refused", async () => {
    expectError(await upload(r, "<hello/>"), 422, "RECEPTION_FILE_INVALID");
    expectError(await upload(r, "not xml at all"), 422, "RECEPTION_FILE_INVALID");
    const zipped = await upload(r, zipSync({ "envio.xml": strToU8("<EnvioDTE/>") }), "envio.zip");
    expectError(zipped, 422, "RECEPTION_FILE_INVALID");
    expect(zipped.body.error.message).toMatch(/^The file is a zip archive: upload the XML file inside it/);
    // Malformed XML is named in the parser's words, once.
    const malformed = await upload(r, '<EnvioDTE version=1.0></EnvioDTE>');
    expect(malformed.body.error.message).toBe('The file was not taken in: The received file is not well-formed XML: 1:19: unquoted attribute value.');
    // A file that is not XML at all (notes, a PDF) says so in a line, never quoting its content.
    const text = await upload(r, `# Notas\n${"Texto libre. ".repeat(200)}`, "notas.txt");
    expectError(text, 422, "RECEPTION_FILE_INVALID");
    expect(text.body.error.message).toBe('The file was not taken in: The received file is not XML: it does not begin with "<"');
    expectError(await upload(r, '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><EnvioDTE>&a;</EnvioDTE>'), 422, "RECEPTION_FILE_INVALID");
    // A buyer's reply to an issued document is named as such.
    const reply = await upload(r, '<?xml version="1.0" encoding="ISO-8859-1"?><RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Resultado ID="R1"/></RespuestaDTE>');
    expect(reply.body.error.message).toBe("The file was not taken in: The file is a RespuestaDTE (a buyer's reception or acceptance reply) to a document this company issued, not a document sent to it: upload it at POST /api/companies/{company_id}/invoices/buyer_replies (mailed to the reception address, it is read by itself).");
    const recibos = await upload(r, '<sii:EnvioRecibos xmlns:sii="http://www.sii.cl/SiiDte" version="1.0"><sii:SetRecibos ID="S"/></sii:EnvioRecibos>');
    expect(recibos.body.error.message).toMatch(/^The file was not taken in: The file is an EnvioRecibos \(a buyer's receipt of goods or services\)/);
    expectError(await call("POST", `/api/reception/invoices/upload?company_id=${r.companyId}`, { key: r.owner.key, body: new FormData() }), 400, "VALIDATION_FAILED");
  });

  it("another client's key never sees the documents; a foreign id under one's own company is 404", async () => {
    const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}`, { key: r.owner.key });
    const id = list.body.data[0].id;
    const stranger = await newOwner("Stranger");
    const own = await newCompany(stranger);
    expectError(await call("GET", `/api/reception/invoices/${id}?company_id=${r.companyId}`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expectError(await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expectError(await call("GET", `/api/reception/invoices/${id}?company_id=${own}`, { key: stranger.key }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    expectError(await call("POST", `/api/reception/invoices/${id}/download/xml?company_id=${own}`, { key: stranger.key }), 404, "RECEIVED_DOCUMENT_NOT_FOUND");
    expectError(await call("GET", `/api/reception/invoices/list`, { key: r.owner.key }), 400, "VALIDATION_FAILED");
  });
});
