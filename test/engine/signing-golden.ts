/**
 * Byte-exact outputs of every signing path of the engine (DTEs of every type, EnvioDTE to the SII and
 * to a buyer, EnvioBOLETA, the three acknowledgments, the token request) on FIXED fake material: the
 * test pfx of test/fixtures/cl and the simulator CAFs stored in test/fixtures/cl/signing-golden.json.
 * RSA PKCS#1 v1.5 is deterministic, so the same inputs must give the same bytes whatever the signing
 * implementation; signing-golden.json holds the outputs of the engine before its signing path was
 * rewritten (commit c7a0bfb), and signing-golden.test.ts holds every later version to them.
 */
import { parseCaf, type Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildSignedDte, type SignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioBoleta, buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { buildEnvioRecibos, buildRecepcionEnvio, buildResultadoDte } from "../../src/countries/cl/exchange/responses";
import { buildTokenRequest } from "../../src/countries/cl/xml/xmldsig";
import { HOLDER_RUT, ISSUER_RUT, issuer, recipient, SAMPLE_INPUTS } from "../helpers/cl-samples";

export const GOLDEN_PFX_PASSWORD = "test-only-1234";

/** Extra inputs with characters that need escaping or are easy to get wrong. */
export const TRICKY_INPUTS: Record<string, InvoiceInput> = {
  "33-escapes": {
    invoice_type: "33",
    invoice_date: "2026-11-20 10:30:00",
    issuer: { ...issuer, legal_name: "A&B <S.A.> \"Q\" 'x' ÑÁÉÍÓÚ ü ° ½ ÿ" },
    recipient: { ...recipient, legal_name: "R&D <LTDA> \"comillas\" 'simples' >> &amp; ]]>" },
    items: [
      { quantity: 1, unit_price: 100, description: "a<b & c>d \"e\" 'f' ]]> &lt; ñ" },
      { quantity: 3, unit_price: 7, description: "tab\tand  double  space" },
    ],
  },
};

export async function goldenCafs(cafXml: Record<string, string>): Promise<Record<number, Caf>> {
  const out: Record<number, Caf> = {};
  for (const [code, xml] of Object.entries(cafXml)) out[Number(code)] = await parseCaf(xml, { mode: "simulator" });
  return out;
}

/** Every signed output, by name, as text (the bytes are its ISO-8859-1 encoding). */
export async function buildGolden(signer: SigningCredentials, cafs: Record<number, Caf>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const dtes: Record<string, SignedDte> = {};
  const folios: Record<number, number> = {};
  for (const [name, input] of Object.entries({ ...SAMPLE_INPUTS, ...TRICKY_INPUTS })) {
    const doc = computeDocument(input);
    const code = doc.type.code;
    folios[code] = (folios[code] ?? 0) + 1;
    const dte = await buildSignedDte({ document: doc, folio: folios[code]!, caf: cafs[code]!, signer, timestamp: "2026-11-20T10:30:05" });
    dtes[name] = dte;
    out[`DTE ${name}`] = dte.xmlString;
  }
  const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer };
  const nonBoleta = Object.values(dtes).filter((d) => d.envelope === "EnvioDTE");
  out["EnvioDTE to SII"] = (await buildEnvioDte({ ...common, dtes: nonBoleta })).xmlString;
  out["EnvioDTE to recipient"] = (await buildEnvioDte({ ...common, dtes: [dtes["33"]!], receiverRut: "77879240-0", setId: "SetDoc-77879240-0" })).xmlString;
  out["EnvioBOLETA"] = (await buildEnvioBoleta({ ...common, dtes: [dtes["39"]!, dtes["41"]!] })).xmlString;
  const d33 = dtes["33"]!;
  const key = { type: d33.documentType, folio: d33.folio, issueDate: d33.issueDate, issuerRut: d33.issuerRut, receiverRut: d33.receiverRut, total: d33.total };
  const header = { responderRut: "77879240-0", recipientRut: ISSUER_RUT, contact: { name: "Mesa & <ayuda>", email: "dte@example.cl" }, timestamp: "2026-11-20T11:00:00", signer };
  out["RespuestaDTE RecepcionEnvio"] = (
    await buildRecepcionEnvio({
      ...header,
      responseId: 1,
      envelopes: [{ fileName: "envio-33.xml", receivedAt: "2026-11-20T10:45:00", receptionCode: 1001, envelopeId: "SetDoc-77879240-0", digest: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=", issuerRut: ISSUER_RUT, receiverRut: "77879240-0", status: 0, statusText: "Envio Recibido Conforme", documents: [{ ...key, status: 0, statusText: "DTE Recibido OK" }] }],
    })
  ).xmlString;
  out["RespuestaDTE ResultadoDTE"] = (await buildResultadoDte({ ...header, responseId: 2, results: [{ ...key, receptionCode: 1001, status: 2, statusText: "DTE Rechazado: precio <no> corresponde & \"otro\"", rejectionCode: -1 }] })).xmlString;
  out["EnvioRecibos"] = (await buildEnvioRecibos({ ...header, receipts: [{ ...key, place: "Bodega central, Ñuñoa", signerRut: HOLDER_RUT }, { ...key, folio: key.folio + 1, place: "Otra & <bodega>", signerRut: HOLDER_RUT }] })).xmlString;
  out["token request"] = await buildTokenRequest("012345678", signer);
  return out;
}
