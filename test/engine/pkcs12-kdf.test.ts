// The PKCS#12 key derivation over byte arrays (src/countries/cl/pki/pkcs12-kdf.ts) gives exactly the
// bytes node-forge's gives, and its SHA-1 WebCrypto's, for every shape of input a .pfx can carry.
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { pkcs12KdfSha1, sha1 } from "../../src/countries/cl/pki/pkcs12-kdf";

const bin = (u: Uint8Array) => String.fromCharCode(...u);
const bytesOf = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
/** forge's own derivation (certificate.ts wraps `forge.pkcs12.generateKey`, not this one). */
const originalKdf = (forge as unknown as { pbe: { generatePkcs12Key: (...a: unknown[]) => forge.util.ByteStringBuffer } }).pbe.generatePkcs12Key;
const seq = (len: number, from = 7) => Uint8Array.from({ length: len }, (_, i) => (i * 31 + from) & 0xff);

describe("PKCS#12 key derivation with SHA-1", () => {
  it("SHA-1 matches WebCrypto's for lengths around the block and padding boundaries", async () => {
    for (const len of [0, 1, 20, 55, 56, 63, 64, 65, 119, 120, 128, 1000]) {
      const data = seq(len);
      expect(sha1(data)).toEqual(new Uint8Array(await crypto.subtle.digest("SHA-1", data)));
    }
  });

  it("matches node-forge's derivation for passwords, salts, purposes, iteration counts and lengths", () => {
    for (const password of ["test-only-1234", "", "contraseña ñandú €", null]) {
      for (const salt of [seq(8), seq(0), seq(20, 3), seq(64, 1), seq(65, 9)]) {
        for (const [id, iterations, n] of [[3, 2048, 20], [1, 1, 24], [2, 2, 8], [1, 3, 40], [3, 1000, 64], [1, 2048, 32]] as const) {
          const expected = originalKdf(password, forge.util.createBuffer(bin(salt)), id, iterations, n, forge.md.sha1.create()).bytes();
          expect(bin(pkcs12KdfSha1(password, salt, id, iterations, n)), `${password} ${salt.length} ${id} ${iterations} ${n}`).toBe(expected);
        }
      }
    }
  });

  it("refuses fewer than one iteration, as forge does", () => {
    expect(() => pkcs12KdfSha1("x", seq(8), 3, 0, 20)).toThrow(/iteration count/);
  });
});
