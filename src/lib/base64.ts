/** Base64 for bytes (standard alphabet, padded). The one implementation; the engine wraps it. */

/** Decodes base64, whitespace ignored. Throws a TypeError on anything else. */
export function base64ToBytes(s: string): Uint8Array<ArrayBuffer> {
  let bin: string;
  try {
    // atob itself skips ASCII whitespace; the regex pass only for text it refuses (other whitespace).
    bin = atobOrNull(s) ?? atob(s.replace(/\s+/g, ""));
  } catch {
    throw new TypeError("invalid base64");
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function bytesToBase64(b: Uint8Array | ArrayBuffer): string {
  const u = b instanceof Uint8Array ? b : new Uint8Array(b);
  let s = "";
  // Short input (digests, signatures): a loop, without the spread's argument list and subarray.
  if (u.length <= 512) {
    for (let i = 0; i < u.length; i++) s += String.fromCharCode(u[i]!);
    return btoa(s);
  }
  for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode(...u.subarray(i, i + 8192));
  return btoa(s);
}

function atobOrNull(s: string): string | null {
  try {
    return atob(s);
  } catch {
    return null;
  }
}
