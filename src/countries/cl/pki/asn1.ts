/**
 * Small DER helpers for RSA keys: WebCrypto imports only pkcs8/spki, while the SII CAF carries its
 * stamping key as PKCS#1 ("BEGIN RSA PRIVATE KEY") and publishes modulus/exponent in base64.
 */
import { base64ToBytes, bytesToBase64 } from "../../../lib/base64";

export interface Tlv {
  tag: number;
  /** Offset of the whole TLV. */
  start: number;
  /** Offset and length of the value. */
  valueStart: number;
  length: number;
  end: number;
}

export class Asn1Error extends Error {}

export function readTlv(b: Uint8Array, pos: number): Tlv {
  if (pos + 2 > b.length) throw new Asn1Error("truncated DER");
  const tag = b[pos]!;
  let len = b[pos + 1]!;
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > b.length) throw new Asn1Error("bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[p + i]!;
    p += n;
  }
  if (p + len > b.length) throw new Asn1Error("truncated DER value");
  return { tag, start: pos, valueStart: p, length: len, end: p + len };
}

/** Children of a constructed TLV. */
export function children(b: Uint8Array, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = t.valueStart; p < t.end; ) {
    const c = readTlv(b, p);
    out.push(c);
    p = c.end;
  }
  return out;
}

export function value(b: Uint8Array, t: Tlv): Uint8Array {
  return b.subarray(t.valueStart, t.end);
}

function lenBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  while (n > 0) {
    out.unshift(n & 0xff);
    n = Math.floor(n / 256);
  }
  return [0x80 | out.length, ...out];
}

export function tlv(tag: number, v: Uint8Array): Uint8Array {
  const l = lenBytes(v.length);
  const out = new Uint8Array(1 + l.length + v.length);
  out[0] = tag;
  out.set(l, 1);
  out.set(v, 1 + l.length);
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export const seq = (...parts: Uint8Array[]) => tlv(0x30, concat(...parts));
/** DER INTEGER from unsigned big-endian bytes (adds the sign byte, strips leading zeros). */
export function uint(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let v = bytes.subarray(i);
  if (v[0]! & 0x80) v = concat(new Uint8Array([0]), v);
  return tlv(0x02, v);
}
/** Unsigned big-endian bytes of a DER INTEGER value (leading zero removed). */
export function uintValue(v: Uint8Array): Uint8Array {
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  return v.subarray(i);
}

/** AlgorithmIdentifier rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters. */
const RSA_ALG = new Uint8Array([0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00]);

export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  return seq(new Uint8Array([0x02, 0x01, 0x00]), RSA_ALG, tlv(0x04, pkcs1));
}

export function pkcs8ToPkcs1(pkcs8: Uint8Array): Uint8Array {
  const top = readTlv(pkcs8, 0);
  const kids = children(pkcs8, top);
  const oct = kids[2];
  if (!oct || oct.tag !== 0x04) throw new Asn1Error("not a PKCS#8 private key");
  return value(pkcs8, oct).slice();
}

export function spkiFromRsa(modulus: Uint8Array, exponent: Uint8Array): Uint8Array {
  const rsaPub = seq(uint(modulus), uint(exponent));
  return seq(RSA_ALG, tlv(0x03, concat(new Uint8Array([0]), rsaPub)));
}

export interface RsaPublicParts {
  modulus: Uint8Array;
  exponent: Uint8Array;
}

/** Modulus and exponent of an SPKI (RSA). */
export function rsaFromSpki(spki: Uint8Array): RsaPublicParts {
  const top = readTlv(spki, 0);
  const [, bit] = children(spki, top);
  if (!bit || bit.tag !== 0x03) throw new Asn1Error("not an SPKI");
  const inner = value(spki, bit).subarray(1);
  const s = readTlv(inner, 0);
  const [n, e] = children(inner, s);
  if (!n || !e) throw new Asn1Error("not an RSA public key");
  return { modulus: uintValue(value(inner, n)), exponent: uintValue(value(inner, e)) };
}

/** Modulus and public exponent of a PKCS#1 RSAPrivateKey. */
export function rsaFromPkcs1Private(pkcs1: Uint8Array): RsaPublicParts {
  const top = readTlv(pkcs1, 0);
  const k = children(pkcs1, top);
  if (k.length < 9) throw new Asn1Error("not a PKCS#1 RSA private key");
  return { modulus: uintValue(value(pkcs1, k[1]!)), exponent: uintValue(value(pkcs1, k[2]!)) };
}

/** SubjectPublicKeyInfo (DER) of an X.509 certificate (DER). */
export function spkiFromCertificate(cert: Uint8Array): Uint8Array {
  const top = readTlv(cert, 0);
  const [tbs] = children(cert, top);
  if (!tbs) throw new Asn1Error("not a certificate");
  const f = children(cert, tbs);
  const off = f[0]?.tag === 0xa0 ? 1 : 0;
  const spki = f[off + 5];
  if (!spki || spki.tag !== 0x30) throw new Asn1Error("certificate without SPKI");
  return cert.slice(spki.start, spki.end);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---- base64 / PEM ------------------------------------------------------------------------------

/** Decodes base64 (whitespace ignored). Throws Asn1Error (never a DOMException) on bad input. */
export function b64decode(s: string): Uint8Array<ArrayBuffer> {
  try {
    return base64ToBytes(s);
  } catch {
    throw new Asn1Error("invalid base64");
  }
}

export const b64encode = bytesToBase64;

/** Wraps base64 at `width` columns with LF. */
export function wrap64(b64: string, width = 76): string {
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += width) lines.push(b64.slice(i, i + width));
  return lines.join("\n");
}

/** Decodes the body of a PEM block with the given label (one-line or wrapped PEM accepted). */
export function pemDecode(pem: string, label: string): Uint8Array | undefined {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`);
  const m = re.exec(pem);
  if (!m) return undefined;
  return b64decode(m[1]!);
}

export function pemEncode(der: Uint8Array, label: string): string {
  return `-----BEGIN ${label}-----\n${wrap64(b64encode(der), 64)}\n-----END ${label}-----\n`;
}

/** A Uint8Array backed by its own ArrayBuffer (WebCrypto's BufferSource typing wants that). */
export function buf(u: Uint8Array): ArrayBuffer {
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
}
