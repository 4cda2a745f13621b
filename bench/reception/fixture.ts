/**
 * The supplier's documents of the reception benchmarks (reception.bench.test.ts in workerd,
 * profile.node.ts in Node): one issuer signing facturas to one recipient under a simulator CAF, and
 * EnvioDTE envelopes of n of them, folios counting up across envelopes.
 */
import { b64decode } from "../../src/countries/cl/pki/asn1";
import { parseCaf } from "../../src/countries/cl/documents/caf";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildSignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import { issueSimulatorCaf } from "../../src/simulator/caf";

export const ISSUER = "76086428-5";
export const RECIPIENT = "77879240-0";

const doc = (i: number) => computeDocument({
  invoice_type: "33", invoice_date: "2026-11-20 10:30:00",
  issuer: { legal_name: "EMPRESA DE PRUEBA SPA", document_type: "RUT", document_number: ISSUER, address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" }, tax_information: { activity: "Venta de software", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" } },
  recipient: { legal_name: "CLIENTE LIMITADA", document_number: RECIPIENT, address: { country: "CL", city: "Santiago", address: "Calle 2" }, tax_information: { activity: "Comercio" } },
  items: [{ quantity: 2, unit_price: 1000 + i, description: "Servicio de prueba" }, { quantity: 1, unit_price: 4990, description: "Licencia mensual" }],
});

/** The issuer's signer (from the test .pfx, base64) and `envelopeOf(n)`: the XML of a signed EnvioDTE of n DTEs. */
export async function supplier(pfxB64: string) {
  const signer = await loadSigningCredentials(b64decode(pfxB64), "test-only-1234");
  const caf = await parseCaf((await issueSimulatorCaf({ rut: ISSUER, legalName: "EMPRESA DE PRUEBA SPA", documentType: 33, from: 1, to: 100_000, authorizedOn: "2026-11-01" })).xml, { mode: "simulator" });
  let folio = 1;
  const envelopeOf = async (n: number) => {
    const dtes = [];
    for (let i = 0; i < n; i++) dtes.push(await buildSignedDte({ document: doc(i), folio: folio++, caf, signer, timestamp: "2026-11-20T10:30:00" }));
    return (await buildEnvioDte({ dtes, issuerRut: ISSUER, senderRut: signer.rut ?? ISSUER, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:30:00", signer })).xml;
  };
  return { signer, envelopeOf };
}
