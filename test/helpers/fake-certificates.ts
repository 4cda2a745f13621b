/**
 * FAKE signing certificates for tests: a fresh RSA key (WebCrypto), an X.509 certificate carrying a
 * made-up RUT in SAN otherName 1.3.6.1.4.1.8321.1 (as Chilean certificates do), and PKCS#12 files in
 * the legacy (3DES) and modern (AES-256/PBKDF2) encodings. Never a real taxpayer's. Unless told
 * otherwise (`issuer`, `selfSigned`), a certificate is issued by the simulator's test CA
 * (src/countries/cl/pki/simulator-test-ca.ts), which reception trusts in simulator mode.
 */
import forge from "node-forge";
import { SIMULATOR_TEST_CA_CERTIFICATE_PEM, SIMULATOR_TEST_CA_PRIVATE_KEY_PKCS8_PEM } from "../../src/countries/cl/pki/simulator-test-ca";
import { pemDecode } from "../../src/countries/cl/pki/asn1";

export interface FakeCertificate {
  rut: string | null;
  certPem: string;
  certDer: Uint8Array;
  key: forge.pki.rsa.PrivateKey;
  cert: forge.pki.Certificate;
  keyPkcs8: Uint8Array;
}

function bin(u: Uint8Array): string {
  let s = "";
  for (const b of u) s += String.fromCharCode(b);
  return s;
}
function bytes(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

let simulatorCa: Promise<{ subject: forge.pki.CertificateField[]; key: CryptoKey }> | undefined;
/** The simulator's test CA: its name, and its key imported for WebCrypto (signing with forge's RSA takes far longer). */
function simulatorTestCa() {
  return (simulatorCa ??= (async () => ({
    subject: forge.pki.certificateFromPem(SIMULATOR_TEST_CA_CERTIFICATE_PEM).subject.attributes,
    key: await crypto.subtle.importKey("pkcs8", pemDecode(SIMULATOR_TEST_CA_PRIVATE_KEY_PKCS8_PEM, "PRIVATE KEY")! as Uint8Array<ArrayBuffer>, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]),
  }))());
}

/** Signs `cert` (its issuer already set) with the simulator's test CA, SHA-256 with RSA. */
async function signBySimulatorCa(cert: forge.pki.Certificate, key: CryptoKey): Promise<void> {
  const oid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = oid;
  cert.signatureOid = oid;
  const tbs = bytes(forge.asn1.toDer((forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert)).getBytes());
  cert.signature = bin(new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, tbs as Uint8Array<ArrayBuffer>)));
}

async function freshKey(bits: number): Promise<{ key: forge.pki.rsa.PrivateKey; pkcs8: Uint8Array }> {
  const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: bits, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  return { key: forge.pki.privateKeyFromAsn1(forge.asn1.fromDer(bin(pkcs8))) as forge.pki.rsa.PrivateKey, pkcs8 };
}

export async function makeFakeCertificate(opts: {
  rut?: string | null;
  cn?: string;
  notBefore?: Date;
  notAfter?: Date;
  bits?: number;
  issuer?: FakeCertificate;
  /** Its own issuer, signed with its own key (no CA vouches for it). */
  selfSigned?: boolean;
} = {}): Promise<FakeCertificate> {
  const ca = opts.issuer || opts.selfSigned ? null : await simulatorTestCa();
  const { key, pkcs8 } = await freshKey(opts.bits ?? 2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = "0" + Math.floor(Math.random() * 1e9).toString(16);
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.UTC(2026, 0, 1));
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.UTC(2028, 0, 1));
  const subject = [
    { name: "commonName", value: opts.cn ?? "PERSONA DE PRUEBA FALSA" },
    { name: "organizationName", value: "Fake Test Material" },
    { name: "countryName", value: "CL" },
  ];
  cert.setSubject(subject);
  cert.setIssuer(opts.issuer ? opts.issuer.cert.subject.attributes : ca ? ca.subject : subject);
  const rut = opts.rut === undefined ? "11111111-1" : opts.rut;
  const exts: object[] = [{ name: "basicConstraints", cA: !!(opts.cn ?? "").includes("CA") }, { name: "keyUsage", digitalSignature: true, nonRepudiation: true }];
  if (rut) {
    const a = forge.asn1;
    const otherName = a.create(a.Class.CONTEXT_SPECIFIC, 0, true, [
      a.create(a.Class.UNIVERSAL, a.Type.OID, false, a.oidToDer("1.3.6.1.4.1.8321.1").getBytes()),
      a.create(a.Class.CONTEXT_SPECIFIC, 0, true, [a.create(a.Class.UNIVERSAL, a.Type.IA5STRING, false, rut)]),
    ]);
    exts.push({ id: "2.5.29.17", critical: false, value: a.create(a.Class.UNIVERSAL, a.Type.SEQUENCE, true, [otherName]) });
  }
  cert.setExtensions(exts);
  if (ca) await signBySimulatorCa(cert, ca.key);
  else cert.sign(opts.issuer ? opts.issuer.key : key, forge.md.sha256.create());
  const certDer = bytes(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes());
  return { rut, certPem: forge.pki.certificateToPem(cert), certDer, key, cert, keyPkcs8: pkcs8 };
}

/**
 * A .pfx of the fake certificate. legacy = pbeWithSHAAnd3-KeyTripleDES-CBC, modern = PBES2 AES-256.
 * `extraCerts` are added (e.g. a CA) and `certs` may replace the holder's certificate (mismatch tests).
 */
export function makeFakePfx(
  fake: FakeCertificate,
  password: string,
  kind: "legacy" | "modern",
  opts: { extraCerts?: FakeCertificate[]; certs?: forge.pki.Certificate[]; noKey?: boolean } = {},
): Uint8Array {
  const certs = opts.certs ?? [...(opts.extraCerts ?? []).map((c) => c.cert), fake.cert];
  const p12 = forge.pkcs12.toPkcs12Asn1(opts.noKey ? null : fake.key, certs, password, {
    algorithm: kind === "legacy" ? "3des" : "aes256",
    friendlyName: "fake",
  });
  return bytes(forge.asn1.toDer(p12).getBytes());
}
