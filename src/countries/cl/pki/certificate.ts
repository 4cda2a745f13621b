/**
 * Signing certificates (.pfx / .p12). node-forge is the only library that reads both the legacy
 * (RC2-40 / 3DES, SHA-1 MAC: Windows and older tools) and the modern (PBES2/PBKDF2 + AES, SHA-256
 * MAC: OpenSSL 3) kinds inside workerd. The key is re-exported as PKCS#8 for WebCrypto signing.
 * Expiry is not enforced here (callers decide); notBefore/notAfter are exposed.
 */
import forge from "node-forge";
import { b64encode, buf, children, readTlv, uintValue, value } from "./asn1";
import { EngineError } from "../errors";
import { normalizeRut } from "../documents/rut";
import { pkcs12KdfSha1 } from "./pkcs12-kdf";
import type { Credentials } from "../../port";

/** SAN otherName OID carrying the holder's RUT in Chilean certificates. */
export const OID_RUT = "1.3.6.1.4.1.8321.1";

export interface CertificateInfo {
  /** Holder's RUT (canonical) from SAN otherName 1.3.6.1.4.1.8321.1; null when absent. */
  rut: string | null;
  /** The RUT otherName as written (also when it is not a valid RUT, e.g. a wrong check digit); null when absent. */
  rutText: string | null;
  subjectCN: string | null;
  /** Subject and issuer as RFC 4514-like strings (CN=..., O=..., C=...). */
  subject: string;
  issuer: string;
  issuerCN: string | null;
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** Certificate DER and base64 (for X509Certificate). */
  certificateDer: Uint8Array;
  certificateBase64: string;
  /** RSA public key parts, big-endian unsigned (for RSAKeyValue). */
  modulus: Uint8Array;
  exponent: Uint8Array;
  /** SHA-1 fingerprint, hex lowercase. */
  fingerprintSha1: string;
}

export interface OpenedPfx extends CertificateInfo {
  /** The private key matching the certificate, PKCS#8 DER. Treat as secret. */
  privateKeyPkcs8: Uint8Array;
}

/**
 * The SII credentials behind the port's opaque handle: the product only hands back credentials this
 * country loaded (loadSigningCredentials, credentialsFromParts).
 */
export const ownCredentials = (c: Credentials): SigningCredentials => c as SigningCredentials;

export interface SigningCredentials extends CertificateInfo {
  /** RSASSA-PKCS1-v1_5 / SHA-1 private key, non-extractable. */
  privateKey: CryptoKey;
}

function bin(u: Uint8Array): string {
  let s = "";
  for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode(...u.subarray(i, i + 8192));
  return s;
}
function bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}
function bigToBytes(n: forge.jsbn.BigInteger): Uint8Array {
  return uintValue(Uint8Array.from(n.toByteArray().map((b) => b & 0xff)));
}

function dn(attrs: forge.pki.CertificateField[]): string {
  return attrs
    .slice()
    .reverse()
    .map((a) => `${a.shortName ?? a.name ?? a.type}=${String(a.value)}`)
    .join(", ");
}

/** The text of the RUT otherName in a subjectAltName extension value (DER), as written; null when absent. */
export function rutTextFromSanDer(der: Uint8Array): string | null {
  try {
    const top = readTlv(der, 0);
    for (const gn of children(der, top)) {
      if (gn.tag !== 0xa0) continue; // otherName [0] constructed
      const [oid, explicit] = children(der, gn);
      if (!oid || oid.tag !== 0x06 || !explicit) continue;
      const oidStr = forge.asn1.derToOid(bin(value(der, oid)));
      if (oidStr !== OID_RUT) continue;
      const inner = readTlv(der, explicit.valueStart);
      return new TextDecoder().decode(value(der, inner)).trim();
    }
  } catch {
    return null;
  }
  return null;
}

/**
 * Largest PBKDF2 / PKCS#12-KDF iteration count accepted inside an uploaded .pfx (MAC and every
 * encrypted bag). Real exports use 2,048 (legacy) to 10,000 (OpenSSL 3); a crafted file with a
 * count in the billions would otherwise hold the worker for minutes, password right or wrong.
 */
export const MAX_PFX_ITERATIONS = 200_000;

class PfxTooCostly extends Error {}

/**
 * The derivations of one `openPfxNative` call: PBKDF2 results worked out natively, and PKCS#12-KDF
 * (MAC) keys forge made, so that opening again after a native derivation does not redo them. Set
 * only while forge runs synchronously inside that call (never across an await).
 */
