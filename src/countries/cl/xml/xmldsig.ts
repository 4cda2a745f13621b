/**
 * XMLDSig in the SII profile (xmldsignature_v10.xsd): inclusive C14N 1.0, RSA-SHA1, SHA-1 digest,
 * exactly one Reference (URI="#ID", or URI="" enveloped for the token seed request), KeyInfo =
 * KeyValue/RSAKeyValue + X509Data/X509Certificate, written UNPREFIXED:
 * `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">`, as the last child of the root.
 *
 * Signing works on the final serialised text: the digest is the C14N of the referenced element
 * parsed from that text (so inherited namespaces count), SignedInfo is inserted, the document is
 * parsed again and SignedInfo canonicalised exactly as it sits, then only the SignatureValue text
 * is filled in. Nothing is reformatted after signing.
 */
import { b64decode, b64encode, buf, bytesEqual, spkiFromRsa, uintValue, wrap64 } from "../pki/asn1";
import { canonicalize, type C14nOptions } from "./c14n";
import { readCertificate, type CertificateInfo } from "../pki/certificate";
import { EngineError } from "../errors";
import { childElements, findById, firstChild, NS_DSIG, ownCopy, parseXml, type XDocument, type XElement, type XNode } from "./xml";

export const ALG = {
  C14N: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
  C14N_COMMENTS: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
  EXC_C14N: "http://www.w3.org/2001/10/xml-exc-c14n#",
  ENVELOPED: "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
  RSA_SHA1: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
  RSA_SHA256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  SHA1: "http://www.w3.org/2000/09/xmldsig#sha1",
  SHA256: "http://www.w3.org/2001/04/xmlenc#sha256",
} as const;

/** What signing needs: SigningCredentials from certificate.ts satisfies it. */
export interface XmlSigner {
  /** Holder's RUT when known (SigningCredentials.rut); envelopes check RutEnvia against it. */
  rut?: string | null;
  privateKey: CryptoKey;
  certificateBase64: string;
  modulus: Uint8Array;
  exponent: Uint8Array;
}

const PLACEHOLDER = "@@SIGNATURE_VALUE@@";

async function sha1b64(s: string): Promise<string> {
  return b64encode(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(s)));
}

function keyInfo(signer: XmlSigner): string {
  return (
    `<KeyInfo>\n<KeyValue>\n<RSAKeyValue>\n<Modulus>${wrap64(b64encode(uintValue(signer.modulus)))}</Modulus>\n` +
    `<Exponent>${b64encode(uintValue(signer.exponent))}</Exponent>\n</RSAKeyValue>\n</KeyValue>\n` +
    `<X509Data>\n<X509Certificate>${wrap64(signer.certificateBase64.replace(/\s+/g, ""))}</X509Certificate>\n</X509Data>\n</KeyInfo>`
  );
}

/**
 * Signs `xml` (a complete document without XML declaration) and returns it with the Signature
 * appended as the root's last child. referenceId "" signs the whole document (enveloped).
 */
