/**
 * Who signed a received DTE, and whether a certification authority we trust vouches for them. The
 * XMLDSig check (xml/xmldsig.ts) proves only that the content is intact under the key in the
 * signature; anyone can make a key, or a certificate in any name. Here the signer's certificate is
 * held to the trust anchors of the mode: in live mode the CAs accredited in Chile (accredited-cas.ts),
 * in simulator mode those and the simulator's test CA (simulator-test-ca.ts).
 *
 * Verdicts: PASSED when an anchor issued the certificate (its signature over the certificate
 * verifies with the anchor's key) and the certificate was valid when the document was signed;
 * FAILED for a bare key (no certificate), a self-signed certificate, a certificate that names an
 * anchor as issuer but whose signature that anchor's key does not verify, or one not valid at
 * signing; UNVERIFIED for a certificate issued by a CA that is not an anchor (we cannot tell an
 * accredited CA missing from the list from a made-up one); NOT_CHECKED when the signature itself
 * does not verify.
 */
import { b64decode, buf, bytesEqual, children, readTlv, spkiFromRsa, type Tlv } from "./asn1";
import { readCertificate, type CertificateInfo } from "./certificate";
import { ACCREDITED_CAS } from "./accredited-cas";
import { SIMULATOR_TEST_CA_CERTIFICATE_PEM } from "./simulator-test-ca";

export type SignerKind = "CA_ISSUED" | "SELF_SIGNED" | "KEY_ONLY";
export type TrustMode = "live" | "simulator";

/** The signer check as reported (dates ISO 8601). */
export interface SignerCheck {
  result: "PASSED" | "FAILED" | "UNVERIFIED" | "NOT_CHECKED";
  message: string | null;
  kind: SignerKind | null;
  /** The certificate holder's name (subject CN) and RUT (SAN otherName 1.3.6.1.4.1.8321.1). */
  name: string | null;
  rut: string | null;
  /** The issuing CA's name (issuer CN, else the issuer's whole name). */
  issuer: string | null;
  notBefore: string | null;
  notAfter: string | null;
}

/** When the document says it was signed: TmstFirma (Chile's local time) and FchEmis (bound by the stamp). */
export interface SigningTime {
  tmstFirma: string | null;
  issueDate: string | null;
}

interface Anchor {
  cert: CertificateInfo;
  subjectDer: Uint8Array;
  keys: Map<string, Promise<CryptoKey>>;
}

/** A certificate's parts this check reads: the signed TBSCertificate, its algorithm, signature, issuer and subject. */
interface CertParts {
  tbs: Uint8Array;
  hash: string | null;
  signature: Uint8Array;
  issuer: Uint8Array;
  subject: Uint8Array;
}

const SIG_HASHES: Record<string, string> = { "2a864886f70d010105": "SHA-1", "2a864886f70d01010b": "SHA-256", "2a864886f70d01010c": "SHA-384", "2a864886f70d01010d": "SHA-512" };
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const slice = (der: Uint8Array, t: Tlv) => der.subarray(t.start, t.end);

function certParts(der: Uint8Array): CertParts {
  const [tbs, alg, sig] = children(der, readTlv(der, 0));
  if (!tbs || !alg || !sig || sig.tag !== 0x03) throw new Error("not a certificate");
  const fields = children(der, tbs);
  const at = fields[0]?.tag === 0xa0 ? 1 : 0;
  const oid = children(der, alg)[0];
  const issuer = fields[at + 2];
  const subject = fields[at + 4];
  if (!oid || !issuer || !subject) throw new Error("not a certificate");
  return {
    tbs: slice(der, tbs),
    hash: SIG_HASHES[hex(der.subarray(oid.valueStart, oid.end))] ?? null,
    signature: der.subarray(sig.valueStart + 1, sig.end),
    issuer: slice(der, issuer),
    subject: slice(der, subject),
  };
}

function anchorOf(cert: CertificateInfo): Anchor {
  return { cert, subjectDer: certParts(cert.certificateDer).subject, keys: new Map() };
}

let liveAnchors: Anchor[] | undefined;
let simulatorAnchors: Anchor[] | undefined;
/** The trust anchors of a mode, read once per isolate. */
export function trustAnchors(mode: TrustMode): readonly Anchor[] {
  liveAnchors ??= ACCREDITED_CAS.map((ca) => anchorOf(readCertificate(b64decode(ca.der))));
  if (mode === "live") return liveAnchors;
  return (simulatorAnchors ??= [...liveAnchors, anchorOf(readCertificate(SIMULATOR_TEST_CA_CERTIFICATE_PEM))]);
}

function anchorKey(a: Anchor, hash: string): Promise<CryptoKey> {
  let k = a.keys.get(hash);
  if (!k) {
    k = crypto.subtle.importKey("spki", buf(spkiFromRsa(a.cert.modulus, a.cert.exponent)), { name: "RSASSA-PKCS1-v1_5", hash }, false, ["verify"]);
    a.keys.set(hash, k);
  }
  return k;
}

/** Whether `anchor` signed the certificate whose parts are `p` (false for an algorithm other than RSA PKCS#1 v1.5 with SHA-1/2). */
async function issuedBy(p: CertParts, anchor: Anchor): Promise<boolean> {
  if (!p.hash) return false;
  try {
    return await crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, await anchorKey(anchor, p.hash), buf(p.signature), buf(p.tbs));
  } catch {
    return false;
  }
}

