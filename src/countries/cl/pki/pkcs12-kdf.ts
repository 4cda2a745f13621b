/**
 * The PKCS#12 key derivation (RFC 7292, appendix B.2) with SHA-1, over byte arrays: the derivation of
 * a .pfx's MAC key (and of legacy PBES1 bag keys). node-forge does the same through its byte-string
 * buffers, about 5 ms for the usual 2,048 iterations; opening a company's certificate, once per
 * isolate, did it on every company's first document (the scale load's profile, 2026-11-26). WebCrypto
 * has no PKCS#12 KDF, and a digest per iteration would be asynchronous where forge calls synchronously,
 * hence SHA-1 here. `certificate.ts` uses it for SHA-1 and leaves any other hash to forge.
 */

const K = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6];

/** SHA-1 of `data` (FIPS 180-4). */
export function sha1(data: Uint8Array): Uint8Array {
  const blocks = Math.ceil((data.length + 9) / 64);
  const m = new Uint8Array(blocks * 64);
  m.set(data);
  m[data.length] = 0x80;
  const view = new DataView(m.buffer);
  const bits = data.length * 8;
  view.setUint32(m.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(m.length - 4, bits >>> 0);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Int32Array(80);
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(b * 64 + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    let [a, bb, c, d, e] = h as [number, number, number, number, number];
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (bb & c) | (~bb & d) : i < 40 ? bb ^ c ^ d : i < 60 ? (bb & c) | (bb & d) | (c & d) : bb ^ c ^ d;
      const t = (((a << 5) | (a >>> 27)) + f + e + K[(i / 20) | 0]! + w[i]!) | 0;
      e = d;
      d = c;
      c = (bb << 30) | (bb >>> 2);
      bb = a;
      a = t;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + bb) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
  }
  const out = new Uint8Array(20);
  const o = new DataView(out.buffer);
  h.forEach((v, i) => o.setInt32(i * 4, v));
  return out;
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
    let a = sha1(new Uint8Array([...D, ...I]));
    for (let r = 1; r < iterations; r++) a = sha1(a);
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