export async function signXml(xml: string, referenceId: string, signer: XmlSigner): Promise<string> {
  const doc = parseXml(xml, "The document to sign");
  const root = doc.documentElement as XElement;
  let digest: string;
  let transform: string;
  if (referenceId === "") {
    digest = await sha1b64(canonicalize(doc));
    transform = ALG.ENVELOPED;
  } else {
    const target = findById(doc, referenceId);
    if (!target) throw new EngineError("INTERNAL", `No element with ID="${referenceId}" to sign`);
    digest = await sha1b64(canonicalize(target));
    transform = ALG.C14N;
  }
  const signedInfo =
    `<SignedInfo>\n<CanonicalizationMethod Algorithm="${ALG.C14N}"></CanonicalizationMethod>\n` +
    `<SignatureMethod Algorithm="${ALG.RSA_SHA1}"></SignatureMethod>\n` +
    `<Reference URI="${referenceId ? "#" + referenceId : ""}">\n<Transforms>\n<Transform Algorithm="${transform}"></Transform>\n</Transforms>\n` +
    `<DigestMethod Algorithm="${ALG.SHA1}"></DigestMethod>\n<DigestValue>${digest}</DigestValue>\n</Reference>\n</SignedInfo>`;
  const signature = `<Signature xmlns="${NS_DSIG}">\n${signedInfo}\n<SignatureValue>${PLACEHOLDER}</SignatureValue>\n${keyInfo(signer)}\n</Signature>`;
  const close = `</${root.nodeName}>`;
  const at = xml.lastIndexOf(close);
  if (at < 0) throw new EngineError("INTERNAL", "Cannot find the root's end tag");
  // A line break after the Signature keeps lines short; not for enveloped signatures, where any
  // text added to the signed document would change its digest.
  const withSig = xml.slice(0, at) + signature + (referenceId === "" ? "" : "\n") + xml.slice(at);
  // Canonicalise SignedInfo as it sits in the final document. Its only ancestors are the root and
  // the Signature, so the root's start tag (its namespace declarations) plus the Signature is all
  // the context that matters: parse just that instead of the whole (possibly large) document.
  const rootStart = /<(?![?!])[^>]*>/.exec(xml);
  if (!rootStart || rootStart[0].endsWith("/>")) throw new EngineError("INTERNAL", "Cannot read the root's start tag");
  const context = parseXml(`${rootStart[0]}${signature}${close}`, "The signature context");
  const si = firstChild(firstChild(context.documentElement as XElement, "Signature")!, "SignedInfo")!;
  const c14nSi = canonicalize(si);
  const value = await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, signer.privateKey, new TextEncoder().encode(c14nSi));
  return withSig.replace(PLACEHOLDER, wrap64(b64encode(value)));
}

/** The signed token request of the SII seed/token exchange (CrSeed / GetTokenFromSeed). */
export async function buildTokenRequest(seed: string, signer: XmlSigner): Promise<string> {
  if (!/^\d+$/.test(seed.trim())) throw new EngineError("INVALID_INPUT", "The seed is a number", { field: "seed" });
  const xml = `<getToken><item><Semilla>${seed.trim()}</Semilla></item></getToken>`;
  return `<?xml version="1.0"?>\n` + (await signXml(xml, "", signer));
}

// ---- verification ------------------------------------------------------------------------------

export type DigestMode = "context" | "standalone" | "exclusive" | "stripped";

export interface SignatureCheck {
  ok: boolean;
  failure?: "SIGNATURE_MISSING" | "SIGNATURE_INVALID" | "SIGNATURE_UNSUPPORTED";
  message?: string;
  /** Reference URI ("#ID" or ""). */
  reference?: string;
  /** Which namespace treatment made the digest match (inbound fallbacks). */
  digestMode?: DigestMode;
  /** The default namespace restored on a root that no longer declares it, for the signature to verify (VerifyOptions.defaultNamespace). */
  restoredNamespace?: string;
  /** The Reference's DigestValue (base64), once it matched (a RecepcionEnvio's Digest names the envelope by it). */
  digestValue?: string;
  signer?: Pick<CertificateInfo, "rut" | "subjectCN" | "issuer" | "notBefore" | "notAfter" | "fingerprintSha1">;
  /** The X509Certificate a passing signature was verified with (absent for a bare key). */
  certificate?: CertificateInfo;
}

function modeOptions(mode: DigestMode, boundary: XElement | null, exclude: XElement | null, memo?: C14nOptions["memo"], defaultNamespace?: string): C14nOptions {
  const ns = defaultNamespace ? { defaultNamespace } : {};
  switch (mode) {
    case "context":
      return { exclude, ...ns, ...(memo ? { memo } : {}) };
    case "standalone":
      // As if the signature's parent were the document's root (sii-formats.md §3.3).
      return { exclude, boundary, ...ns };
    case "exclusive":
      return { exclusive: true, exclude, ...ns };
    case "stripped":
      return { stripNamespaces: true, exclude };
  }
}

const certCache = new Map<string, CertificateInfo>();
const CERT_CACHE_MAX = 64;
let lastCert: { text: string; cert: CertificateInfo } | null = null;

