/**
 * Breakdown of the engine benchmark (ms per call of each step of signing and of the simulator's
 * validation), for finding the next cost: ENGINE_BENCH_FILE=bench/engine/parts.bench.test.ts
 * npx vitest run --config bench/engine/vitest.config.ts
 */
import { it } from "vitest";
import { b64decode, b64encode, buf, spkiFromRsa } from "../../src/countries/cl/pki/asn1";
import { readCertificate } from "../../src/countries/cl/pki/certificate";
import { parseCaf } from "../../src/countries/cl/documents/caf";
import { canonicalize } from "../../src/countries/cl/xml/c14n";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildDteXml, buildSignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { stampTed, verifyTed } from "../../src/countries/cl/documents/ted";
import { childElements, decodeXmlBytes, findById, firstChild, parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { signXml, verifyChildSignature } from "../../src/countries/cl/xml/xmldsig";
import pfxB64 from "../../test/fixtures/cl/fake-modern-aes.pfx.b64?raw";

it("parts", async () => {
  const signer = await loadSigningCredentials(b64decode(pfxB64), "test-only-1234");
  const caf = await parseCaf((await issueSimulatorCaf({ rut: "76086428-5", legalName: "X", documentType: 33, from: 1, to: 1000, authorizedOn: "2026-11-01" })).xml, { mode: "simulator" });
  const dtes = [];
  for (let i = 0; i < 50; i++) dtes.push(await buildSignedDte({ document: computeDocument({ invoice_type: "33", invoice_date: "2026-11-20 10:30:00", issuer: { legal_name: "EMPRESA", document_type: "RUT", document_number: "76086428-5", address: { country: "CL", region: "13", city: "Santiago", address: "Av 1" }, tax_information: { activity: "Soft", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" } }, recipient: { legal_name: "CLIENTE", document_number: "77879240-0", address: { country: "CL", city: "Santiago", address: "C 2" }, tax_information: { activity: "Com" } }, items: [{ quantity: 2, unit_price: 1000, description: "S" }, { quantity: 1, unit_price: 5, description: "L" }] }), folio: i + 1, caf, signer, timestamp: "2026-11-20T10:30:05" }));
  const env = await buildEnvioDte({ dtes, issuerRut: "76086428-5", senderRut: signer.rut!, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer });
  const t = (label: string, n: number, f: () => unknown) => { for (let i = 0; i < 3; i++) f(); const t0 = performance.now(); for (let i = 0; i < n; i++) f(); console.log(label, ((performance.now() - t0) / n).toFixed(3)); };
  const ta = async (label: string, n: number, f: () => Promise<unknown>) => { const t0 = performance.now(); for (let i = 0; i < n; i++) await f(); console.log(label, ((performance.now() - t0) / n).toFixed(3)); };
  const doc0 = computeDocument({ invoice_type: "33", invoice_date: "2026-11-20 10:30:00", issuer: { legal_name: "EMPRESA", document_type: "RUT", document_number: "76086428-5", address: { country: "CL", region: "13", city: "Santiago", address: "Av 1" }, tax_information: { activity: "Soft", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" } }, recipient: { legal_name: "CLIENTE", document_number: "77879240-0", address: { country: "CL", city: "Santiago", address: "C 2" }, tax_information: { activity: "Com" } }, items: [{ quantity: 2, unit_price: 1000, description: "S" }, { quantity: 1, unit_price: 5, description: "L" }] });
  const tedP = { issuerRut: "76086428-5", documentType: 33, folio: 5, issueDate: doc0.issueDate, receiverRut: "77879240-0", receiverName: "CLIENTE", total: "2385", firstItemName: "S", caf, timestamp: "2026-11-20T10:30:05" };
  await ta("stampTed", 300, () => stampTed(tedP));
  const ted0 = await stampTed(tedP);
  t("buildDteXml", 300, () => buildDteXml(doc0, 5, ted0, "2026-11-20T10:30:05"));
  const unsigned = buildDteXml(doc0, 5, ted0, "2026-11-20T10:30:05");
  t("parse DTE", 300, () => parseXml(unsigned));
  await ta("signXml DTE", 300, () => signXml(unsigned, "F5T33", signer));
  t("computeDocument", 300, () => computeDocument({ invoice_type: "33", invoice_date: "2026-11-20 10:30:00", issuer: { legal_name: "EMPRESA", document_type: "RUT", document_number: "76086428-5", address: { country: "CL", region: "13", city: "Santiago", address: "Av 1" }, tax_information: { activity: "Soft", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" } }, recipient: { legal_name: "CLIENTE", document_number: "77879240-0", address: { country: "CL", city: "Santiago", address: "C 2" }, tax_information: { activity: "Com" } }, items: [{ quantity: 2, unit_price: 1000, description: "S" }, { quantity: 1, unit_price: 5, description: "L" }] }));
  t("decode", 20, () => decodeXmlBytes(env.xml));
  const text = decodeXmlBytes(env.xml);
  t("lines split", 20, () => text.split(/\r?\n/).findIndex((l) => l.length > 4096));
  t("parse", 20, () => parseXml(text));
  const doc = parseXml(text);
  const root = doc.documentElement as XElement;
  const set = firstChild(root, "SetDTE")!;
  t("c14n SetDTE", 20, () => canonicalize(set));
  const dte = childElements(set, "DTE")[0]!;
  const d = firstChild(dte, "Documento")!;
  t("c14n Documento", 200, () => canonicalize(d));
  const si = firstChild(firstChild(dte, "Signature")!, "SignedInfo")!;
  t("c14n SignedInfo", 200, () => canonicalize(si));
  await ta("verifyChildSignature DTE", 200, () => verifyChildSignature(doc, dte, { fallbacks: true }));
  const ted = firstChild(d, "TED")!;
  await ta("verifyTed", 200, () => verifyTed(ted, { mode: "simulator" }));
  {
    const sigEl = firstChild(dte, "Signature")!;
    const siC = new TextEncoder().encode(canonicalize(si));
    const sv = b64decode(firstChild(sigEl, "SignatureValue")!.textContent!);
    const key = await crypto.subtle.importKey("spki", buf(spkiFromRsa(signer.modulus, signer.exponent)), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-1" }, false, ["verify"]).catch(() => null);
    if (key) await ta("subtle.verify 2048", 300, () => crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, buf(sv), siC));
    const dc = new TextEncoder().encode(canonicalize(d));
    await ta("subtle.digest sha1 Documento", 300, () => crypto.subtle.digest("SHA-1", dc));
    await ta("minimal verify sequence", 300, async () => {
      const dg = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(canonicalize(d)));
      b64encode(dg);
      return crypto.subtle.verify("RSASSA-PKCS1-v1_5", key!, buf(b64decode(firstChild(sigEl, "SignatureValue")!.textContent!)), new TextEncoder().encode(canonicalize(si)));
    });
    await ta("verifyChildSignature no fallbacks", 300, () => verifyChildSignature(doc, dte));
    t("findById in DTE", 300, () => findById(dte, "F1T33"));
    t("b64encode modulus", 300, () => b64encode(signer.modulus));
    t("readCertificate", 50, () => readCertificate(b64decode(firstChild(firstChild(firstChild(sigEl, "KeyInfo")!, "X509Data")!, "X509Certificate")!.textContent!)));
    t("textContent cert + strip", 300, () => firstChild(firstChild(firstChild(sigEl, "KeyInfo")!, "X509Data")!, "X509Certificate")!.textContent!.replace(/\s+/g, ""));
  }
  await ta("envelope sig", 20, () => verifyChildSignature(doc, root, { fallbacks: true }));
  const big = canonicalize(set);
  await ta("sha1 of SetDTE c14n", 20, async () => crypto.subtle.digest("SHA-1", new TextEncoder().encode(big)));
});
