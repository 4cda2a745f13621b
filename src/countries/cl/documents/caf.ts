/**
 * CAF (Código de Autorización de Folios): parsing, SII signature check, key pair check, and the
 * checks before stamping a folio. See sii-formats.md §2.
 */
import { b64decode, b64encode, buf, bytesEqual, pemDecode, pkcs1ToPkcs8, rsaFromPkcs1Private, rsaFromSpki, spkiFromRsa, pkcs8ToPkcs1, readTlv, Asn1Error } from "../pki/asn1";
import { canonicalize } from "../xml/c14n";
import { EXPIRING_CAF_TYPES } from "./document-types";
import { EngineError } from "../errors";
import { normalizeRut } from "./rut";
import { SII_CAF_KEYS } from "../pki/sii-keys";
import { SIMULATOR_IDK, SIMULATOR_SII_PUBLIC_KEY_SPKI_PEM } from "../pki/sii-simulator-key";
import { childText, decodeXmlBytes, encodeLatin1, firstChild, flatten, ownCopy, parseXml, type XElement } from "../xml/xml";

export const RSA_SHA1 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-1" } as const;

export interface Caf {
  /** RE, canonical RUT. */
  issuerRut: string;
  /** RS (razón social, ≤ 40 characters in the CAF). */
  issuerName: string;
  /** TD. */
  documentType: number;
  /** RNG D..H, inclusive. */
  from: number;
  to: number;
  /** FA, YYYY-MM-DD. */
  authorizedOn: string;
  idk: number;
  environment: "certification" | "production" | "simulator" | "custom";
  /** Last valid day (FA + 6 months) for 33/43/46/56/61; null when folios do not expire. */
  expiresOn: string | null;
  /** The <CAF version="1.0">…</CAF> element (DA + FRMA), canonical and flattened, to copy into every TED. */
  cafXml: string;
  /** Stamping key (RSASK), imported for RSASSA-PKCS1-v1_5/SHA-1. */
  privateKey: CryptoKey;
  /** Public key of the pair (DA/RSAPK), for verifying TEDs. */
  publicKey: CryptoKey;
  /** RSASK as PKCS#1 DER (as the SII ships it) and the public key as SPKI DER. */
  privateKeyPkcs1: Uint8Array;
  publicKeySpki: Uint8Array;
}

export interface CafTrustOptions {
  /**
   * "sii" (default): trust the SII keys IDK 100 (certification) and 300 (production).
   * "simulator": trust the simulator's fake SII key (IDK 999) and IDK 100 (certification CAFs are
   * as valid for a simulated SII as for maullin). Production CAFs (300) are refused in simulator mode.
   */
  mode?: "sii" | "simulator";
  /** Extra trusted keys by IDK, SPKI DER (tests, or keys read from the SII_KEYS binding). */
  extraKeys?: Record<number, Uint8Array>;
}

const keyCache = new Map<string, Promise<CryptoKey>>();
function importSpki(spki: Uint8Array): Promise<CryptoKey> {
  const k = b64encode(spki);
  let p = keyCache.get(k);
  if (!p) {
    p = crypto.subtle.importKey("spki", buf(spki), RSA_SHA1, true, ["verify"]);
    if (keyCache.size >= 1024) keyCache.delete(keyCache.keys().next().value!);
    keyCache.set(k, p);
    p.catch(() => keyCache.delete(k));
  }
  return p;
}

const SIMULATOR_SPKI = pemDecode(SIMULATOR_SII_PUBLIC_KEY_SPKI_PEM, "PUBLIC KEY")!;
const SII_SPKI: Record<number, Uint8Array> = Object.fromEntries(Object.entries(SII_CAF_KEYS).map(([k, v]) => [k, b64decode(v.spki)]));