/**
 * The certificate of an X509Certificate text (undefined for an empty one, null when it cannot be
 * read), isolate-wide and bounded: the same signer's certificate, document after document. Keyed
 * by the text as written too, so that a known certificate costs one lookup. Bounded at every
 * insertion (the same certificate wrapped with other whitespace is another key) and keyed by
 * copies, since the texts are slices of the received files.
 */
export function certificateOf(certText: string): CertificateInfo | undefined | null {
  // The last one first: comparing the text costs less than hashing it for the map (each file's text is a new string).
  if (lastCert !== null && lastCert.text === certText) return lastCert.cert;
  const cert = certCache.get(certText);
  if (cert) {
    lastCert = { text: ownCopy(certText), cert };
    return cert;
  }
  const certB64 = certText.replace(/\s+/g, "");
  if (!certB64) return undefined;
  let read = certCache.get(certB64);
  if (!read) {
    try {
      read = readCertificate(b64decode(certB64));
    } catch {
      return null;
    }
  }
  if (certCache.size >= CERT_CACHE_MAX - 1) certCache.clear();
  lastCert = { text: ownCopy(certText), cert: read };
  certCache.set(ownCopy(certB64), read);
  if (certText !== certB64) certCache.set(ownCopy(certText), read);
  return read;
}

/** How many texts the certificate cache holds (tests check its bound). */
export const certificateCacheSize = () => certCache.size;

/** What a SignatureCheck says about its signer. */
export function signerOf(cert: CertificateInfo): NonNullable<SignatureCheck["signer"]> {
  return { rut: cert.rut, subjectCN: cert.subjectCN, issuer: cert.issuer, notBefore: cert.notBefore, notAfter: cert.notAfter, fingerprintSha1: cert.fingerprintSha1 };
}

/** Imported verification keys, isolate-wide and bounded (the same signers sign document after document). */
const verifyKeys = new Map<string, Promise<CryptoKey>>();
const certKeys = new WeakMap<CertificateInfo, { "SHA-1"?: Promise<CryptoKey>; "SHA-256"?: Promise<CryptoKey> }>();
export function verifyKey(modulus: Uint8Array, exponent: Uint8Array, hash: "SHA-1" | "SHA-256", cert?: CertificateInfo): Promise<CryptoKey> {
  if (cert) {
    // The certificate's key (modulus and exponent are the certificate's own): kept with the certificate.
    let perCert = certKeys.get(cert);
    if (!perCert) certKeys.set(cert, (perCert = {}));
    const k = (perCert[hash] ??= verifyKey(modulus, exponent, hash));
    return k;
  }
  const id = `${hash}|${b64encode(exponent)}|${b64encode(modulus)}`;
  let p = verifyKeys.get(id);
  if (!p) {
    p = crypto.subtle.importKey("spki", buf(spkiFromRsa(modulus, exponent)), { name: "RSASSA-PKCS1-v1_5", hash }, false, ["verify"]);
    if (verifyKeys.size >= 256) verifyKeys.delete(verifyKeys.keys().next().value!);
    verifyKeys.set(id, p);
    p.catch(() => verifyKeys.delete(id));
  }
  return p;
}

/** Whether an RSAKeyValue's Modulus/Exponent texts hold the certificate's key (memoised per certificate). */
const keyValueMatches = new WeakMap<CertificateInfo, Map<string, boolean>>();
let lastKeyValue: { cert: CertificateInfo; modulus: string; exponent: string; v: boolean } | null = null;
export function keyValueMatchesCert(cert: CertificateInfo, modulusText: string, exponentText: string): boolean {
  const last = lastKeyValue;
  if (last !== null && last.cert === cert && last.modulus === modulusText && last.exponent === exponentText) return last.v;
  const v = keyValueMatchesMemo(cert, modulusText, exponentText);
  lastKeyValue = { cert, modulus: ownCopy(modulusText), exponent: ownCopy(exponentText), v };
  return v;
}

