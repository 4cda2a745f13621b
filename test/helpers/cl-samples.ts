/**
 * Builds one sample of every XML the Chilean engine produces, for every document type, with fake
 * material only (simulator CAFs, a fake certificate). Shared by the workerd tests (signatures,
 * verification) and the Node schema tests (XSD validation with xmllint-wasm).
 */
import { parseCaf, type Caf } from "../../src/countries/cl/documents/caf";
import { loadSigningCredentials, type SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildSignedDte, type SignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioBoleta, buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { buildEnvioRecibos, buildRecepcionEnvio, buildResultadoDte } from "../../src/countries/cl/exchange/responses";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { buildTokenRequest } from "../../src/countries/cl/xml/xmldsig";
import { makeFakeCertificate, makeFakePfx, type FakeCertificate } from "./fake-certificates";

export const ISSUER_RUT = "76086428-5";
export const HOLDER_RUT = "11111111-1";

export const issuer = {
  legal_name: "EMPRESA DE PRUEBA SPA",
  document_type: "RUT",
  document_number: ISSUER_RUT,
  address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" },
  tax_information: { activity: "Desarrollo de software y servicios informáticos", activity_codes: [620200, 631100], resolution_date: "2026-01-15", resolution_number: "0" },
};
export const recipient = {
  legal_name: "COMERCIAL ÑANDÚ & CÍA. LIMITADA",
  document_type: "RUT",
  document_number: "77.879.240-0",
  address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401, of. 5" },
  tax_information: { activity: "Comercio al por menor" },
};
const foreign = { legal_name: "ACME TRADING INC", document_number: "US-99-1234567", address: { country: "US", address: "1 Main St, Springfield" } };
const date = "2026-11-20 10:30:00";
const ref33 = { number: 1, invoice_type: "FAC", invoice_date: "2026-11-20 10:30:00" };

export const SAMPLE_INPUTS: Record<string, InvoiceInput> = {
  "33": {
    branch_office: 1, invoice_type: "33", invoice_date: date, payment_due_date: "2026-12-20", issuer, recipient,
    payment_method: { code: "2", description: "Crédito 30 días" },
    items: [
      { quantity: 2, unit_price: 1500.5, discount_amount: 1, description: "Licencia anual \"Pro\" <ed. 2026>", code_unit_of_measure: "UN", taxes: [{ type: "IVA", rate: 19 }] },
      { quantity: 1, unit_price: 990, description: "Bebida analcohólica", taxes: [{ type: "IVA" }, { type: "271", rate: 18 }] },
      { quantity: 1, unit_price: 5000, description: "Curso exento", taxes: [{ type: "EXE" }] },
    ],
    billing_reference: [{ number: "OC-4500", invoice_type: "801", invoice_date: "2026-11-01" }],
    totals: { sub_total: 8991, discount: 1, total: 9926 },
  },
  "34": { invoice_type: "FEX", invoice_date: date, issuer, recipient, items: [{ quantity: 3, unit_price: 12000, description: "Servicio educacional exento" }] },
  "39": { invoice_type: "BEL", invoice_date: date, issuer, items: [{ quantity: 1, unit_price: 1000, description: "Pan amasado" }, { quantity: 2, unit_price: 450, description: "Diario", taxes: [{ type: "EXE" }] }] },
  "41": { invoice_type: "BEX", invoice_date: date, issuer, recipient, items: [{ quantity: 1, unit_price: 25000, description: "Consulta médica" }] },
  "46": { invoice_type: "FCO", invoice_date: date, issuer, recipient, items: [{ quantity: 100, unit_price: 350, description: "Compra de chatarra", code_unit_of_measure: "KG", taxes: [{ type: "15" }] }] },
  "52": { invoice_type: "GDE", invoice_date: date, issuer, recipient, items: [{ quantity: 5, unit_price: 10000, description: "Cajas de mercadería" }] },
  "56": { invoice_type: "NDV", invoice_date: date, issuer, recipient, reason_code: "ANU", billing_reference: [{ number: 1, invoice_type: "61", invoice_date: date }], items: [{ quantity: 1, unit_price: 1000, description: "Anula nota de crédito" }] },
  "61": { invoice_type: "NCV", invoice_date: date, issuer, recipient, reason_code: "ANU", billing_reference: [ref33], items: [{ quantity: 1, unit_price: 11060, description: "Anula factura 1" }] },
  "61-COT": { invoice_type: "NCV", invoice_date: date, issuer, recipient, reason_code: "COT", billing_reference: [{ ...ref33, reason: "DONDE DICE Comercio DEBE DECIR Comercio minorista" }], items: [{ quantity: 1, unit_price: 0, description: "Corrige giro del receptor" }] },
  "61-COM": { invoice_type: "61", invoice_date: date, issuer, recipient, reason_code: "COM", billing_reference: [ref33], items: [{ quantity: 1, unit_price: 500, description: "Descuento posterior" }] },
  "110": { invoice_type: "FEE", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD", exchange_rate: 945.37 }, items: [{ quantity: 10, unit_price: 12.345, description: "Vino tinto reserva (caja)" }] },
  "111": { invoice_type: "NDE", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" }, reason_code: "COM", billing_reference: [{ number: 1, invoice_type: "110", invoice_date: date }], items: [{ quantity: 1, unit_price: 5.5, description: "Flete adicional" }] },
  "112": { invoice_type: "NCE", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" }, reason_code: "ANU", billing_reference: [{ number: 1, invoice_type: "110", invoice_date: date }], items: [{ quantity: 1, unit_price: 123.45, description: "Anula factura de exportación" }] },
};

export interface Sample {
  name: string;
  /** Schema root file to validate with. null = no schema (token request, standalone boleta). */
  schema: string | null;
  xml: Uint8Array;
  xmlString: string;
}

export interface SampleSet {
  samples: Sample[];
  dtes: Record<string, SignedDte>;
  cafs: Record<number, Caf>;
  cert: FakeCertificate;
  signer: SigningCredentials;
}

export async function buildSamples(): Promise<SampleSet> {
  const cert = await makeFakeCertificate({ rut: HOLDER_RUT, cn: "PERSONA DE PRUEBA FALSA" });
  const signer = await loadSigningCredentials(makeFakePfx(cert, "secreto", "modern"), "secreto");
  const cafs: Record<number, Caf> = {};
  const dtes: Record<string, SignedDte> = {};
  const samples: Sample[] = [];
  const folios: Record<number, number> = {};
  for (const [name, input] of Object.entries(SAMPLE_INPUTS)) {
    const doc = computeDocument(input);
    const code = doc.type.code;
    cafs[code] ??= await parseCaf((await issueSimulatorCaf({ rut: ISSUER_RUT, legalName: issuer.legal_name, documentType: code, from: 1, to: 50, authorizedOn: "2026-11-01" })).xml, { mode: "simulator" });
    folios[code] = (folios[code] ?? 0) + 1;
    const dte = await buildSignedDte({ document: doc, folio: folios[code]!, caf: cafs[code]!, signer, timestamp: "2026-11-20T10:30:05" });
    dtes[name] = dte;
    samples.push({ name: `DTE ${name}`, schema: doc.type.boleta ? null : "DTE_v10.xsd", xml: dte.xml, xmlString: dte.xmlString });
  }
  const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer };
  const nonBoleta = Object.values(dtes).filter((d) => d.envelope === "EnvioDTE");
  const toSii = await buildEnvioDte({ ...common, dtes: nonBoleta });
  samples.push({ name: "EnvioDTE to SII", schema: "EnvioDTE_v10.xsd", xml: toSii.xml, xmlString: toSii.xmlString });
  const toBuyer = await buildEnvioDte({ ...common, dtes: [dtes["33"]!], receiverRut: "77879240-0", setId: "SetDoc-77879240-0" });
  samples.push({ name: "EnvioDTE to recipient", schema: "EnvioDTE_v10.xsd", xml: toBuyer.xml, xmlString: toBuyer.xmlString });
  const boletas = await buildEnvioBoleta({ ...common, dtes: [dtes["39"]!, dtes["41"]!] });
  samples.push({ name: "EnvioBOLETA", schema: "EnvioBOLETA_v11.xsd", xml: boletas.xml, xmlString: boletas.xmlString });
  const d33 = dtes["33"]!;
  const key = { type: d33.documentType, folio: d33.folio, issueDate: d33.issueDate, issuerRut: d33.issuerRut, receiverRut: d33.receiverRut, total: d33.total };
  const header = { responderRut: "77879240-0", recipientRut: ISSUER_RUT, contact: { name: "Mesa de ayuda", email: "dte@example.cl" }, timestamp: "2026-11-20T11:00:00", signer };
  const recep = await buildRecepcionEnvio({
    ...header,
    responseId: 1,
    envelopes: [{ fileName: "envio-33.xml", receivedAt: "2026-11-20T10:45:00", receptionCode: 1001, envelopeId: "SetDoc-77879240-0", digest: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=", issuerRut: ISSUER_RUT, receiverRut: "77879240-0", status: 0, statusText: "Envio Recibido Conforme", documents: [{ ...key, status: 0, statusText: "DTE Recibido OK" }] }],
  });
  samples.push({ name: "RespuestaDTE RecepcionEnvio", schema: "RespuestaEnvioDTE_v10.xsd", xml: recep.xml, xmlString: recep.xmlString });
  const result = await buildResultadoDte({ ...header, responseId: 2, results: [{ ...key, receptionCode: 1001, status: 2, statusText: "DTE Rechazado: precio no corresponde", rejectionCode: -1 }] });
  samples.push({ name: "RespuestaDTE ResultadoDTE", schema: "RespuestaEnvioDTE_v10.xsd", xml: result.xml, xmlString: result.xmlString });
  const recibos = await buildEnvioRecibos({ ...header, receipts: [{ ...key, place: "Bodega central, Ñuñoa", signerRut: HOLDER_RUT }] });
  samples.push({ name: "EnvioRecibos", schema: "EnvioRecibos_v10.xsd", xml: recibos.xml, xmlString: recibos.xmlString });
  const token = await buildTokenRequest("012345678", signer);
  samples.push({ name: "token request", schema: null, xml: new TextEncoder().encode(token), xmlString: token });
  return { samples, dtes, cafs, cert, signer };
}