function trustedKey(idk: number, opts: CafTrustOptions): { spki: Uint8Array; env: Caf["environment"] } | undefined {
  const extra = opts.extraKeys?.[idk];
  if (extra) return { spki: extra, env: "custom" };
  const mode = opts.mode ?? "sii";
  if (mode === "simulator") {
    if (idk === SIMULATOR_IDK) return { spki: SIMULATOR_SPKI, env: "simulator" };
    if (idk === 100) return { spki: SII_SPKI[100]!, env: "certification" };
    return undefined;
  }
  const k = SII_CAF_KEYS[idk];
  return k ? { spki: SII_SPKI[idk]!, env: k.environment } : undefined;
}

/** FA + 6 calendar months (day clamped to the month's end). */
export function addSixMonths(date: string): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  let mm = m + 6;
  let yy = y;
  if (mm > 12) {
    mm -= 12;
    yy += 1;
  }
  const last = new Date(Date.UTC(yy, mm, 0)).getUTCDate();
  return `${yy}-${String(mm).padStart(2, "0")}-${String(Math.min(d, last)).padStart(2, "0")}`;
}

function b64(text: string, field: string): Uint8Array {
  try {
    return b64decode(text);
  } catch (e) {
    throw new EngineError("CAF_MALFORMED", `CAF ${field} is not valid base64`, { field, cause: e });
  }
}

function need(el: XElement, name: string): string {
  const v = childText(el, name);
  if (v === undefined || v === "") throw new EngineError("CAF_MALFORMED", `The CAF lacks <${name}>`, { field: name });
  return v;
}

/** The data the SII signs in FRMA: canonical <DA>, no namespace, flattened, ISO-8859-1. */
export function cafSignedBytes(da: XElement): Uint8Array {
  return encodeLatin1(flatten(canonicalize(da, { stripNamespaces: true })), "DA");
}

/** The AUTORIZACION root of a CAF file and its CAF and DA elements (bytes as downloaded: ISO-8859-1 whatever the declaration says). */
function readCafXml(input: Uint8Array | ArrayBuffer | string): { root: XElement; cafEl: XElement; da: XElement } {
  const text = decodeXmlBytes(input, true);
  let root: XElement;
  try {
    root = parseXml(text, "The CAF").documentElement as XElement;
  } catch (e) {
    throw new EngineError("CAF_NOT_XML", (e as Error).message, { cause: e });
  }
  if (root.localName !== "AUTORIZACION") throw new EngineError("CAF_NOT_XML", `The root element is <${root.localName}>, not <AUTORIZACION>`);
  const cafEl = firstChild(root, "CAF");
  const da = cafEl && firstChild(cafEl, "DA");
  if (!cafEl || !da) throw new EngineError("CAF_NOT_XML", "The file has no AUTORIZACION/CAF/DA element");
  return { root, cafEl, da };
}

/** The fields of DA and the FRMA signature, each checked for presence and shape. */
interface CafFields extends Pick<Caf, "issuerRut" | "issuerName" | "documentType" | "from" | "to" | "authorizedOn" | "idk"> {
  /** DA/RSAPK modulus and exponent. */
  modulus: Uint8Array;
  exponent: Uint8Array;
  /** FRMA, base64. */
  frma: string;
}

