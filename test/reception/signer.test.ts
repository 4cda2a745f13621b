/**
 * Who signed a received document: the genuine document with the issuer's name changed and signed
 * again is caught by the signer check whatever the key (self-signed, a bare key, an unknown CA, a
 * forged or expired certificate), while the stamp still verifies; a certificate from the
 * simulator's test CA passes. And a re-signed document whose net and IVA were moved, the total
 * kept, fails the totals check by name while the SII's verdict stays OK (NEEDS_REVIEW).
 */
import forge from "node-forge";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import { credentialsFromParts, type SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { SIMULATOR_TEST_CA_CERTIFICATE_PEM } from "../../src/countries/cl/pki/simulator-test-ca";
import { signXml } from "../../src/countries/cl/xml/xmldsig";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { makeFakeCertificate, type FakeCertificate } from "../helpers/fake-certificates";
import { envelope, signedDte } from "../sii/helpers";
import { upload, receptionFixture, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;
let folio = 100;

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
});

const DAY = 86_400_000;
const checksOf = (doc: any) => Object.fromEntries(doc.verification.checks.map((c: any) => [c.name, c.result]));
const checkOf = (doc: any, name: string) => doc.verification.checks.find((c: any) => c.name === name);
const credentials = (f: FakeCertificate) => credentialsFromParts(f.certDer, f.keyPkcs8);

/** The genuine document, edited and signed again by `signer` (its Signature replaced); `keyOnly` drops the certificate from KeyInfo. */
async function resigned(d: SignedDte, signer: SigningCredentials, edit: (xml: string) => string = (x) => x.replace("<RznSoc>EMPRESA DE PRUEBA SPA</RznSoc>", "<RznSoc>EMPRESA IMPOSTORA SPA</RznSoc>"), keyOnly = false): Promise<string> {
  const unsigned = edit(d.element.replace(/<Signature[\s\S]*<\/Signature>\n?/, ""));
  expect(unsigned).not.toBe(d.element.replace(/<Signature[\s\S]*<\/Signature>\n?/, ""));
  const signed = await signXml(unsigned, d.id, signer);
  return keyOnly ? signed.replace(/\n?<X509Data>[\s\S]*?<\/X509Data>/, "") : signed;
}