function keyValueMatchesMemo(cert: CertificateInfo, modulusText: string, exponentText: string): boolean {
  let m = keyValueMatches.get(cert);
  if (!m) keyValueMatches.set(cert, (m = new Map()));
  const id = `${exponentText}|${modulusText}`;
  let v = m.get(id);
  if (v === undefined) {
    const mod = uintValue(b64decode(modulusText));
    const exp = uintValue(b64decode(exponentText));
    v = bytesEqual(mod, cert.modulus) && bytesEqual(exp, cert.exponent);
    if (m.size >= 16) m.clear();
    m.set(id, v);
  }
  return v;
}

/**
 * Verifies one Signature element. With `fallbacks` (inbound documents) the digest and SignedInfo
 * are also tried standalone (the signature's parent as document root), with exclusive C14N and with
 * every namespace stripped (sii-formats.md §3.3); without it only the strict in-context form counts.
 */
/** Options of a verification; `memo` shares canonical forms between the signatures of one unchanging tree (C14nOptions.memo). */
export interface VerifyOptions {
  fallbacks?: boolean;
  memo?: C14nOptions["memo"];
  /**
   * What is not kept of a received document (exchange/verified-form.ts): the Reference is not
   * looked up there, and where some of it lies inside the signed content (`inContent`), the digest
   * is of the content without it: what is verified is what is kept.
   */
  skip?: ReadonlySet<XNode> & { inContent?: boolean };
  /** A default namespace the signer had in scope and the file no longer declares (C14nOptions.defaultNamespace). */
  defaultNamespace?: string;
}

/** The first child of `el` named `name` in the XMLDSig namespace: the signature's parts are read only there. */
function dsigChild(el: XElement | undefined, name: string): XElement | undefined {
  for (let n = el?.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as XElement).localName === name && (n as XElement).namespaceURI === NS_DSIG) return n as XElement;
  }
  return undefined;
}
const dsigPath = (el: XElement, ...names: string[]) => names.reduce<XElement | undefined>((e, n) => dsigChild(e, n), el);

/** The text of a Signature's KeyInfo/X509Data/X509Certificate ("" without one): the certificate it is verified with. */
function signatureCertificateText(sig: XElement): string {
  return dsigPath(sig, "KeyInfo", "X509Data", "X509Certificate")?.textContent ?? "";
}

/** A failed check, as verification answers it. */
type Failed = SignatureCheck & { ok: false };
const failed = (failure: SignatureCheck["failure"], message: string, extra: Pick<SignatureCheck, "reference" | "digestMode" | "signer"> = {}): Failed => ({ ok: false, failure, message, ...extra });
const isFailed = (x: object): x is Failed => (x as { ok?: unknown }).ok === false;

/** The parts of a Signature's SignedInfo, checked against the SII profile (one Reference, supported algorithms). */
interface SignedInfoParts {
  si: XElement;
  sv: XElement;
  /** CanonicalizationMethod and SignatureMethod algorithms. */
  cm: string;
  sm: string;
  uri: string;
  /** DigestValue, whitespace removed. */
  dv: string;
  transforms: string[];
  hash: "SHA-1" | "SHA-256";
}

function readSignedInfo(sig: XElement): SignedInfoParts | Failed {
  const si = dsigChild(sig, "SignedInfo");
  const sv = dsigChild(sig, "SignatureValue");
  if (!si || !sv) return failed("SIGNATURE_INVALID", "The Signature lacks SignedInfo or SignatureValue");
  const cm = firstChild(si, "CanonicalizationMethod")?.getAttribute("Algorithm");
  const sm = firstChild(si, "SignatureMethod")?.getAttribute("Algorithm");
  const refs = childElements(si, "Reference");
  if (refs.length !== 1) return failed("SIGNATURE_UNSUPPORTED", `The SII profile has exactly one Reference; found ${refs.length}`);
  const ref = refs[0]!;
  const uri = ref.getAttribute("URI") ?? "";
  const dm = firstChild(ref, "DigestMethod")?.getAttribute("Algorithm");
  const dv = (firstChild(ref, "DigestValue")?.textContent ?? "").replace(/\s+/g, "");
  const transforms = firstChild(ref, "Transforms") ? childElements(firstChild(ref, "Transforms")!, "Transform").map((t) => t.getAttribute("Algorithm") ?? "") : [];
  if (cm !== ALG.C14N && cm !== ALG.EXC_C14N && cm !== ALG.C14N_COMMENTS) return failed("SIGNATURE_UNSUPPORTED", `Canonicalization ${cm} is not supported`);
  if (sm !== ALG.RSA_SHA1 && sm !== ALG.RSA_SHA256) return failed("SIGNATURE_UNSUPPORTED", `Signature method ${sm} is not supported`);
  if (dm !== ALG.SHA1 && dm !== ALG.SHA256) return failed("SIGNATURE_UNSUPPORTED", `Digest method ${dm} is not supported`);
  for (const t of transforms) if (![ALG.C14N, ALG.ENVELOPED, ALG.EXC_C14N, ALG.C14N_COMMENTS].includes(t as never)) return failed("SIGNATURE_UNSUPPORTED", `Transform ${t} is not supported`);
  return { si, sv, cm, sm, uri, dv, transforms, hash: dm === ALG.SHA1 ? "SHA-1" : "SHA-256" };
}

