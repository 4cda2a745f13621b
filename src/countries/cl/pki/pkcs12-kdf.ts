/**
 * The PKCS#12 key derivation (RFC 7292, appendix B.2) with SHA-1, over byte arrays: the derivation of
 * a .pfx's MAC key (and of legacy PBES1 bag keys). node-forge does the same through its byte-string
 * buffers, about 5 ms for the usual 2,048 iterations; opening a company's certificate, once per
 * isolate, did it on every company's first document (the scale load's profile, 2026-11-26). WebCrypto
 * has no PKCS#12 KDF, and a digest per iteration would be asynchronous where forge calls synchronously,
 * hence SHA-1 here. `certificate.ts` uses it for SHA-1 and leaves any other hash to forge.
 */

const IV = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
// The last two round constants as signed 32-bit integers (small integers keep V8 on integer arithmetic).
const K3 = 0x8f1bbcdc | 0;
const K4 = 0xca62c1d6 | 0;
/** The message schedule, reused by every compression (single-threaded, never across an await). */
const W = new Int32Array(80);

/** One SHA-1 compression of the block in W[0..15] into the state `h`. */
function compress(h: Int32Array): void {
  for (let i = 16; i < 80; i++) {
    const x = W[i - 3]! ^ W[i - 8]! ^ W[i - 14]! ^ W[i - 16]!;
    W[i] = (x << 1) | (x >>> 31);
  }
  let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!;
  for (let i = 0; i < 80; i++) {
    let f: number;
    if (i < 20) f = ((b & c) | (~b & d)) + 0x5a827999;
    else if (i < 40) f = (b ^ c ^ d) + 0x6ed9eba1;
    else if (i < 60) f = ((b & c) | (b & d) | (c & d)) + K3;
    else f = (b ^ c ^ d) + K4;
    const t = (((a << 5) | (a >>> 27)) + f + e + W[i]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  h[0] = (h[0]! + a) | 0;
  h[1] = (h[1]! + b) | 0;
  h[2] = (h[2]! + c) | 0;
  h[3] = (h[3]! + d) | 0;
  h[4] = (h[4]! + e) | 0;
}

/** SHA-1 of `data` as its five state words. */
function sha1Words(data: Uint8Array): Int32Array {
  const h = Int32Array.from(IV);
  const blocks = Math.ceil((data.length + 9) / 64);
  const m = new Uint8Array(blocks * 64);
  m.set(data);
  m[data.length] = 0x80;
  const bits = data.length * 8;
  const end = m.length;
  for (let k = 0; k < 4; k++) m[end - 1 - k] = (bits >>> (8 * k)) & 0xff;
  m[end - 5] = Math.floor(bits / 0x100000000) & 0xff;
  for (let off = 0; off < end; off += 64) {
    for (let i = 0; i < 16; i++) W[i] = (m[off + i * 4]! << 24) | (m[off + i * 4 + 1]! << 16) | (m[off + i * 4 + 2]! << 8) | m[off + i * 4 + 3]!;
    compress(h);
  }
  return h;
}

/** SHA-1 applied again to a 20-byte digest held as words, in place: one block, no bytes. */
function rehash(h: Int32Array): void {
  W.set(h, 0);
  W[5] = 0x80000000 | 0;
  W.fill(0, 6, 15);
  W[15] = 160;
  h.set(IV);
  compress(h);
}

function wordsToBytes(h: Int32Array): Uint8Array {
  const out = new Uint8Array(20);
  for (let i = 0; i < 5; i++) {
    out[i * 4] = h[i]! >>> 24;
    out[i * 4 + 1] = (h[i]! >>> 16) & 0xff;
    out[i * 4 + 2] = (h[i]! >>> 8) & 0xff;
    out[i * 4 + 3] = h[i]! & 0xff;
  }
  return out;
}

/** SHA-1 of `data` (FIPS 180-4). */
export function sha1(data: Uint8Array): Uint8Array {
  return wordsToBytes(sha1Words(data));
}

const U = 20; // SHA-1 output
const V = 64; // SHA-1 block

/** `len` bytes of `source` repeated (empty for an empty source). */
function repeated(source: Uint8Array, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = source[i % source.length]!;
  return out;
}

/** The password as PKCS#12 wants it: UTF-16BE code units and two zero bytes (nothing for no password). */
function bmpPassword(password: string | null | undefined): Uint8Array {
  if (password === null || password === undefined) return new Uint8Array(0);
  const out = new Uint8Array(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) {
    out[i * 2] = password.charCodeAt(i) >> 8;
    out[i * 2 + 1] = password.charCodeAt(i) & 0xff;
  }
  return out;
}

/** RFC 7292 B.2 with SHA-1: `n` bytes of key material of purpose `id` (1 key, 2 IV, 3 MAC). */
export function pkcs12KdfSha1(password: string | null | undefined, salt: Uint8Array, id: number, iterations: number, n: number): Uint8Array {
  if (!(iterations >= 1)) throw new Error("PKCS#12 key derivation iteration count must be >= 1.");
  const pass = bmpPassword(password);
  const I = new Uint8Array([...repeated(salt, V * Math.ceil(salt.length / V)), ...repeated(pass, V * Math.ceil(pass.length / V))]);
  const D = new Uint8Array(V).fill(id);
  const out = new Uint8Array(Math.ceil(n / U) * U);
  for (let block = 0; block * U < n; block++) {
    const h = sha1Words(new Uint8Array([...D, ...I]));
    for (let r = 1; r < iterations; r++) rehash(h);
    const a = wordsToBytes(h);
    out.set(a, block * U);
    const B = repeated(a, V);
    for (let j = 0; j < I.length; j += V) {
      let x = 1;
      for (let l = V - 1; l >= 0; l--) {
        x += B[l]! + I[j + l]!;
        I[j + l] = x & 0xff;
        x >>= 8;
      }
    }
  }
  return out.subarray(0, n);
}
