// openPfxNative (PBKDF2 through WebCrypto) gives exactly what openPfx (node-forge alone) gives:
// the same certificate, key and fields, the same error codes, whatever the kind of file.
import forge from "node-forge";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { b64decode } from "../../src/countries/cl/pki/asn1";
import { openPfx, openPfxNative } from "../../src/countries/cl/pki/certificate";
import { makeFakeCertificate, makeFakePfx, type FakeCertificate } from "../helpers/fake-certificates";
import legacyPfxB64 from "../fixtures/cl/fake-legacy-rc2.pfx.b64?raw";
import modernPfxB64 from "../fixtures/cl/fake-modern-aes.pfx.b64?raw";

let holder: FakeCertificate;
let ca: FakeCertificate;
let other: FakeCertificate;

beforeAll(async () => {
  ca = await makeFakeCertificate({ cn: "FAKE CA", rut: null, bits: 1024 });
  holder = await makeFakeCertificate({ rut: "12345678-5", cn: "JUAN PRUEBA", issuer: ca, bits: 1024 });
  other = await makeFakeCertificate({ bits: 1024 });
});

afterEach(() => vi.restoreAllMocks());

const codeOf = async (f: () => unknown) => {
  try {
    await f();
    return "none";
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
};

function der(asn: forge.asn1.Asn1): Uint8Array {
  return Uint8Array.from(forge.asn1.toDer(asn).getBytes(), (ch) => ch.charCodeAt(0));
}

describe("openPfxNative", () => {
  it("opens OpenSSL's legacy and modern files (PBES2, SHA-256 PRF) exactly as openPfx does", async () => {
    for (const b64 of [legacyPfxB64, modernPfxB64]) {
      const pfx = b64decode(b64);
      expect(await openPfxNative(pfx, "test-only-1234")).toEqual(openPfx(pfx, "test-only-1234"));
    }
  });

  it("opens forge-made legacy and modern files (with a CA beside the holder) exactly as openPfx does", async () => {
    for (const kind of ["legacy", "modern"] as const) {
      const pfx = makeFakePfx(holder, "clave", kind, { extraCerts: [ca] });
      const native = await openPfxNative(pfx, "clave");
      expect(native).toEqual(openPfx(pfx, "clave"));
      expect(native).toMatchObject({ rut: "12345678-5", subjectCN: "JUAN PRUEBA", issuerCN: "FAKE CA" });
    }
  });

  it("derives PBES2 keys with WebCrypto and leaves legacy (PKCS#12-KDF) files to forge", async () => {
    const derive = vi.spyOn(crypto.subtle, "deriveBits");
    await openPfxNative(b64decode(modernPfxB64), "test-only-1234");
    expect(derive.mock.calls.length).toBeGreaterThan(0);
    expect(derive.mock.calls.every(([alg]) => (alg as { name: string }).name === "PBKDF2")).toBe(true);
    derive.mockClear();
    await openPfxNative(makeFakePfx(holder, "clave", "legacy"), "clave");
    expect(derive).not.toHaveBeenCalled();
  });

  it("a password that is not printable ASCII is left to forge, with the same result", async () => {
    const derive = vi.spyOn(crypto.subtle, "deriveBits");
    const pfx = makeFakePfx(holder, "contraseña", "modern");
    expect(await openPfxNative(pfx, "contraseña")).toEqual(openPfx(pfx, "contraseña"));
    expect(derive).not.toHaveBeenCalled();
  });

  it("gives the same error codes: not a pfx, wrong password, no key, mismatch, too costly", async () => {
    const cases: [Uint8Array, string][] = [
      [new TextEncoder().encode("hello, I am not a pfx"), "x"],
      [b64decode(modernPfxB64), "wrong"],
      [b64decode(legacyPfxB64), "wrong"],
      [makeFakePfx(holder, "right", "modern"), "wrong"],
      [makeFakePfx(holder, "right", "legacy", { noKey: true }), "right"],
      [makeFakePfx(holder, "right", "modern", { certs: [other.cert] }), "right"],
      [hugePbkdf2Count(), "pw"],
    ];
    for (const [pfx, password] of cases) {
      const expected = await codeOf(() => openPfx(pfx, password));
      expect(expected).not.toBe("none");
      expect(await codeOf(() => openPfxNative(pfx, password))).toBe(expected);
    }
  });

  it("concurrent openings with different passwords each get their own file's key", async () => {
    const a = makeFakePfx(holder, "clave-a", "modern");
    const b = makeFakePfx(other, "clave-b", "modern");
    const modern = b64decode(modernPfxB64);
    const [ra, rb, rm] = await Promise.all([openPfxNative(a, "clave-a"), openPfxNative(b, "clave-b"), openPfxNative(modern, "test-only-1234")]);
    expect(ra.privateKeyPkcs8).toEqual(openPfx(a, "clave-a").privateKeyPkcs8);
    expect(rb.privateKeyPkcs8).toEqual(openPfx(b, "clave-b").privateKeyPkcs8);
    expect(rm.rut).toBe("11111111-1");
    // A synchronous opening after them runs on forge alone, as before.
    expect(openPfx(a, "clave-a").fingerprintSha1).toBe(ra.fingerprintSha1);
  });
});

/** A .pfx without MAC whose PBES2 (PBKDF2) parameters claim 8,388,607 iterations. */
function hugePbkdf2Count(): Uint8Array {
  const bytes = der(forge.pkcs12.toPkcs12Asn1(holder.key, [holder.cert], "pw", { algorithm: "aes256", useMac: false, count: 0x8000 }));
  for (let i = 0; i + 4 < bytes.length; i++) {
    if (bytes[i] === 0x02 && bytes[i + 1] === 0x03 && bytes[i + 2] === 0x00 && bytes[i + 3] === 0x80 && bytes[i + 4] === 0x00) bytes.set([0x7f, 0xff, 0xff], i + 2);
  }
  return bytes;
}