/** The signer's key: the X509Certificate's (KeyValue, when present, must hold the same key) or a bare KeyValue. */
function signerKey(sig: XElement, uri: string): { modulus: Uint8Array; exponent: Uint8Array; cert: CertificateInfo | undefined; signerInfo: SignatureCheck["signer"] } | Failed {
  const certText = signatureCertificateText(sig);
  const rsaKv = dsigPath(sig, "KeyInfo", "KeyValue", "RSAKeyValue");
  const cert = certificateOf(certText);
  if (cert === null) return failed("SIGNATURE_INVALID", "The X509Certificate cannot be read", { reference: uri });
  let modulus: Uint8Array, exponent: Uint8Array;
  if (cert) {
    modulus = cert.modulus;
    exponent = cert.exponent;
    if (rsaKv) {
      if (!keyValueMatchesCert(cert, dsigChild(rsaKv, "Modulus")?.textContent ?? "", dsigChild(rsaKv, "Exponent")?.textContent ?? "")) return failed("SIGNATURE_INVALID", "KeyValue and X509Certificate hold different keys", { reference: uri });
    }
  } else if (rsaKv) {
    modulus = uintValue(b64decode(dsigChild(rsaKv, "Modulus")?.textContent ?? ""));
    exponent = uintValue(b64decode(dsigChild(rsaKv, "Exponent")?.textContent ?? ""));
  } else return failed("SIGNATURE_INVALID", "The Signature carries no key", { reference: uri });
  return { modulus, exponent, cert, signerInfo: cert ? signerOf(cert) : undefined };
}

/** What the Reference points at: the whole document (URI "", enveloped) or the element of that ID under the signature's parent. */
function referenceTarget(doc: XDocument, sig: XElement, p: SignedInfoParts, signerInfo: SignatureCheck["signer"], opts: VerifyOptions): { target: XElement | XDocument; exclude: XElement | null } | Failed {
  const { uri, transforms } = p;
  if (uri === "") {
    if (!transforms.includes(ALG.ENVELOPED)) return failed("SIGNATURE_UNSUPPORTED", 'A URI="" reference needs the enveloped-signature transform', { reference: uri });
    return { target: doc, exclude: sig };
  }
  if (uri.startsWith("#")) {
    // Only under the signature's parent: what a signature covers is its parent's (a DTE's own
    // Documento, an envelope's SetDTE), and a search of the whole file per DTE would be quadratic.
    const found = findById(sig.parentNode as XElement, uri.slice(1), opts.skip);
    if (!found) return failed("SIGNATURE_INVALID", `No element with ID="${uri.slice(1)}"`, { reference: uri, signer: signerInfo });
    return { target: found, exclude: transforms.includes(ALG.ENVELOPED) ? sig : null };
  }
  return failed("SIGNATURE_UNSUPPORTED", `Reference URI ${uri} is not supported`, { reference: uri });
}

