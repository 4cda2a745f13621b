/** Base64 for bytes (standard alphabet, padded). The one implementation; the engine wraps it. */

/**
 * The native decoder where the runtime has one (Uint8Array.fromBase64, TC39 2025): with its default
 * "loose" handling of the last chunk it takes exactly what atob takes (ASCII whitespace skipped,
 * padding optional), without a binary string and a copy loop.
 */
const fromBase64 = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64?.bind(Uint8Array);

/** Decodes base64, whitespace ignored. Throws a TypeError on anything else. */
export function base64ToBytes(s: string): Uint8Array<ArrayBuffer> {
  if (fromBase64) {
    try {
      return fromBase64(s);
    } catch {
      // Other whitespace (which the regex below removes) or not base64: the path below decides.
    }
  }
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