const DAY = 86_400_000;
const HOUR = 3_600_000;
/**
 * The span of instants a local Chilean time can name (UTC−3 or UTC−4): [t + 3 h, t + 4 h] for
 * TmstFirma, the whole day widened the same way for FchEmis. Null when the text is not a date.
 */
function instants(text: string | null, wholeDay: boolean): [number, number] | null {
  if (!text) return null;
  const m = wholeDay ? /^(\d{4}-\d{2}-\d{2})$/.exec(text) : /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})$/.exec(text);
  const t = m ? Date.parse(`${m[1]}${wholeDay ? "T00:00:00" : ""}Z`) : NaN;
  if (Number.isNaN(t)) return null;
  return [t + 3 * HOUR, t + (wholeDay ? DAY : 0) + 4 * HOUR];
}

/**
 * Whether the certificate was valid when the document was signed: at TmstFirma when the document
 * gives one (else on FchEmis), and not expired before FchEmis (which the stamp binds, unlike
 * TmstFirma, which the signer writes freely). Null when valid, else the sentence saying why not.
 */
function validityProblem(cert: CertificateInfo, at: SigningTime): string | null {
  const nb = cert.notBefore.getTime();
  const na = cert.notAfter.getTime();
  const span = `it is valid from ${isoDay(cert.notBefore)} to ${isoDay(cert.notAfter)}`;
  const signed = instants(at.tmstFirma, false) ?? instants(at.issueDate, true);
  if (signed && (nb > signed[1] || na < signed[0])) return `was not valid when the document was signed (${at.tmstFirma ?? at.issueDate}): ${span}`;
  const issued = instants(at.issueDate, true);
  if (issued && na < issued[0]) return `had expired before the document's issue date (${at.issueDate}): ${span}`;
  if (!signed && !issued) return `cannot be held to a signing date (the document gives neither TmstFirma nor FchEmis): ${span}`;
  return null;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

function describe(cert: CertificateInfo, kind: SignerKind): Omit<SignerCheck, "result" | "message"> {
  return { kind, name: cert.subjectCN, rut: cert.rut ?? cert.rutText, issuer: cert.issuerCN ?? cert.issuer, notBefore: cert.notBefore.toISOString(), notAfter: cert.notAfter.toISOString() };
}

const NOBODY = { kind: null, name: null, rut: null, issuer: null, notBefore: null, notAfter: null };
const DO_NOT_TRUST = "Do not treat this document as genuine.";

/** Who it is, in words: "JUAN PÉREZ (RUT 11111111-1)". */
const who = (d: Omit<SignerCheck, "result" | "message">) => `${d.name ?? "an unnamed holder"} (RUT ${d.rut ?? "not given"})`;

/**
 * The signer check of a DTE whose XMLDSig verified (`signatureOk`) under `cert` (undefined: the
 * signature carries only a key, no X509Certificate).
 */
export async function checkSigner(signatureOk: boolean, cert: CertificateInfo | undefined, at: SigningTime, mode: TrustMode): Promise<SignerCheck> {
  if (!signatureOk) return { result: "NOT_CHECKED", message: "The signature does not verify, so who signed it proves nothing.", ...NOBODY };
  if (!cert) return { result: "FAILED", message: `Signed with a bare key that no certification authority vouches for: anyone can make one. ${DO_NOT_TRUST}`, ...NOBODY, kind: "KEY_ONLY" };
  let parts: CertParts;
  try {
    parts = certParts(cert.certificateDer);
  } catch {
    return { result: "FAILED", message: `The signer's certificate cannot be read. ${DO_NOT_TRUST}`, ...NOBODY };
  }
  if (bytesEqual(parts.issuer, parts.subject)) {
    const d = describe(cert, "SELF_SIGNED");
    return { result: "FAILED", message: `Signed with a self-signed certificate in the name of ${who(d)}: anyone can make one, and no certification authority vouches for it. ${DO_NOT_TRUST}`, ...d };
  }
  const d = describe(cert, "CA_ISSUED");
  const named = trustAnchors(mode).filter((a) => bytesEqual(a.subjectDer, parts.issuer));
  let issuer: Anchor | undefined;
  for (const a of named) if (!issuer && (await issuedBy(parts, a))) issuer = a;
  if (!issuer && named.length > 0) {
    return { result: "FAILED", message: `The certificate of ${who(d)} names ${d.issuer} as its issuer, but ${d.issuer} did not sign it: the certificate is forged. ${DO_NOT_TRUST}`, ...d };
  }
  if (!issuer) {
    return { result: "UNVERIFIED", message: `Signed by ${who(d)} with a certificate issued by ${d.issuer}, a certification authority we cannot confirm is accredited by the SII. The document may be genuine: confirm it with the supplier before relying on it.`, ...d };
  }
  const invalid = validityProblem(cert, at);
  if (invalid) return { result: "FAILED", message: `The certificate of ${who(d)} ${invalid}. ${DO_NOT_TRUST}`, ...d };
  return { result: "PASSED", message: null, ...d };
}
