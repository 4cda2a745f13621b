import { base64ToBytes } from "./base64";
/**
 * Encryption at rest with AES-256-GCM under the master key ring (the MASTER_KEY secret).
 *
 * MASTER_KEY is either one key, the base64 of 32 bytes (that key is version 1), or a ring of
 * versioned keys `3:<base64>,2:<base64>,1:<base64>` whose FIRST entry is the current one: new
 * values are sealed with it, older versions are kept only to open what `npm run keys:rotate` has
 * not re-sealed yet.
 *
 * Sealed layout: format byte 2 || key version (1 byte) || 12-byte IV || ciphertext+tag. The
 * associated data binds a ciphertext to its record (e.g. the certificate
 * id), so a blob cannot be swapped between records.
 */
const FORMAT = 2;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface KeyRing {
  current: number;
  keys: ReadonlyMap<number, Uint8Array<ArrayBuffer>>;
}

const ENTRY = /^(\d{1,3}):(.+)$/;

/** Parses MASTER_KEY (see above). Throws an Error with a short reason, never the key itself. */
export function parseKeyRing(value: string): KeyRing {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw new Error("MASTER_KEY is empty");
  const keys = new Map<number, Uint8Array<ArrayBuffer>>();
  let current = 0;
  for (const [i, entry] of entries.entries()) {
    const m = ENTRY.exec(entry);
    if (!m && entries.length > 1) throw new Error("MASTER_KEY with several keys must write each as <version>:<base64>");
    const version = m ? Number(m[1]) : 1;
    if (version < 1 || version > 255) throw new Error("MASTER_KEY versions are 1 to 255");
    if (keys.has(version)) throw new Error(`MASTER_KEY names version ${version} twice`);
    let raw: Uint8Array<ArrayBuffer>;
    try {
      raw = base64ToBytes(m ? m[2]! : entry);
    } catch {
      throw new Error(`MASTER_KEY version ${version} is not base64`);
    }
    if (raw.length !== 32) throw new Error(`MASTER_KEY version ${version} must be the base64 of exactly 32 bytes`);
    keys.set(version, raw);
    if (i === 0) current = version;
  }
  return { current, keys };
}

const ringCache = new Map<string, KeyRing>();
const keyCache = new Map<string, Promise<CryptoKey>>();

function ringOf(masterKey: string): KeyRing {
  let ring = ringCache.get(masterKey);
  if (!ring) {
    ring = parseKeyRing(masterKey);
    ringCache.set(masterKey, ring);
  }
  return ring;
}

/** The version new values are sealed with. */
export function currentKeyVersion(masterKey: string): number {
  return ringOf(masterKey).current;
}

function cryptoKey(masterKey: string, version: number): Promise<CryptoKey> {
  const cacheKey = `${version}|${masterKey}`;
  let key = keyCache.get(cacheKey);
  if (!key) {
    const raw = ringOf(masterKey).keys.get(version);
    if (!raw) throw new Error(`This value was sealed with master key version ${version}, which MASTER_KEY no longer holds`);
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keyCache.set(cacheKey, key);
  }
  return key;
}

/** The master key version a sealed value was written with. */
export function keyVersionOf(sealed: Uint8Array): number {
  if (sealed[0] === FORMAT && sealed.length >= 2 + IV_BYTES + TAG_BYTES) return sealed[1]!;
  throw new Error("Unknown or truncated sealed value");
}

/** Whether a sealed value is under an older key than the current one (what keys:rotate re-seals). */
export function needsResealing(masterKey: string, sealed: Uint8Array): boolean {
  return keyVersionOf(sealed) !== currentKeyVersion(masterKey);
}

export async function seal(masterKey: string, plaintext: Uint8Array, associatedData: string): Promise<Uint8Array> {
  const version = currentKeyVersion(masterKey);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(associatedData) }, await cryptoKey(masterKey, version), plaintext as Uint8Array<ArrayBuffer>),
  );
  const out = new Uint8Array(2 + IV_BYTES + ct.length);
  out[0] = FORMAT;
  out[1] = version;
  out.set(iv, 2);
  out.set(ct, 2 + IV_BYTES);
  return out;
}

export async function open(masterKey: string, sealed: Uint8Array, associatedData: string): Promise<Uint8Array> {
  const version = keyVersionOf(sealed);
  const start = 2;
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: sealed.subarray(start, start + IV_BYTES) as Uint8Array<ArrayBuffer>, additionalData: new TextEncoder().encode(associatedData) },
    await cryptoKey(masterKey, version),
    sealed.subarray(start + IV_BYTES) as Uint8Array<ArrayBuffer>,
  );
  return new Uint8Array(pt);
}

/** Opens a value and seals it again under the current key (same associated data). */
export async function reseal(masterKey: string, sealed: Uint8Array, associatedData: string): Promise<Uint8Array> {
  return seal(masterKey, await open(masterKey, sealed, associatedData), associatedData);
}
