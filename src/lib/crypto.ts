const encoder = new TextEncoder();

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** Imported HMAC keys per secret (the API-key pepper is the same on every request). */
const hmacKeys = new Map<string, Promise<CryptoKey>>();

export async function hmacSha256(secret: string, data: string): Promise<Uint8Array> {
  let key = hmacKeys.get(secret);
  if (!key) {
    if (hmacKeys.size > 16) hmacKeys.clear();
    hmacKeys.set(secret, (key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])));
    key.catch(() => hmacKeys.delete(secret));
  }
  return new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(data)));
}

export async function hmacSha256Hex(secret: string, data: string): Promise<string> {
  return toHex(await hmacSha256(secret, data));
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
