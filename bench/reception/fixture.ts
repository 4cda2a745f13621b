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
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { verifyKey } from "../../src/countries/cl/xml/xmldsig";

export const ISSUER = "76086428-5";
export const RECIPIENT = "77879240-0";

const doc = (i: number) => computeDocument({
  invoice_type: "33", invoice_date: "2026-11-20 10:30:00",
  issuer: { legal_name: "EMPRESA DE PRUEBA SPA", document_type: "RUT", document_number: ISSUER, address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" }, tax_information: { activity: "Venta de software", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" } },
  recipient: { legal_name: "CLIENTE LIMITADA", document_number: RECIPIENT, address: { country: "CL", city: "Santiago", address: "Calle 2" }, tax_information: { activity: "Comercio" } },
  items: ITEMS.slice(0, 1 + ((i + 1) % ITEMS.length)).map((item, k) => ({ ...item, unit_price: item.unit_price + (k === 0 ? i : 0) })),
});
/**
 * The lines the DTEs draw from: the k-th DTE of an envelope has 2, 3, 4, 5, 1, 2, … of them, so
 * that the DTEs of an envelope differ in shape as a real supplier's do (a verification that reused
 * the work of an earlier DTE of the same shape would be measured on a fifth of them, not all).
 */
const ITEMS = [
  { quantity: 2, unit_price: 1000, description: "Servicio de prueba" },
  { quantity: 1, unit_price: 4990, description: "Licencia mensual" },
  { quantity: 3, unit_price: 15990, description: "Soporte tecnico por hora" },
  { quantity: 12, unit_price: 350, description: "Cable de red categoria 6, 2 metros" },
  { quantity: 1, unit_price: 89900, description: "Router inalambrico AX1800" },
];

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

type Signer = Awaited<ReturnType<typeof supplier>>["signer"];

/**
 * The crypto floor of verifying `xml` (an envelope of `envelopeOf`), what its verification cannot do
 * without, timed with `clock` (ms): per DTE (`dtes(n)`: n times, ms per DTE) two RSASSA-PKCS1-v1_5 /
 * SHA-1 verifies, each under a key of the size that really signs it (the XMLDSig SignatureValue
 * under the issuer's certificate, the fixture's 2048-bit key; the TED's FRMT under its CAF's key,
 * which the SII makes RSA-512 with e = 3, sii-formats.md §2), over messages as long as the
 * envelope's SignedInfo and DD, and the SHA-1 of a Documento as long as theirs on average; the CAF's FRMA is
 * verified once per CAF. Per envelope (`envelope(reps)`: reps times, total ms) its own signature:
 * one more verify and the SHA-1 of its SetDTE. Each verify's result is checked (a plain check: an
 * expect() per call would weigh on the timing).
 */
export async function cryptoFloor(signer: Signer, xml: Uint8Array, clock: () => number) {
  const sizes = floorSizes(xml);
  const caf = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 512, publicExponent: new Uint8Array([3]), hash: "SHA-1" }, false, ["sign", "verify"])) as CryptoKeyPair;
  // The issuer's key as the verification imports it (xmldsig.ts).
  const pub = await verifyKey(signer.modulus, signer.exponent, "SHA-1");
  const signed = async (key: CryptoKey, verifyWith: CryptoKey, length: number) => {
    const message = new Uint8Array(length).fill(65);
    const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, message);
    return async () => { if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", verifyWith, signature, message))) throw new Error("the floor's signature did not verify"); };
  };
  const signature = await signed(signer.privateKey, pub, sizes.signedInfo);
  const stamp = await signed(caf.privateKey, caf.publicKey, sizes.dd);
  const envelopeSignature = await signed(signer.privateKey, pub, sizes.envelopeSignedInfo);
  const documento = new Uint8Array(sizes.documento).fill(66);
  const setDte = new Uint8Array(sizes.setDte).fill(67);
  return {
    sizes,
    async dtes(n: number) {
      const t0 = clock();
      for (let i = 0; i < n; i++) {
        await signature();
        await stamp();
        await crypto.subtle.digest("SHA-1", documento);
      }
      return (clock() - t0) / n;
    },
    async envelope(reps: number) {
      const t0 = clock();
      for (let j = 0; j < reps; j++) {
        await envelopeSignature();
        await crypto.subtle.digest("SHA-1", setDte);
      }
      return clock() - t0;
    },
  };
}

/**
 * Lengths of what the verification of `xml` signs and digests, from its source: the first DTE's
 * SignedInfo and DD, the DTEs' mean Documento, the SetDTE, and the envelope's own SignedInfo (the last one). The
 * canonical forms add the inherited namespace declarations (some 40 bytes each), which do not move
 * a verify or a digest measurably.
 */
function floorSizes(xml: Uint8Array) {
  const s = new TextDecoder("latin1").decode(xml);
  const span = (open: string, close: string, from: number) => {
    const a = s.indexOf(open, from);
    const b = a < 0 ? -1 : s.indexOf(close, a);
    if (b < 0) throw new Error(`no ${open} in the envelope`);
    return b + close.length - a;
  };
  const dte = s.indexOf("<DTE ");
  // The DTEs differ in length (their lines): the Documento's digest is timed at their mean length.
  let documentos = 0;
  let count = 0;
  for (let at = s.indexOf("<Documento "); at >= 0; at = s.indexOf("<Documento ", at + 1)) {
    documentos += span("<Documento ", "</Documento>", at);
    count++;
  }
  return { signedInfo: span("<SignedInfo", "</SignedInfo>", dte), dd: span("<DD>", "</DD>", dte), documento: Math.round(documentos / count), setDte: span("<SetDTE ", "</SetDTE>", 0), envelopeSignedInfo: span("<SignedInfo", "</SignedInfo>", s.lastIndexOf("<Signature ")) };
}
