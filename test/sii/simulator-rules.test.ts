import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import { buildDteXml, dteId, XML_DECL, type SignedDte } from "../../src/countries/cl/documents/dte";
import { computeDocument, formatAmount, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { stampTed } from "../../src/countries/cl/documents/ted";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { encodeLatin1, parseXml } from "../../src/countries/cl/xml/xml";
import { signXml } from "../../src/countries/cl/xml/xmldsig";
import { validateEnvio, type DocumentVerdict } from "../../src/countries/cl/simulator/validate";
import { buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { HOLDER_RUT, ISSUER_RUT, envelope, fakeCredentials, invoice, signedDte, simulatorCaf } from "./helpers";
import { SAMPLE_INPUTS } from "../helpers/cl-samples";

/**
 * The simulated SII's content rules (src/countries/cl/simulator/document-rules.ts, docs/simulator-fidelity.md):
 * each test builds what our engine refuses to build (stamped and signed without its checks) and
 * reads the simulator's verdict, naming the rule id.
 */
let cert: SigningCredentials;
let caf33: Caf;
let caf52: Caf;
let caf61: Caf;
beforeAll(async () => {
  cert = await fakeCredentials({ notBefore: new Date(Date.now() - 400 * 86_400_000) });
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 100, authorizedOn: "2026-06-01" });
  caf52 = await simulatorCaf({ documentType: 52, from: 1, to: 100, authorizedOn: "2026-06-01" });
  caf61 = await simulatorCaf({ documentType: 61, from: 1, to: 100, authorizedOn: "2026-06-01" });
});

/** A DTE stamped at `timestamp` and signed, with none of the engine's CAF or content checks. */
async function crafted(caf: Caf, folio: number, body: InvoiceInput, timestamp = "2026-11-20T10:30:00", edit: (xml: string) => string = (x) => x): Promise<SignedDte> {
  const d = computeDocument(body);
  const t = d.type.code;
  const total = formatAmount(d, d.totals.total);
  const ted = await stampTed({ issuerRut: ISSUER_RUT, documentType: t, folio, issueDate: d.issueDate, receiverRut: d.receiver.rut, receiverName: d.receiver.legalName, total, firstItemName: d.lines[0]!.name, caf, timestamp });
  const id = dteId(t, folio);
  const element = await signXml(edit(buildDteXml(d, folio, ted, timestamp)), id, cert);
  const xmlString = XML_DECL + element + "\n";
  return { id, documentType: t, folio, issuerRut: ISSUER_RUT, receiverRut: d.receiver.rut, issueDate: d.issueDate, total, element, xmlString, xml: encodeLatin1(xmlString), ted, envelope: "EnvioDTE" };
}