function readCafFields(cafEl: XElement, da: XElement): CafFields {
  let issuerRut: string;
  try {
    issuerRut = normalizeRut(need(da, "RE"));
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError("CAF_MALFORMED", `CAF RE is not a valid RUT: ${(e as Error).message}`, { field: "RE" });
  }
  const issuerName = need(da, "RS");
  const tdS = need(da, "TD");
  const rng = firstChild(da, "RNG");
  if (!rng) throw new EngineError("CAF_MALFORMED", "The CAF lacks <RNG>", { field: "RNG" });
  const dS = need(rng, "D");
  const hS = need(rng, "H");
  const fa = need(da, "FA");
  const idkS = need(da, "IDK");
  if (!/^\d{1,3}$/.test(tdS)) throw new EngineError("CAF_MALFORMED", `CAF TD "${tdS}" is not a document type`, { field: "TD" });
  if (!/^\d{1,10}$/.test(dS) || !/^\d{1,10}$/.test(hS) || Number(dS) < 1 || Number(hS) < Number(dS)) {
    throw new EngineError("CAF_MALFORMED", `CAF range ${dS}..${hS} is invalid`, { field: "RNG" });
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fa)) throw new EngineError("CAF_MALFORMED", `CAF FA "${fa}" is not a date`, { field: "FA" });
  if (!/^\d+$/.test(idkS)) throw new EngineError("CAF_MALFORMED", `CAF IDK "${idkS}" is not a number`, { field: "IDK" });
  const rsapk = firstChild(da, "RSAPK");
  if (!rsapk) throw new EngineError("CAF_MALFORMED", "The CAF has no <RSAPK> (only RSA CAFs are supported)", { field: "RSAPK" });
  const modulus = b64(need(rsapk, "M"), "M");
  const exponent = b64(need(rsapk, "E"), "E");
  const frmaEl = firstChild(cafEl, "FRMA");
  const frma = frmaEl ? (frmaEl.textContent ?? "").trim() : "";
  if (!frma) throw new EngineError("CAF_MALFORMED", "The CAF lacks <FRMA>", { field: "FRMA" });
  const algo = frmaEl?.getAttribute("algoritmo");
  if (algo && algo !== "SHA1withRSA") throw new EngineError("CAF_MALFORMED", `FRMA algorithm ${algo} is not SHA1withRSA`, { field: "FRMA" });
  return { issuerRut, issuerName, documentType: Number(tdS), from: Number(dS), to: Number(hS), authorizedOn: fa, idk: Number(idkS), modulus, exponent, frma };
}

/** Checks the SII's signature (FRMA) over DA with a trusted key of that IDK; returns the key's environment. */
async function verifyCafSignature(da: XElement, idk: number, frma: string, opts: CafTrustOptions): Promise<Caf["environment"]> {
  const trusted = trustedKey(idk, opts);
  if (!trusted) {
    throw new EngineError("CAF_UNKNOWN_IDK", `The CAF is signed with SII key IDK ${idk}, which is not trusted ${opts.mode === "simulator" ? "in simulator mode (999, 100)" : "(100 certification, 300 production)"}`, { field: "IDK" });
  }
  const siiKey = await importSpki(trusted.spki);
  const ok = await crypto.subtle.verify(RSA_SHA1, siiKey, buf(b64(frma, "FRMA")), buf(cafSignedBytes(da)));
  if (!ok) throw new EngineError("CAF_BAD_SIGNATURE", `The SII signature (FRMA) of the CAF does not verify with key IDK ${idk}; the file was altered or is not from the SII`, { field: "FRMA" });
  return trusted.env;
}

/** The stamping key (RSASK) as PKCS#1 DER with its modulus and exponent. */
function readStampingKey(rsaskText: string | undefined): { pkcs1: Uint8Array; modulus: Uint8Array; exponent: Uint8Array } {
  if (!rsaskText) throw new EngineError("CAF_MALFORMED", "The CAF lacks <RSASK> (the stamping private key)", { field: "RSASK" });
  let pkcs1: Uint8Array | undefined;
  try {
    pkcs1 = pemDecode(rsaskText, "RSA PRIVATE KEY");
    if (!pkcs1) {
      const p8 = pemDecode(rsaskText, "PRIVATE KEY");
      if (p8) pkcs1 = pkcs8ToPkcs1(p8);
    }
  } catch (e) {
    throw new EngineError("CAF_MALFORMED", "RSASK is not a valid PEM RSA private key", { field: "RSASK", cause: e });
  }
  if (!pkcs1) throw new EngineError("CAF_MALFORMED", "RSASK is not a PEM RSA private key", { field: "RSASK" });
  try {
    readTlv(pkcs1, 0);
    return { pkcs1, ...rsaFromPkcs1Private(pkcs1) };
  } catch (e) {
    throw new EngineError("CAF_MALFORMED", `RSASK is not a valid RSA private key: ${(e as Error).message}`, { field: "RSASK", cause: e });
  }
}