interface NativeOpening {
  pbkdf2: Map<string, string>;
  macKeys: Map<string, string>;
  /** A native derivation failed: forge derives everything from here on. */
  forgeOnly: boolean;
}
let opening: NativeOpening | null = null;

/** What WebCrypto must derive before forge can go on (thrown out of forge, caught by `openPfxNative`). */
class NeedsPbkdf2 extends Error {
  constructor(
    readonly key: string,
    readonly password: string,
    readonly salt: string,
    readonly iterations: number,
    readonly bytes: number,
    readonly hash: string,
  ) {
    super("PBKDF2 derivation pending");
  }
}

const WEBCRYPTO_HASH: Record<string, string> = { sha1: "SHA-1", sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };

/**
 * forge.pkcs5.pbkdf2(password, salt, iterations, bytes, md) as a request WebCrypto can serve the
 * same way: an ASCII password (forge and WebCrypto then hash the same bytes), binary-string salt,
 * a hash WebCrypto has. Null: forge derives it.
 */
function nativeRequest(args: unknown[]): NeedsPbkdf2 | null {
  const [password, salt, iterations, bytes, md, callback] = args as [unknown, unknown, unknown, unknown, { algorithm?: string } | string | undefined, unknown];
  if (typeof password !== "string" || !/^[\x20-\x7e]+$/.test(password) || typeof salt !== "string" || callback !== undefined) return null;
  if (typeof iterations !== "number" || !(iterations >= 1) || typeof bytes !== "number" || !(bytes >= 1 && bytes <= 1024)) return null;
  const hash = WEBCRYPTO_HASH[md === undefined || md === null ? "sha1" : typeof md === "string" ? md : (md.algorithm ?? "")];
  if (!hash) return null;
  return new NeedsPbkdf2(`${hash}|${iterations}|${bytes}|${salt}`, password, salt, iterations, bytes, hash);
}

async function deriveNatively(need: NeedsPbkdf2): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(need.password), "PBKDF2", false, ["deriveBits"]);
  const salt = Uint8Array.from(need.salt, (c) => c.charCodeAt(0));
  const bits = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", salt, iterations: need.iterations, hash: need.hash }, key, need.bytes * 8));
  let out = "";
  for (const b of bits) out += String.fromCharCode(b);
  return out;
}

/**
 * node-forge derives every PKCS#12 key through forge.pkcs12.generateKey (MAC, PBES1) or
 * forge.pkcs5.pbkdf2 (PBES2), looked up on the module object at call time: wrapping both once
 * checks the count before any derivation, including bags nested inside encrypted content.
 */
function capForgeIterations(): void {
  const p12 = forge.pkcs12 as unknown as { generateKey: (...a: unknown[]) => unknown; __capped?: boolean };
  if (p12.__capped) return;
  const generateKey = p12.generateKey;
  // SHA-1 derivations (the usual MAC) by ./pkcs12-kdf.ts over byte arrays; any other hash by forge.
  const derive = (args: unknown[]): forge.util.ByteStringBuffer => {
    const [password, salt, id, iterations, n, md] = args as [unknown, forge.util.ByteStringBuffer, number, number, number, { algorithm?: string } | undefined];
    const sha1 = md === undefined || md === null || md.algorithm === "sha1";
    const plain = (password === undefined || password === null || typeof password === "string") && typeof salt?.bytes === "function" && typeof id === "number" && typeof iterations === "number" && typeof n === "number";
    if (!sha1 || !plain) return generateKey.apply(forge.pkcs12, args) as forge.util.ByteStringBuffer;
    return forge.util.createBuffer(bin(pkcs12KdfSha1(password, bytes(salt.bytes()), id, iterations, n)));
  };
  p12.generateKey = (...args: unknown[]) => {
    if (!(Number(args[3]) <= MAX_PFX_ITERATIONS)) throw new PfxTooCostly(`MAC/PBE iteration count ${String(args[3])}`);
    if (!opening) return derive(args);
    // Within a native opening, a MAC key made before a PBKDF2 pause is not made again on the retry.
    const memoKey = JSON.stringify(args.slice(1, 5)) + ((args[5] as { algorithm?: string } | undefined)?.algorithm ?? "");
    let made = opening.macKeys.get(memoKey);
    if (made === undefined) opening.macKeys.set(memoKey, (made = derive(args).bytes()));
    return forge.util.createBuffer(made);
  };
  const pkcs5 = forge.pkcs5 as unknown as { pbkdf2: (...a: unknown[]) => unknown };
  const pbkdf2 = pkcs5.pbkdf2;
  pkcs5.pbkdf2 = (...args: unknown[]) => {
    if (!(Number(args[2]) <= MAX_PFX_ITERATIONS)) throw new PfxTooCostly(`PBKDF2 iteration count ${String(args[2])}`);
    const need = opening && !opening.forgeOnly ? nativeRequest(args) : null;
    if (need) {
      const done = opening!.pbkdf2.get(need.key);
      if (done !== undefined) return done;
      throw need;
    }
    return pbkdf2.apply(forge.pkcs5, args);
  };
  p12.__capped = true;
}
capForgeIterations();
/** Reads the RUT from a subjectAltName extension value (DER); null when absent or not a valid RUT. */
export function rutFromSanDer(der: Uint8Array): string | null {
  const text = rutTextFromSanDer(der);
  if (text === null) return null;
  try {
    return normalizeRut(text);
  } catch {
    return null;
  }
}

