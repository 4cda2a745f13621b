/**
 * CPU cost of the engine's signing path and of the simulator's envelope validation, in workerd:
 * - buildSignedDte of a typical 2-line factura (stamp + sign);
 * - buildEnvioDte of 50 signed DTEs (envelope + its signature);
 * - the simulator's check of that 50-document EnvioDTE (decode + upload precheck/parse +
 *   validateEnvio with every signature, TED and CAF check and the whole XSD; the duplicate lookup
 *   is a no-op here), and the XSD walk of that envelope alone.
 * Prints ms per operation (median of rounds). Knobs: ENGINE_BENCH_ROUNDS (default 5). A smoke run
 * (BENCH_SMOKE=1): one round of one operation each, an envelope of 5 DTEs.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { b64decode } from "../../src/countries/cl/pki/asn1";
import { parseCaf } from "../../src/countries/cl/documents/caf";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildSignedDte, type SignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { precheckFile, validateEnvio } from "../../src/countries/cl/simulator/validate";
import { envelopeSchemaProblems } from "../../src/countries/cl/documents/dte-schema";
import { parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import pfxB64 from "../../test/fixtures/cl/fake-modern-aes.pfx.b64?raw";

const knobs = env as unknown as { ENGINE_BENCH_ROUNDS?: string; BENCH_SMOKE?: string };
const SMOKE = knobs.BENCH_SMOKE === "1";
const ROUNDS = Number(knobs.ENGINE_BENCH_ROUNDS || (SMOKE ? 1 : 5));
/** DTEs in the envelope. */
const DTES = SMOKE ? 5 : 50;
const ISSUER = "76086428-5";

function invoice(i: number) {
  return computeDocument({
    invoice_type: "33",
    invoice_date: "2026-11-20 10:30:00",
    issuer: {
      legal_name: "EMPRESA DE PRUEBA SPA",
      document_type: "RUT",
      document_number: ISSUER,
      address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" },
      tax_information: { activity: "Venta de software", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" },
    },
    recipient: { legal_name: "CLIENTE LIMITADA", document_number: "77879240-0", address: { country: "CL", city: "Santiago", address: "Calle 2" }, tax_information: { activity: "Comercio" } },
    items: [
      { quantity: 2, unit_price: 1000 + i, description: "Servicio de prueba" },
      { quantity: 1, unit_price: 4990, description: "Licencia mensual" },
    ],
  });
}

async function time(label: string, times: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const n = SMOKE ? 1 : times;
  const per: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn(i);
    per.push((performance.now() - t0) / n);
  }
  per.sort((a, b) => a - b);
  const med = per[Math.floor(per.length / 2)]!;
  console.log(`${label.padEnd(48)} ${med.toFixed(3)} ms/op  (rounds: ${per.map((x) => x.toFixed(2)).join(" ")})`);
  return med;
}

it("engine signing and simulator validation", async () => {
  const signer = await loadSigningCredentials(b64decode(pfxB64), "test-only-1234");
  const caf = await parseCaf((await issueSimulatorCaf({ rut: ISSUER, legalName: "EMPRESA DE PRUEBA SPA", documentType: 33, from: 1, to: 100_000, authorizedOn: "2026-11-01" })).xml, { mode: "simulator" });
  const docs = Array.from({ length: DTES }, (_, i) => invoice(i));
  const ts = "2026-11-20T10:30:05";
  const dtes: SignedDte[] = [];
  for (let i = 0; i < DTES; i++) dtes.push(await buildSignedDte({ document: docs[i]!, folio: i + 1, caf, signer, timestamp: ts }));
  // warm-up
  for (let i = 0; i < DTES; i++) await buildSignedDte({ document: docs[i]!, folio: i + 1, caf, signer, timestamp: ts });

  const probe = new TextEncoder().encode("x".repeat(1200));
  await time(`RSA sign alone (signer key, ${signer.modulus.length * 8 - (signer.modulus[0] === 0 ? 8 : 0)} bits)`, 200, () => crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, signer.privateKey, probe));
  await time("buildSignedDte (2-line factura)", 200, (i) => buildSignedDte({ document: docs[i % DTES]!, folio: (i % DTES) + 1, caf, signer, timestamp: ts }));
  const params = { dtes, issuerRut: ISSUER, senderRut: signer.rut!, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer };
  const envelope = await buildEnvioDte(params);
  await time(`buildEnvioDte (${DTES} DTEs)`, 20, () => buildEnvioDte(params));
  const now = new Date("2026-11-20T13:31:00Z");
  const ctx = { companyRut: ISSUER, now, acceptedAmong: async () => new Set<string>() };
  let verdict;
  await time(`simulator: precheck + validateEnvio (${DTES} DTEs)`, 10, async () => {
    const pre = precheckFile(envelope.xml, "EnvioDTE");
    if (!pre.ok) throw new Error(pre.errors.join("; "));
    verdict = await validateEnvio(pre.doc, "EnvioDTE", { ...ctx, now: new Date() });
  });
  const pre = precheckFile(envelope.xml, "EnvioDTE");
  await time("simulator: precheck (Latin-1 + decode + parse) only", 10, async () => precheckFile(envelope.xml, "EnvioDTE"));
  const root = parseXml(new TextDecoder("latin1").decode(envelope.xml)).documentElement as XElement;
  await time(`simulator: XSD walk of the envelope only (${DTES} DTEs)`, 20, async () => envelopeSchemaProblems(root, "EnvioDTE"));
  expect(envelopeSchemaProblems(root, "EnvioDTE")).toEqual([]);
  expect(verdict!.finalStatus).toBe("EPR");
  expect(verdict!.documents.filter((d: { status: string }) => d.status === "DOK").length).toBe(DTES);
  expect(pre.ok).toBe(true);
});