/** RSAPUBK, when present, must be the public key of DA/RSAPK. */
function checkRsapubk(rsapubkText: string | undefined, daPub: { modulus: Uint8Array; exponent: Uint8Array }): void {
  if (!rsapubkText) return;
  let pub: { modulus: Uint8Array; exponent: Uint8Array } | undefined;
  try {
    const spki = pemDecode(rsapubkText, "PUBLIC KEY");
    pub = spki ? rsaFromSpki(spki) : undefined;
  } catch (e) {
    if (!(e instanceof Asn1Error) && !(e instanceof RangeError)) throw e;
  }
  if (!pub) throw new EngineError("CAF_MALFORMED", "RSAPUBK is not a PEM public key", { field: "RSAPUBK" });
  if (!bytesEqual(pub.modulus, daPub.modulus) || !bytesEqual(pub.exponent, daPub.exponent)) {
    throw new EngineError("CAF_KEY_MISMATCH", "RSAPUBK differs from the public key in DA/RSAPK", { field: "RSAPUBK" });
  }
}

/** Imports the key pair and proves it by signing and verifying a probe (catches inconsistent CRT parameters). */
async function importKeyPair(pkcs1: Uint8Array, spki: Uint8Array): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
  let privateKey: CryptoKey;
  let publicKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey("pkcs8", buf(pkcs1ToPkcs8(pkcs1)), RSA_SHA1, false, ["sign"]);
    publicKey = await importSpki(spki);
  } catch (e) {
    throw new EngineError("CAF_MALFORMED", `The CAF key cannot be imported: ${(e as Error).message}`, { field: "RSASK", cause: e });
  }
  const probe = encodeLatin1("caf-key-pair-probe");
  const sig = await crypto.subtle.sign(RSA_SHA1, privateKey, buf(probe));
  if (!(await crypto.subtle.verify(RSA_SHA1, publicKey, sig, buf(probe)))) {
    throw new EngineError("CAF_KEY_MISMATCH", "RSASK does not produce signatures that verify with RSAPK", { field: "RSASK" });
  }
  return { privateKey, publicKey };
}

/**
 * Parses and validates a CAF file (bytes as downloaded: ISO-8859-1 whatever the declaration says).
 * Checks, in order: XML shape, fields, trusted IDK, FRMA signature, RSASK/RSAPUBK/RSAPK key pair.
 */
async function parseCafUnsafe(input: Uint8Array | ArrayBuffer | string, opts: CafTrustOptions = {}): Promise<Caf> {
  const { root, cafEl, da } = readCafXml(input);
  const f = readCafFields(cafEl, da);
  const environment = await verifyCafSignature(da, f.idk, f.frma, opts);

  // Key pair: RSASK must be the private key of DA/RSAPK (and of RSAPUBK when present).
  const rsaskText = childText(root, "RSASK");
  const rsapubkText = childText(root, "RSAPUBK");
  const priv = readStampingKey(rsaskText);
  const daSpki = spkiFromRsa(f.modulus, f.exponent);
  const daPub = rsaFromSpki(daSpki);
  if (!bytesEqual(priv.modulus, daPub.modulus) || !bytesEqual(priv.exponent, daPub.exponent)) {
    throw new EngineError("CAF_KEY_MISMATCH", "RSASK is not the private key of the public key the SII signed (DA/RSAPK)", { field: "RSASK" });
  }
  checkRsapubk(rsapubkText, daPub);
  const { privateKey, publicKey } = await importKeyPair(priv.pkcs1, daSpki);

  return {
    issuerRut: f.issuerRut,
    issuerName: f.issuerName,
    documentType: f.documentType,
    from: f.from,
    to: f.to,
    authorizedOn: f.authorizedOn,
    idk: f.idk,
    environment,
    expiresOn: EXPIRING_CAF_TYPES.includes(f.documentType) ? addSixMonths(f.authorizedOn) : null,
    cafXml: flatten(canonicalize(cafEl, { stripNamespaces: true })),
    privateKey,
    publicKey,
    privateKeyPkcs1: priv.pkcs1,
    publicKeySpki: daSpki,
  };
}

/**
 * Checks before stamping `folio` of `documentType` for `issuerRut` at `timestamp` (local
 * "YYYY-MM-DDTHH:MM:SS"): type, issuer, range, expiry (inclusive of expiresOn), not before FA.
 */