/** Certificate details from a forge certificate. */
function describe(cert: forge.pki.Certificate): CertificateInfo {
  const der = bytes(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes());
  const pub = cert.publicKey as forge.pki.rsa.PublicKey;
  if (!pub || !pub.n) throw new EngineError("CERT_UNSUPPORTED_KEY", "The certificate key is not RSA");
  const san = cert.extensions.find((e: { id?: string }) => e.id === "2.5.29.17") as { value?: string } | undefined;
  const md = forge.md.sha1.create();
  md.update(bin(der), "raw");
  return {
    rut: san?.value ? rutFromSanDer(bytes(san.value)) : null,
    rutText: san?.value ? rutTextFromSanDer(bytes(san.value)) : null,
    subjectCN: (cert.subject.getField("CN")?.value as string | undefined) ?? null,
    subject: dn(cert.subject.attributes),
    issuer: dn(cert.issuer.attributes),
    issuerCN: (cert.issuer.getField("CN")?.value as string | undefined) ?? null,
    serialNumber: cert.serialNumber,
    notBefore: cert.validity.notBefore,
    notAfter: cert.validity.notAfter,
    certificateDer: der,
    certificateBase64: b64encode(der),
    modulus: bigToBytes(pub.n),
    exponent: bigToBytes(pub.e),
    fingerprintSha1: md.digest().toHex(),
  };
}

