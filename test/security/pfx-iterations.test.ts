import forge from "node-forge";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_PFX_ITERATIONS, openPfx } from "../../src/countries/cl/pki/certificate";
import { call, expectError, newCompany, newOwner, type Actor } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx, type FakeCertificate } from "../helpers/fake-certificates";

const DAY = 86_400_000;
let owner: Actor;
let fake: FakeCertificate;

beforeAll(async () => {
  owner = await newOwner("Costly pfx");
  fake = await makeFakeCertificate({ rut: "11111111-1", cn: "ANA PEREZ", notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 365 * DAY) });
});

function der(asn: forge.asn1.Asn1): Uint8Array {
  return Uint8Array.from(forge.asn1.toDer(asn).getBytes(), (ch) => ch.charCodeAt(0));
}

/** A valid .pfx whose MacData claims 2,000,000,000 iterations (the MAC is checked first). */
function pfxWithHugeMacCount(): Uint8Array {
  const pfx = makeFakePfx(fake, "pw", "legacy");
  const asn = forge.asn1.fromDer(String.fromCharCode(...pfx));
  const macData = (asn.value as forge.asn1.Asn1[])[2]!;
  (macData.value as forge.asn1.Asn1[])[2]!.value = forge.asn1.integerToDer(2_000_000_000).getBytes();
  return der(asn);
}

let pbkdf2Pfx: Uint8Array | undefined;
/** A .pfx without MAC whose PBES2 (PBKDF2) parameters claim 8,388,607 iterations (made once). */
function pfxWithHugePbkdf2Count(): Uint8Array {
  return (pbkdf2Pfx ??= makePbkdf2Pfx());
}

function makePbkdf2Pfx(): Uint8Array {
  const asn = forge.pkcs12.toPkcs12Asn1(fake.key, [fake.cert], "pw", { algorithm: "aes256", useMac: false, count: 0x8000 });
  const bytes = der(asn);
  let patched = 0;
  for (let i = 0; i + 4 < bytes.length; i++) {
    if (bytes[i] === 0x02 && bytes[i + 1] === 0x03 && bytes[i + 2] === 0x00 && bytes[i + 3] === 0x80 && bytes[i + 4] === 0x00) {
      bytes.set([0x7f, 0xff, 0xff], i + 2);
      patched++;
    }
  }
  expect(patched).toBeGreaterThan(0);
  return bytes;
}

function form(bytes: Uint8Array, password: string): FormData {
  const f = new FormData();
  f.append("certificate", new File([bytes as Uint8Array<ArrayBuffer>], "firma.pfx", { type: "application/x-pkcs12" }));
  f.append("password", password);
  return f;
}

describe("iteration counts inside an uploaded .pfx are capped before deriving anything", () => {
  it("the cap is 200,000 and a normal export (2,048) still opens", () => {
    expect(MAX_PFX_ITERATIONS).toBe(200_000);
    expect(openPfx(makeFakePfx(fake, "pw", "modern"), "pw").rut).toBe("11111111-1");
  });

  it("a huge MAC count is refused with CERT_PFX_TOO_COSTLY, password right or wrong", () => {
    const pfx = pfxWithHugeMacCount();
    for (const password of ["pw", "wrong"]) {
      expect(() => openPfx(pfx, password)).toThrow(expect.objectContaining({ code: "CERT_PFX_TOO_COSTLY" }));
    }
  });

  it("a huge PBKDF2 count in an encrypted bag is refused the same way", () => {
    expect(() => openPfx(pfxWithHugePbkdf2Count(), "pw")).toThrow(expect.objectContaining({ code: "CERT_PFX_TOO_COSTLY" }));
  });

  it("the upload answers 400 CERTIFICATE_PFX_TOO_COSTLY and stores nothing", async () => {
    const c = await newCompany(owner);
    for (const pfx of [pfxWithHugeMacCount(), pfxWithHugePbkdf2Count()]) {
      const res = await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: form(pfx, "pw") });
      expectError(res, 400, "CERTIFICATE_PFX_TOO_COSTLY");
    }
    const list = await call("GET", `/api/companies/${c}/certificates`, { key: owner.key });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain("cer_");
  });
});