async function uploadOne(element: string) {
  const res = await upload(r, encodeLatin1(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${element}\n`), "dte.xml");
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.documents[0];
}

describe("signer check", () => {
  it("a supplier's certificate from the simulator's test CA passes: VERIFIED, with the signer named", async () => {
    const d = await signedDte(caf33, ++folio, cert);
    const doc = (await upload(r, (await envelope([d], cert)).xml)).body.documents[0];
    expect(doc.verification.status).toBe("VERIFIED");
    expect(checksOf(doc)).toEqual({ envelope_signature: "PASSED", dte_signature: "PASSED", signer: "PASSED", ted: "PASSED", caf: "PASSED", recipient_rut: "PASSED", issuer_rut: "PASSED", schema: "PASSED", totals: "PASSED", duplicate: "PASSED", sii_status: "NOT_CHECKED" });
    expect(checkOf(doc, "signer")).toMatchObject({ message: null, signer: { name: "PERSONA DE PRUEBA FALSA", tax_id: "11111111-1", issuer: "SIMULADOR SII CA DE PRUEBA", kind: "CA_ISSUED", valid_from: "2026-01-01T00:00:00.000Z", valid_to: "2028-01-01T00:00:00.000Z" } });
  });

  it("the genuine document with the issuer's name changed, re-signed with a self-signed certificate: signer FAILED (1), though the stamp verifies", async () => {
    const self = await credentials(await makeFakeCertificate({ rut: "11111111-1", cn: "EMPRESA DE PRUEBA SPA", selfSigned: true, bits: 1024 }));
    const doc = await uploadOne(await resigned(await signedDte(caf33, ++folio, cert), self));
    expect(doc.verification).toMatchObject({ status: "FAILED", reception_status: 1 });
    expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", signer: "FAILED", ted: "PASSED", caf: "PASSED" });
    expect(checkOf(doc, "signer")).toMatchObject({
      message: "Signed with a self-signed certificate in the name of EMPRESA DE PRUEBA SPA (RUT 11111111-1): anyone can make one, and no certification authority vouches for it. Do not treat this document as genuine.",
      signer: { kind: "SELF_SIGNED", issuer: "EMPRESA DE PRUEBA SPA" },
    });
  });

  it("re-signed with a bare RSAKeyValue (no certificate): signer FAILED", async () => {
    const doc = await uploadOne(await resigned(await signedDte(caf33, ++folio, cert), cert, undefined, true));
    expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", signer: "FAILED", ted: "PASSED" });
    expect(checkOf(doc, "signer").message).toBe("Signed with a bare key that no certification authority vouches for: anyone can make one. Do not treat this document as genuine.");
    expect(checkOf(doc, "signer").signer).toEqual({ kind: "KEY_ONLY", name: null, tax_id: null, issuer: null, valid_from: null, valid_to: null });
    expect(doc.verification).toMatchObject({ status: "FAILED", reception_status: 1 });
  });

  it("a certificate of a CA not in the list: UNVERIFIED, received (0) but NEEDS_REVIEW, the message naming signer, RUT and CA", async () => {
    const ca = await makeFakeCertificate({ rut: null, cn: "AUTORIDAD CERTIFICADORA DESCONOCIDA", selfSigned: true, bits: 1024 });
    const holder = await credentials(await makeFakeCertificate({ rut: "12345678-5", cn: "JUAN PRUEBA", issuer: ca, bits: 1024, notBefore: new Date(Date.now() - 400 * DAY) }));
    const doc = await uploadOne(await resigned(await signedDte(caf33, ++folio, cert), holder));
    expect(doc.verification).toMatchObject({ status: "NEEDS_REVIEW", reception_status: 0 });
    expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", signer: "UNVERIFIED", ted: "PASSED" });
    expect(checkOf(doc, "signer").message).toBe("Signed by JUAN PRUEBA (RUT 12345678-5) with a certificate issued by AUTORIDAD CERTIFICADORA DESCONOCIDA, a certification authority we cannot confirm is accredited by the SII. The document may be genuine: confirm it with the supplier before relying on it.");
  });

  it("a certificate naming the test CA as issuer but signed by another key: FAILED as forged", async () => {
    const other = await makeFakeCertificate({ rut: null, cn: "OTRA", selfSigned: true, bits: 1024 });
    const impostorCa: FakeCertificate = { ...other, cert: forge.pki.certificateFromPem(SIMULATOR_TEST_CA_CERTIFICATE_PEM) };
    const holder = await credentials(await makeFakeCertificate({ rut: "11111111-1", issuer: impostorCa, bits: 1024 }));
    const doc = await uploadOne(await resigned(await signedDte(caf33, ++folio, cert), holder));
    expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", signer: "FAILED" });
    expect(checkOf(doc, "signer").message).toContain("names SIMULADOR SII CA DE PRUEBA as its issuer, but SIMULADOR SII CA DE PRUEBA did not sign it: the certificate is forged.");
  });

  it("a test CA certificate expired when the document was signed: FAILED", async () => {
    const expired = await credentials(await makeFakeCertificate({ rut: "11111111-1", bits: 1024, notBefore: new Date(Date.UTC(2025, 0, 1)), notAfter: new Date(Date.UTC(2026, 5, 1)) }));
    const doc = await uploadOne(await resigned(await signedDte(caf33, ++folio, cert), expired));
    expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", signer: "FAILED" });
    expect(checkOf(doc, "signer").message).toBe("The certificate of PERSONA DE PRUEBA FALSA (RUT 11111111-1) was not valid when the document was signed (2026-11-20T10:30:00): it is valid from 2025-01-01 to 2026-06-01. Do not treat this document as genuine.");
    expect(doc.verification.reception_status).toBe(1);
  });
});

describe("totals check at intake", () => {
  it("a re-signed document whose net and IVA were moved, total kept: totals FAILED naming the sums, received (0) but NEEDS_REVIEW", async () => {
    const d = await signedDte(caf33, ++folio, cert);
    const net = Number(/<MntNeto>(\d+)<\/MntNeto>/.exec(d.element)![1]);
    const iva = Number(/<IVA>(\d+)<\/IVA>/.exec(d.element)![1]);
    const moved = (x: string) => x.replace(`<MntNeto>${net}</MntNeto>`, `<MntNeto>${net - 1000}</MntNeto>`).replace(`<IVA>${iva}</IVA>`, `<IVA>${iva + 1000}</IVA>`);
    const env_ = await envelope([{ ...d, element: await resigned(d, cert, moved) }], cert);
    const doc = (await upload(r, env_.xml)).body.documents[0];
    expect(checksOf(doc)).toMatchObject({ envelope_signature: "PASSED", dte_signature: "PASSED", signer: "PASSED", ted: "PASSED", totals: "FAILED" });
    expect(doc.verification).toMatchObject({ status: "NEEDS_REVIEW", reception_status: 0 });
    const totals = checkOf(doc, "totals").message;
    expect(totals).toContain(`the taxed lines come to ${net} after global discounts and surcharges, not MntNeto ${net - 1000}`);
    expect(totals).toContain(`IVA ${iva + 1000} is not 19 % of MntNeto ${net - 1000}`);
  });
});