/** Parses a DER or PEM X.509 certificate. */
export function readCertificate(input: Uint8Array | string): CertificateInfo {
  try {
    const cert = typeof input === "string" ? forge.pki.certificateFromPem(input) : forge.pki.certificateFromAsn1(forge.asn1.fromDer(bin(input)));
    return describe(cert);
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError("CERT_NO_CERTIFICATE", `Not an X.509 certificate: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Opens a .pfx: checks the password, finds the private key and the certificate whose public key
 * matches it (the holder's, when the file also carries CA certificates). Synchronous (pure JS).
 */
function openPfxUnsafe(pfx: Uint8Array | ArrayBuffer, password: string): OpenedPfx {
  const data = pfx instanceof Uint8Array ? pfx : new Uint8Array(pfx);
  let asn: forge.asn1.Asn1;
  try {
    if (data.length < 16 || data[0] !== 0x30) throw new Error("not DER");
    asn = forge.asn1.fromDer(bin(data), { strict: false } as unknown as boolean);
  } catch (e) {
    throw new EngineError("CERT_NOT_PFX", "The file is not a PKCS#12 (.pfx/.p12) archive", { cause: e });
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(asn, false, password);
  } catch (e) {
    if (e instanceof NeedsPbkdf2) throw e;
    if (e instanceof PfxTooCostly) {
      throw new EngineError("CERT_PFX_TOO_COSTLY", `The .pfx asks for too many key-derivation iterations (${e.message}; at most ${MAX_PFX_ITERATIONS}). Export it again with default settings.`, { cause: e });
    }
    const msg = (e as Error).message ?? String(e);
    if (/MAC could not be verified|Invalid password|decrypt/i.test(msg)) {
      throw new EngineError("CERT_WRONG_PASSWORD", "The password of the .pfx is wrong", { cause: e });
    }
    if (/PKCS#12|PFX|ContentInfo|AuthenticatedSafe|ASN\.1|unsupported/i.test(msg) && !/password/i.test(msg)) {
      // A structurally valid DER that is not PKCS#12, or garbage decrypted with a wrong password
      // on a file without MAC.
      throw new EngineError(/SafeContents|SafeBag|decrypted|Too few bytes/i.test(msg) ? "CERT_WRONG_PASSWORD" : "CERT_NOT_PFX", `The .pfx cannot be read: ${msg}`, { cause: e });
    }
    throw new EngineError("CERT_WRONG_PASSWORD", `The .pfx cannot be opened with this password: ${msg}`, { cause: e });
  }
  const keyBags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag! })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag! })[forge.pki.oids.keyBag!] ?? []),
  ];
  const certBags = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!] ?? [];
  const keys = keyBags.map((b) => b.key as forge.pki.rsa.PrivateKey | undefined).filter((k): k is forge.pki.rsa.PrivateKey => !!k && typeof (k as { n?: unknown }).n === "object");
  if (keys.length === 0) {
    if (keyBags.length > 0) throw new EngineError("CERT_UNSUPPORTED_KEY", "The .pfx private key is not an RSA key");
    throw new EngineError("CERT_NO_PRIVATE_KEY", "The .pfx holds no private key");
  }
  const certs = certBags.map((b) => b.cert).filter((c): c is forge.pki.Certificate => !!c);
  if (certs.length === 0) throw new EngineError("CERT_NO_CERTIFICATE", "The .pfx holds no certificate");
  for (const key of keys) {
    const k = key as forge.pki.rsa.PrivateKey;
    const cert = certs.find((c) => {
      const pub = c.publicKey as forge.pki.rsa.PublicKey;
      return !!pub?.n && pub.n.equals(k.n) && pub.e.equals(k.e);
    });
    if (cert) {
      const info = describe(cert);
      const pkcs8 = bytes(forge.asn1.toDer(forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(k))).getBytes());
      return { ...info, privateKeyPkcs8: pkcs8 };
    }
  }
  throw new EngineError("CERT_KEY_MISMATCH", "No certificate in the .pfx matches its private key");
}

/** Imports a PKCS#8 RSA key for XMLDSig signing (RSASSA-PKCS1-v1_5 / SHA-1), non-extractable. */
export function importSigningKey(pkcs8: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("pkcs8", buf(pkcs8), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-1" }, false, ["sign"]);
}

/** openPfx + importSigningKey: what the signing functions take. */
export async function loadSigningCredentials(pfx: Uint8Array | ArrayBuffer, password: string): Promise<SigningCredentials> {
  const opened = openPfx(pfx, password);
  const { privateKeyPkcs8, ...info } = opened;
  return { ...info, privateKey: await importSigningKey(privateKeyPkcs8) };
}

/** Builds signing credentials from a stored certificate (DER) and PKCS#8 key (e.g. decrypted from D1/R2). */
export async function credentialsFromParts(certificateDer: Uint8Array, privateKeyPkcs8: Uint8Array): Promise<SigningCredentials> {
  const info = readCertificate(certificateDer);
  return { ...info, privateKey: await importSigningKey(privateKeyPkcs8) };
}

/** openPfx: the documented behaviour is on openPfxUnsafe above; this entry point guarantees that only
 * typed results or EngineErrors come out, whatever the input (fuzz-tested). */
export function openPfx(pfx: Uint8Array | ArrayBuffer, password: string): OpenedPfx {
  try {
    return openPfxUnsafe(pfx, password);
  } catch (e) {
    if (e instanceof EngineError || e instanceof NeedsPbkdf2) throw e;
    throw new EngineError("CERT_NOT_PFX", `The .pfx cannot be read: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * openPfx with the PBKDF2 derivations of PBES2 bags (OpenSSL 3's default) done by WebCrypto
 * instead of node-forge's JavaScript: same result and errors, several times less CPU (the scale
 * bench's profile found forge's PBKDF2 the largest cost of a company's first document in an
 * isolate). forge asks for a derivation synchronously, so when it asks for one not made yet the
 * opening stops there (NeedsPbkdf2), WebCrypto derives it, and the opening starts again with it
 * at hand; MAC keys made before the stop are kept. Legacy (PKCS#12-KDF) bags stay with forge.
 */
export async function openPfxNative(pfx: Uint8Array | ArrayBuffer, password: string): Promise<OpenedPfx> {
  const state: NativeOpening = { pbkdf2: new Map(), macKeys: new Map(), forgeOnly: false };
  for (let round = 1; ; round++) {
    if (round > 16) state.forgeOnly = true; // a crafted file with many bags: forge does the rest
    let need: NeedsPbkdf2;
    opening = state;
    try {
      return openPfx(pfx, password);
    } catch (e) {
      if (!(e instanceof NeedsPbkdf2)) throw e;
      need = e;
    } finally {
      opening = null;
    }
    try {
      state.pbkdf2.set(need.key, await deriveNatively(need));
    } catch {
      state.forgeOnly = true;
    }
  }
}