export function assertCafUsable(caf: Pick<Caf, "documentType" | "issuerRut" | "from" | "to" | "expiresOn" | "authorizedOn">, p: { documentType: number; issuerRut: string; folio: number; timestamp: string }): void {
  if (caf.documentType !== p.documentType) throw new EngineError("CAF_TYPE_MISMATCH", `The CAF authorises type ${caf.documentType}, not ${p.documentType}`, { expected: caf.documentType });
  if (caf.issuerRut !== normalizeRut(p.issuerRut)) throw new EngineError("CAF_ISSUER_MISMATCH", `The CAF belongs to ${caf.issuerRut}, not ${p.issuerRut}`, { expected: caf.issuerRut });
  if (!Number.isInteger(p.folio) || p.folio < caf.from || p.folio > caf.to) {
    throw new EngineError("CAF_FOLIO_OUT_OF_RANGE", `Folio ${p.folio} is outside the CAF range ${caf.from}..${caf.to}`, { expected: `${caf.from}..${caf.to}` });
  }
  const day = p.timestamp.slice(0, 10);
  if (day < caf.authorizedOn) throw new EngineError("STAMP_BEFORE_CAF", `The stamp date ${day} is before the CAF authorisation date ${caf.authorizedOn} (SII reparo TED-1-646)`, { expected: `≥ ${caf.authorizedOn}` });
  if (caf.expiresOn && day > caf.expiresOn) throw new EngineError("CAF_EXPIRED", `The CAF's folios expired on ${caf.expiresOn}`, { expected: `≤ ${caf.expiresOn}` });
}

export interface CafElementCheck {
  publicKey: CryptoKey;
  idk: number;
  issuerRut: string;
  documentType: number;
  from: number;
  to: number;
  authorizedOn: string;
  environment: Caf["environment"];
}

/**
 * Verdicts of verifyCafElement per CAF, isolate-wide and bounded: every TED of a CAF carries the same
 * <CAF> element, and the verdict (FRMA check, key, fields; or the CAF_* error) depends only on that
 * element's content and the trust. Keyed by the element's canonical form without namespaces
 * (every input of the verdict is read from it; namespaces are not looked at), the mode and the
 * caller's extra keys (their SPKI bytes, worked out once per extraKeys object).
 */
const cafVerdicts = new Map<string, Promise<CafElementCheck>>();
/** The last verdict knownCafVerdict found, while cafVerdicts holds it (cleared at every removal). */
let lastVerdict: { trust: string; caf: string; verdict: Promise<CafElementCheck> } | null = null;
const extraKeyIds = new WeakMap<Record<number, Uint8Array>, string>();
/** A short token per distinct set of extra keys (their SPKI bytes), so that verdict keys stay short to hash. */
const extraKeyTokens = new Map<string, string>();
function trustId(opts: CafTrustOptions): string {
  const mode = opts.mode ?? "sii";
  if (!opts.extraKeys) return mode;
  let id = extraKeyIds.get(opts.extraKeys);
  if (id === undefined) {
    const content = Object.entries(opts.extraKeys).map(([idk, spki]) => `${idk}:${b64encode(spki)}`).join(",");
    id = extraKeyTokens.get(content) ?? `keys${extraKeyTokens.size}`;
    extraKeyTokens.set(content, id);
    extraKeyIds.set(opts.extraKeys, id);
  }
  return `${mode}+${id}`;
}
const CAF_VERDICTS_MAX = 512;

/**
 * Verifies the SII signature (FRMA) of a <CAF> element found inside a third party's TED (no RSASK
 * there). Returns the CAF public key (DA/RSAPK) and the DA fields. Throws CAF_* errors.
 */