/** The namespace treatment under which the target's digest equals DigestValue (only the strict one without fallbacks), if any. */
async function matchingDigestMode(target: XElement | XDocument, boundary: XElement, exclude: XElement | null, p: SignedInfoParts, opts: VerifyOptions): Promise<DigestMode | undefined> {
  const exclusiveRef = p.transforms.includes(ALG.EXC_C14N);
  const modes: DigestMode[] = opts.fallbacks ? ["context", "standalone", "exclusive", "stripped"] : [exclusiveRef ? "exclusive" : "context"];
  for (const mode of modes) {
    if (mode === "standalone" && p.uri === "") continue;
    if (mode === "standalone" && target.nodeType !== 1) continue;
    const c = canonicalize(target, { ...modeOptions(mode, boundary, exclude, opts.memo, opts.defaultNamespace), ...(opts.skip?.inContent ? { omit: opts.skip } : {}) });
    const d = b64encode(await crypto.subtle.digest(p.hash, new TextEncoder().encode(c)));
    if (d === p.dv) return mode;
  }
  return undefined;
}

async function verifySignatureElementUnsafe(doc: XDocument, sig: XElement, opts: VerifyOptions = {}): Promise<SignatureCheck> {
  const p = readSignedInfo(sig);
  if (isFailed(p)) return p;
  const { si, sv, cm, sm, uri, dv } = p;

  const signer = signerKey(sig, uri);
  if (isFailed(signer)) return signer;
  const { modulus, exponent, cert, signerInfo } = signer;

  // Digest
  const boundary = sig.parentNode as XElement;
  const ref = referenceTarget(doc, sig, p, signerInfo, opts);
  if (isFailed(ref)) return ref;
  const digestMode = await matchingDigestMode(ref.target, boundary, ref.exclude, p, opts);
  if (!digestMode) return failed("SIGNATURE_INVALID", `The digest of ${uri || "the document"} does not match its content${opts.fallbacks ? " in any of the namespace forms the SII accepts" : ""}: this content is not the one that was signed`, { reference: uri, signer: signerInfo });

  // SignatureValue
  let key: CryptoKey;
  try {
    key = await verifyKey(modulus, exponent, sm === ALG.RSA_SHA1 ? "SHA-1" : "SHA-256", cert);
  } catch (e) {
    return failed("SIGNATURE_UNSUPPORTED", `The signer key cannot be used: ${(e as Error).message}`, { reference: uri });
  }
  const sigBytes = b64decode(sv.textContent ?? "");
  const siModes: DigestMode[] = opts.fallbacks ? ["context", "standalone", "exclusive"] : [cm === ALG.EXC_C14N ? "exclusive" : "context"];
  for (const mode of siModes) {
    const c = canonicalize(si, modeOptions(mode, boundary, null, undefined, opts.defaultNamespace));
    if (await crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, key, buf(sigBytes), new TextEncoder().encode(c))) {
      return { ok: true, reference: uri, digestMode, digestValue: dv, ...(cert ? { signer: signerInfo, certificate: cert } : {}) };
    }
  }
  return failed("SIGNATURE_INVALID", "The SignatureValue does not verify with the signer's key (SignedInfo altered or certificate replaced)", { reference: uri, digestMode, signer: signerInfo });
}

/** Finds and verifies the signature that is a direct child of `parent` (e.g. a DTE, an envelope root). */
export async function verifyChildSignature(doc: XDocument, parent: XElement, opts: VerifyOptions = {}): Promise<SignatureCheck> {
  const sigs = childElements(parent, "Signature").filter((s) => s.namespaceURI === NS_DSIG);
  if (sigs.length === 0) return { ok: false, failure: "SIGNATURE_MISSING", message: `<${parent.localName}> carries no Signature` };
  return verifySignatureElement(doc, sigs[sigs.length - 1]!, opts);
}

/** verifySignatureElement: the documented behaviour is on verifySignatureElementUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export async function verifySignatureElement(doc: XDocument, sig: XElement, opts: VerifyOptions = {}): Promise<SignatureCheck> {
  try {
    return await verifySignatureElementUnsafe(doc, sig, opts);
  } catch (e) {
    return { ok: false, failure: "SIGNATURE_INVALID", message: `The signature cannot be checked: ${(e as Error).message}` };
  }
}
