import { base64ToBytes } from "./base64";
/**
 * Encryption at rest with AES-256-GCM under MASTER_KEY (base64 of 32 bytes). Output layout:
 * version byte (1) || 12-byte IV || ciphertext+tag. The associated data binds a ciphertext to its
 * record (e.g. the certificate id), so a blob cannot be swapped between records.
 */
const VERSION = 1;
const keyCache = new Map<string, Promise<CryptoKey>>();

function masterKey(masterKeyB64: string): Promise<CryptoKey> {
  let key = keyCache.get(masterKeyB64);
  if (!key) {
    const raw = base64ToBytes(masterKeyB64);
    if (raw.length !== 32) throw new Error("MASTER_KEY must be the base64 of exactly 32 bytes");
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keyCache.set(masterKeyB64, key);
  }
  return key;
}

export async function seal(masterKeyB64: string, plaintext: Uint8Array, associatedData: string): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(associatedData) }, await masterKey(masterKeyB64), plaintext as Uint8Array<ArrayBuffer>),
  );
  const out = new Uint8Array(1 + iv.length + ct.length);
  out[0] = VERSION;
  out.set(iv, 1);
  out.set(ct, 13);
  return out;
}

export async function open(masterKeyB64: string, sealed: Uint8Array, associatedData: string): Promise<Uint8Array> {
  if (sealed[0] !== VERSION || sealed.length < 13 + 16) throw new Error("Unknown or truncated sealed blob");
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: sealed.subarray(1, 13) as Uint8Array<ArrayBuffer>, additionalData: new TextEncoder().encode(associatedData) },
    await masterKey(masterKeyB64),
    sealed.subarray(13) as Uint8Array<ArrayBuffer>,
  );
  return new Uint8Array(pt);
}