export function verifyCafElement(cafEl: XElement, opts: CafTrustOptions = {}): Promise<CafElementCheck> {
  const key = `${trustId(opts)}\n${canonicalize(cafEl, { stripNamespaces: true })}`;
  let p = cafVerdicts.get(key);
  if (!p) {
    p = verifyCafElementUncached(cafEl, opts);
    p.catch((e) => {
      // Only the CAF's own verdicts are kept; anything unexpected is tried again next time.
      if (!(e instanceof EngineError)) {
        cafVerdicts.delete(key);
        lastVerdict = null;
      }
    });
    if (cafVerdicts.size >= CAF_VERDICTS_MAX) {
      cafVerdicts.delete(cafVerdicts.keys().next().value!);
      lastVerdict = null;
    }
    cafVerdicts.set(key, p);
  }
  return p;
}

/**
 * The verdict verifyCafElement already holds for a CAF, by its canonical form without namespaces;
 * undefined when it has none yet. `owned`: the text is a string of its own (no slice of a received
 * file), kept as it is: the next call with the same string compares it by identity.
 */
export function knownCafVerdict(cafCanonical: string, opts: CafTrustOptions = {}, owned = false): Promise<CafElementCheck> | undefined {
  const trust = trustId(opts);
  // The DTEs of an envelope mostly share one CAF: comparing its text with the last one found costs
  // less than building and hashing a new key.
  if (lastVerdict && lastVerdict.caf === cafCanonical && lastVerdict.trust === trust) return lastVerdict.verdict;
  const verdict = cafVerdicts.get(`${trust}\n${cafCanonical}`);
  // A copy: the text may be a slice of a received file, which the memo must not keep alive.
  if (verdict) lastVerdict = { trust, caf: owned ? cafCanonical : ownCopy(cafCanonical), verdict };
  return verdict;
}

async function verifyCafElementUncached(cafEl: XElement, opts: CafTrustOptions): Promise<CafElementCheck> {
  const da = firstChild(cafEl, "DA");
  if (!da) throw new EngineError("CAF_MALFORMED", "The CAF has no <DA>", { field: "DA" });
  const idkS = need(da, "IDK");
  const idk = Number(idkS);
  const trusted = trustedKey(idk, opts);
  if (!trusted) throw new EngineError("CAF_UNKNOWN_IDK", `The CAF is signed with SII key IDK ${idkS}, which is not trusted`, { field: "IDK" });
  const frmaEl = firstChild(cafEl, "FRMA");
  const frma = frmaEl ? (frmaEl.textContent ?? "").trim() : "";
  if (!frma) throw new EngineError("CAF_MALFORMED", "The CAF lacks <FRMA>", { field: "FRMA" });
  const ok = await crypto.subtle.verify(RSA_SHA1, await importSpki(trusted.spki), buf(b64(frma, "FRMA")), buf(cafSignedBytes(da)));
  if (!ok) throw new EngineError("CAF_BAD_SIGNATURE", `The SII signature (FRMA) of the CAF does not verify with key IDK ${idk}`, { field: "FRMA" });
  const rsapk = firstChild(da, "RSAPK");
  if (!rsapk) throw new EngineError("CAF_MALFORMED", "The CAF has no <RSAPK>", { field: "RSAPK" });
  let publicKey: CryptoKey;
  try {
    publicKey = await importSpki(spkiFromRsa(b64(need(rsapk, "M"), "M"), b64(need(rsapk, "E"), "E")));
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError("CAF_MALFORMED", `The CAF public key (RSAPK) cannot be imported: ${(e as Error).message}`, { field: "RSAPK", cause: e });
  }
  const rng = firstChild(da, "RNG");
  return {
    publicKey,
    idk,
    issuerRut: need(da, "RE"),
    documentType: Number(need(da, "TD")),
    from: rng ? Number(need(rng, "D")) : 0,
    to: rng ? Number(need(rng, "H")) : 0,
    authorizedOn: need(da, "FA"),
    environment: trusted.env,
  };
}

/** parseCaf: the documented behaviour is on parseCafUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export async function parseCaf(input: Uint8Array | ArrayBuffer | string, opts: CafTrustOptions = {}): Promise<Caf> {
  try {
    return await parseCafUnsafe(input, opts);
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError("CAF_MALFORMED", `The CAF cannot be read: ${(e as Error).message}`, { cause: e });
  }
}