async function verdict(dte: SignedDte): Promise<DocumentVerdict> {
  const env = await envelope([dte], cert);
  const v = await validateEnvio(parseXml(new TextDecoder("latin1").decode(env.xml)), "EnvioDTE", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
  expect(v.finalStatus, v.errors.join("; ")).toBe("EPR");
  return v.documents[0]!;
}

const ref = (over: Record<string, unknown> = {}) => [{ number: 5, invoice_type: "33", invoice_date: "2026-11-20", ...over }];
const note = (reason: string, over: Partial<InvoiceInput> = {}): InvoiceInput => ({ ...invoice("33"), invoice_type: "61", reason_code: reason, billing_reference: ref(), ...over });

describe("what the simulated SII rejects or objects to in a document's content", () => {
  it("a correct document is DOK (the rules below are what changes)", async () => {
    expect(await verdict(await crafted(caf33, 1, invoice("33")))).toMatchObject({ status: "DOK", errors: [] });
  });

  it("[REF-FOLIO-0] a reference with folio 0 and no global indicator: RCH", async () => {
    const v = await verdict(await crafted(caf61, 1, note("COM", { billing_reference: ref({ number: 0 }) })));
    expect(v.status).toBe("RCH");
    expect(v.errors).toEqual(["REF-FOLIO-0 Referencia 1 con FolioRef 0 sin IndGlobal"]);
  });

  it("[GUIA-ZERO-SALE] a zero-amount guía de despacho declared as a sale: RCH", async () => {
    const v = await verdict(await crafted(caf52, 1, { ...invoice("33"), invoice_type: "52", items: [{ quantity: 5, unit_price: 0, description: "Cajas" }] }));
    expect(v.status).toBe("RCH");
    expect(v.errors).toEqual(["GUIA-ZERO-SALE Guia de despacho con IndTraslado 1 (venta) y MntTotal 0"]);
  });

  it("[CAF-DATE] an issue date before the CAF's authorisation date: RCH (and the stamp too: TED-1-646)", async () => {
    const v = await verdict(await crafted(caf33, 2, { ...invoice("33"), invoice_date: "2026-05-20 10:00:00" }, "2026-05-20T10:00:00"));
    expect(v.status).toBe("RCH");
    expect(v.errors).toEqual([
      "CAF-DATE FchEmis 2026-05-20 anterior a la fecha de autorizacion del CAF (2026-06-01)",
      "TED-1-646 Fecha del timbre (TSTED 2026-05-20T10:00:00) anterior a la autorizacion del CAF (2026-06-01)",
    ]);
  });

  it("[TED-1-646] a stamp dated before the CAF's authorisation: a reparo (RLV)", async () => {
    const v = await verdict(await crafted(caf33, 3, { ...invoice("33"), invoice_date: "2026-06-01 10:00:00" }, "2026-05-31T23:00:00"));
    expect(v).toMatchObject({ status: "RLV", errors: ["TED-1-646 Fecha del timbre (TSTED 2026-05-31T23:00:00) anterior a la autorizacion del CAF (2026-06-01)"] });
  });

  it("[CAF-EXPIRED] folios of a 33 used more than six months after authorisation: RCH", async () => {
    const old = await simulatorCaf({ documentType: 33, from: 500, to: 510, authorizedOn: "2026-01-10" });
    const v = await verdict(await crafted(old, 500, invoice("33")));
    expect(v.status).toBe("RCH");
    expect(v.errors).toEqual(["CAF-EXPIRED Folios del CAF autorizado el 2026-01-10 vencidos (6 meses) a la fecha 2026-11-20"]);
  });

  it("[DATE-FUTURE] an issue date after the day of reception: RCH", async () => {
    const v = await verdict(await crafted(caf33, 4, { ...invoice("33"), invoice_date: "2049-01-01 10:00:00" }));
    expect(v.status).toBe("RCH");
    expect(v.errors).toContain("DATE-FUTURE FchEmis 2049-01-01 posterior a la fecha de recepcion");
  });

  it("[NOTE-REF] a credit note without a coded reference to what it modifies: RCH", async () => {
    // The engine refuses such a note (REFERENCE_REQUIRED); the CodRef is taken out before signing.
    const v = await verdict(await crafted(caf61, 2, note("COM"), undefined, (x) => x.replace("<CodRef>3</CodRef>", "")));
    expect(v.status).toBe("RCH");
    expect(v.errors).toEqual(["NOTE-REF Nota 61 sin Referencia con CodRef (1, 2 o 3) al documento que modifica"]);
  });

  it("[NOTE-TARGET] an export credit note whose coded reference is not to an export document: RCH", async () => {
    const caf112 = await simulatorCaf({ documentType: 112, from: 1, to: 10, authorizedOn: "2026-06-01" });
    const body = { ...SAMPLE_INPUTS["112"]!, invoice_date: "2026-11-20 10:30:00" };
    expect(await verdict(await crafted(caf112, 1, body))).toMatchObject({ status: "DOK", errors: [] });
    // The engine refuses this at POST (INVOICE_REFERENCE_INVALID); the reference becomes a 33 before signing.
    const v = await verdict(await crafted(caf112, 2, body, undefined, (x) => x.replace("<TpoDocRef>110</TpoDocRef>", "<TpoDocRef>33</TpoDocRef>")));
    expect(v).toMatchObject({ status: "RCH", errors: ["NOTE-TARGET Nota de exportacion 112 cuyas Referencias con CodRef no son a un documento de exportacion (110, 111, 112)"] });
  });

  it("[COT-AMOUNT] a text correction (CodRef 2) with an amount: RCH", async () => {
    // The engine refuses this body (TOTALS_MISMATCH); the CodRef becomes 2 before signing.
    const v = await verdict(await crafted(caf61, 3, note("COM"), undefined, (x) => x.replace("<CodRef>3</CodRef>", "<CodRef>2</CodRef>")));
    expect(v).toMatchObject({ status: "RCH", errors: ["COT-AMOUNT Nota que corrige texto (CodRef 2) con MntTotal 2380; debe ser 0"] });
  });
});

describe("schema limits the simulated SII checks (RSC)", () => {
  it("[LINES-MAX] more than 60 Detalle, [REFS-MAX] more than 40 Referencia, [DATE-RANGE] FchEmis outside FechaType", async () => {
    const dte = await crafted(caf33, 6, invoice("33"));
    const line = /<Detalle>[\s\S]*?<\/Detalle>/.exec(dte.element)![0];
    const many = dte.element.replace(line, line.repeat(61)).replace(/<FchEmis>[^<]*<\/FchEmis>/, "<FchEmis>1999-12-31</FchEmis>");
    const env = await envelope([{ ...dte, element: many }], cert);
    const v = await validateEnvio(parseXml(new TextDecoder("latin1").decode(env.xml)), "EnvioDTE", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
    expect(v.finalStatus).toBe("RSC");
    expect(v.errors).toEqual(["DTE[1] FchEmis fuera de rango (2000-01-01 a 2050-12-31)", "DTE[1] tiene 61 Detalle (maximo 60)"]);
    const refs = await crafted(caf61, 4, note("COM", { billing_reference: Array.from({ length: 40 }, (_, i) => ({ number: i + 1, invoice_type: "33", invoice_date: "2026-11-20" })) }));
    const oneMore = /<Referencia>[\s\S]*?<\/Referencia>/.exec(refs.element)![0];
    const env2 = await envelope([{ ...refs, element: refs.element.replace(oneMore, oneMore + oneMore) }], cert);
    const v2 = await validateEnvio(parseXml(new TextDecoder("latin1").decode(env2.xml)), "EnvioDTE", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
    expect(v2).toMatchObject({ finalStatus: "RSC", errors: ["DTE[1] tiene 41 Referencia (maximo 40)"] });
  });
});

describe("envelope, carátula, signature and stamp checks of the simulated SII", () => {
  const validate = (xml: Uint8Array | string, ctx: Partial<Parameters<typeof validateEnvio>[2]> = {}) =>
    validateEnvio(parseXml(typeof xml === "string" ? xml : new TextDecoder("latin1").decode(xml)), "EnvioDTE", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set(), ...ctx });
  const latin1 = (b: Uint8Array) => new TextDecoder("latin1").decode(b);

  it("[SCH-TYPES] a boleta type inside an EnvioDTE: RSC", async () => {
    const env = await envelope([await crafted(caf33, 10, invoice("33"))], cert);
    const v = await validate(latin1(env.xml).replace("<TipoDTE>33</TipoDTE>", "<TipoDTE>39</TipoDTE>"));
    expect(v).toMatchObject({ finalStatus: "RSC", errors: ["DTE[1] TipoDTE 39 no permitido en EnvioDTE"] });
  });

  it("[CAR-RESOL] a FchResol that is not a date: RSC", async () => {
    const env = await envelope([await crafted(caf33, 19, invoice("33"))], cert);
    const v = await validate(latin1(env.xml).replace("<FchResol>2026-01-15</FchResol>", "<FchResol>2026-1-15</FchResol>"));
    expect(v).toMatchObject({ finalStatus: "RSC", errors: ["Caratula/FchResol debe ser AAAA-MM-DD"] });
  });

  it("[BOL-INDSERVICIO] a boleta without IndServicio: RSC", async () => {
    const caf39 = await simulatorCaf({ documentType: 39, from: 1, to: 10 });
    const env = await envelope([await signedDte(caf39, 1, cert, "39")], cert);
    const xml = latin1(env.xml);
    expect(xml).toMatch(/<IndServicio>3<\/IndServicio>/);
    const v = await validateEnvio(parseXml(xml.replace("<IndServicio>3</IndServicio>", "")), "EnvioBOLETA", { companyRut: ISSUER_RUT, now: new Date(), acceptedAmong: async () => new Set() });
    expect(v).toMatchObject({ finalStatus: "RSC", errors: ["DTE[1] IndServicio obligatorio (1-4) en boletas"] });
  });

  it("[RUT-FORMAT] a receiver RUT with a wrong check digit: RSC", async () => {
    const env = await envelope([await crafted(caf33, 11, invoice("33"))], cert);
    const v = await validate(latin1(env.xml).replace("<RUTRecep>77879240-0</RUTRecep>", "<RUTRecep>77879240-1</RUTRecep>"));
    expect(v).toMatchObject({ finalStatus: "RSC", errors: ["DTE[1] Receptor/RUTRecep invalido"] });
  });

  it("[ENV-CERT] an envelope signed with a certificate no longer in force: RFR", async () => {
    const env = await envelope([await crafted(caf33, 12, invoice("33"))], cert);
    const v = await validate(env.xml, { now: new Date(Date.now() + 20 * 365 * 86_400_000) });
    expect(v).toMatchObject({ finalStatus: "RFR", errors: ["Certificado de la firma del envio no vigente"] });
  });

  it("[CAR-EMISOR] an envelope uploaded for another company: RCT", async () => {
    const env = await envelope([await crafted(caf33, 13, invoice("33"))], cert);
    const v = await validate(env.xml, { companyRut: "77879240-0" });
    expect(v).toMatchObject({ finalStatus: "RCT", errors: [`RutEmisor ${ISSUER_RUT} distinto de la empresa del envio (77879240-0)`] });
  });

  it("[CAR-RECEPTOR] an envelope addressed to someone else than the SII: RCT", async () => {
    const dte = await crafted(caf33, 14, invoice("33"));
    const env = await buildEnvioDte({ dtes: [dte], issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, receiverRut: "77879240-0", resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: cert });
    const v = await validate(env.xml);
    expect(v).toMatchObject({ finalStatus: "RCT", errors: ["RutReceptor debe ser el SII (60803000-K)"] });
  });

  it("[DTE-CERT] a DTE signed with a certificate that expired: RCH", async () => {
    const expired = await fakeCredentials({ notBefore: new Date(Date.now() - 400 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
    const d = computeDocument(invoice("33"));
    const ted = await stampTed({ issuerRut: ISSUER_RUT, documentType: 33, folio: 15, issueDate: d.issueDate, receiverRut: d.receiver.rut, receiverName: d.receiver.legalName, total: String(d.totals.total), firstItemName: d.lines[0]!.name, caf: caf33, timestamp: "2026-11-20T10:30:00" });
    const element = await signXml(buildDteXml(d, 15, ted, "2026-11-20T10:30:00"), dteId(33, 15), expired);
    const base = await crafted(caf33, 15, invoice("33"));
    const v = await verdict({ ...base, element });
    expect(v).toMatchObject({ status: "RCH", errors: ["DTE-CERT Certificado de la firma del DTE no vigente"] });
  });

  it("[TED-FRMT] a stamp whose FRMT does not verify: RCH", async () => {
    const v = await verdict(await crafted(caf33, 16, invoice("33"), undefined, (x) => x.replace(/(<FRMT algoritmo="SHA1withRSA">)(.)/, (_m, a, c) => a + (c === "A" ? "B" : "A"))));
    expect(v.status).toBe("RCH");
    expect(v.errors.join("\n")).toMatch(/^TED-FRMT Timbre electronico invalido/);
  });

  it("[TED-DATOS] a stamp whose data differ from the document: RCH", async () => {
    const v = await verdict(await crafted(caf33, 17, invoice("33"), undefined, (x) => x.replace("<FchEmis>2026-11-20</FchEmis>", "<FchEmis>2026-11-19</FchEmis>")));
    expect(v).toMatchObject({ status: "RCH", errors: ["TED-DATOS Datos del timbre no coinciden con el documento: FE=2026-11-20 (documento: 2026-11-19)"] });
  });

  it("[CAF-EMISOR] a document stamped under a CAF of another RUT: RCH", async () => {
    const foreign = await simulatorCaf({ documentType: 33, from: 1, to: 10, rut: "77879240-0" });
    const v = await verdict(await crafted(foreign, 1, invoice("33")));
    expect(v.status).toBe("RCH");
    expect(v.errors).toContain(`CAF-EMISOR El CAF autoriza 77879240-0 tipo 33, no ${ISSUER_RUT} tipo 33`);
  });

  it("[DTE-EMISOR] a document of another issuer than the carátula's: RCH", async () => {
    const v = await verdict(await crafted(caf33, 18, invoice("33"), undefined, (x) => x.replace(`<RUTEmisor>${ISSUER_RUT}</RUTEmisor>`, "<RUTEmisor>77879240-0</RUTEmisor>")));
    expect(v.status).toBe("RCH");
    expect(v.errors[0]).toBe(`DTE-EMISOR RUTEmisor 77879240-0 distinto de la Caratula (${ISSUER_RUT})`);
  });
});
