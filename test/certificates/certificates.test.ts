import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { recordCertificateExpiryEvents, requireSigningCredentials } from "../../src/accounts/certificates/certificates";
import { AppError } from "../../src/lib/errors";
import { ownCredentials } from "../../src/countries/cl";
import { call, expectError, newCompany, newKey, newOwner, type Actor } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx, type FakeCertificate } from "../helpers/fake-certificates";

function pfxForm(bytes: Uint8Array | null, password: string | null, name = "firma.pfx") {
  const form = new FormData();
  if (bytes) form.append("certificate", new File([bytes as Uint8Array<ArrayBuffer>], name, { type: "application/x-pkcs12" }));
  if (password !== null) form.append("password", password);
  return form;
}

let owner: Actor;
let fake: FakeCertificate;
const DAY = 86_400_000;

beforeAll(async () => {
  owner = await newOwner("Certificates");
  fake = await makeFakeCertificate({ rut: "11111111-1", cn: "ANA PEREZ", notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 365 * DAY) });
});

describe("POST /api/companies/{company_id}/certificates", () => {
  it.each(["legacy", "modern"] as const)("opens a %s .pfx, reads holder and RUT, stores it encrypted and active", async (kind) => {
    const c = await newCompany(owner);
    const pfx = makeFakePfx(fake, "s3cret-ñ", kind);
    const res = await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(pfx, "s3cret-ñ") });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ id_company: c, subject_name: "ANA PEREZ", holder_rut: "11111111-1", validity: "VALID", active: true });
    expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE|s3cret/);
    const row = await env.DB.prepare("SELECT pfx_key, password_enc FROM certificates WHERE id = ?").bind(res.body.id).first<{ pfx_key: string; password_enc: string }>();
    expect(row!.password_enc).not.toContain("s3cret");
    const stored = new Uint8Array(await (await env.FILES.get(row!.pfx_key))!.arrayBuffer());
    expect(stored.length).toBeGreaterThan(pfx.length);
    expect(Buffer.from(stored).includes(Buffer.from(pfx.subarray(0, 64)))).toBe(false);
    // and it can be used to sign: the decrypted key matches the certificate
    const found = await requireSigningCredentials(createDb(env.DB), env, c);
    const creds = { ...ownCredentials(found), certificateId: found.certificateId };
    expect(creds.rut).toBe("11111111-1");
    expect(creds.certificateId).toBe(res.body.id);
    const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", creds.privateKey, new TextEncoder().encode("x"));
    expect(sig.byteLength).toBe(256);
  });

  it("picks the key's certificate when the file also carries a CA certificate", async () => {
    const ca = await makeFakeCertificate({ rut: null, cn: "FAKE CA", notAfter: new Date(Date.now() + 900 * DAY) });
    const holder = await makeFakeCertificate({ rut: "22222222-2", cn: "HOLDER", issuer: ca, notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 300 * DAY) });
    const c = await newCompany(owner);
    const res = await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(holder, "pw", "modern", { extraCerts: [ca] }), "pw") });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ subject_name: "HOLDER", holder_rut: "22222222-2", issuer_name: "FAKE CA" });
  });

  it("each bad certificate has its own code and stores nothing", async () => {
    const c = await newCompany(owner);
    const expired = await makeFakeCertificate({ notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - DAY) });
    const future = await makeFakeCertificate({ notBefore: new Date(Date.now() + 10 * DAY), notAfter: new Date(Date.now() + 400 * DAY) });
    const other = await makeFakeCertificate({ notBefore: new Date(Date.now() - DAY) });
    const cases: [FormData, number, string][] = [
      [pfxForm(makeFakePfx(fake, "right", "modern"), "wrong"), 400, "CERTIFICATE_WRONG_PASSWORD"],
      [pfxForm(makeFakePfx(fake, "right", "legacy"), "wrong"), 400, "CERTIFICATE_WRONG_PASSWORD"],
      [pfxForm(new TextEncoder().encode("this is a text file, not a pfx"), "x"), 400, "CERTIFICATE_NOT_PFX"],
      [pfxForm(makeFakePfx(fake, "pw", "modern", { noKey: true }), "pw"), 400, "CERTIFICATE_NO_PRIVATE_KEY"],
      [pfxForm(makeFakePfx(fake, "pw", "modern", { certs: [other.cert] }), "pw"), 400, "CERTIFICATE_KEY_MISMATCH"],
      [pfxForm(makeFakePfx(expired, "pw", "modern"), "pw"), 400, "CERTIFICATE_EXPIRED"],
      [pfxForm(makeFakePfx(future, "pw", "modern"), "pw"), 400, "CERTIFICATE_NOT_YET_VALID"],
      [pfxForm(null, "pw"), 400, "VALIDATION_FAILED"],
      [pfxForm(makeFakePfx(fake, "pw", "modern"), null), 400, "VALIDATION_FAILED"],
      [pfxForm(new Uint8Array(70 * 1024).fill(0x30), "pw"), 413, "PAYLOAD_TOO_LARGE"],
    ];
    for (const [form, status, code] of cases) {
      expectError(await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: form }), status, code);
    }
    expect((await call("GET", `/api/companies/${c}/certificates`, { key: owner.key })).body.total).toBe(0);
    const r2 = await env.FILES.list({ prefix: `companies/${c}/certificates/` });
    expect(r2.objects).toHaveLength(0);
  });

  it("a self-signed test certificate is accepted (DECISIONS 19) but one without holder RUT is refused", async () => {
    const c = await newCompany(owner);
    const norut = await makeFakeCertificate({ rut: null, notBefore: new Date(Date.now() - DAY) });
    const res = await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(norut, "pw", "modern"), "pw") });
    expectError(res, 400, "CERTIFICATE_NO_RUT");
    expect(res.body.error.message).toContain("1.3.6.1.4.1.8321.1");
    const selfSigned = await makeFakeCertificate({ rut: "12345678-5", cn: "SELF SIGNED TEST", notBefore: new Date(Date.now() - DAY), selfSigned: true });
    expect((await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(selfSigned, "pw", "modern"), "pw") })).status).toBe(201);
  });

  it("a holder RUT with a wrong check digit is reported as such, not as no RUT (issue 18)", async () => {
    const c = await newCompany(owner);
    const bad = await makeFakeCertificate({ rut: "11111111-2", notBefore: new Date(Date.now() - DAY) });
    const res = await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(bad, "pw", "modern"), "pw") });
    expectError(res, 400, "CERTIFICATE_RUT_INVALID");
    expect(res.body.error.message).toContain('"11111111-2" is not a valid RUT');
    expect((await call("GET", `/api/companies/${c}/certificates`, { key: owner.key })).body.total).toBe(0);
  });

  it("the same certificate twice is 409; MEMBER keys may not upload", async () => {
    const c = await newCompany(owner);
    const form = () => pfxForm(makeFakePfx(fake, "pw", "modern"), "pw");
    expect((await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: form() })).status).toBe(201);
    expectError(await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: form() }), 409, "CERTIFICATE_DUPLICATE");
    const member = await newKey(owner.clientId, "MEMBER");
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${c}`, { key: owner.key });
    expectError(await call("POST", `/api/companies/${c}/certificates`, { key: member.key, body: form() }), 403, "AUTH_ROLE_FORBIDDEN");
    expect((await call("GET", `/api/companies/${c}/certificates`, { key: member.key })).status).toBe(200);
  });
});

describe("listing, activation and deletion", () => {
  it("lists newest first with the active one; activation switches; deletion destroys key material", async () => {
    const c = await newCompany(owner);
    const a = await makeFakeCertificate({ cn: "FIRST", notBefore: new Date(Date.now() - DAY) });
    const b = await makeFakeCertificate({ cn: "SECOND", notBefore: new Date(Date.now() - DAY) });
    const first = (await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(a, "pw", "modern"), "pw") })).body;
    const second = (await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(b, "pw", "legacy"), "pw") })).body;
    let list = (await call("GET", `/api/companies/${c}/certificates`, { key: owner.key })).body.data;
    expect(list.map((x: { subject_name: string; active: boolean }) => [x.subject_name, x.active])).toEqual([["SECOND", true], ["FIRST", false]]);
    expect((await requireSigningCredentials(createDb(env.DB), env, c)).certificateId).toBe(second.id);

    const act = await call("POST", `/api/companies/${c}/certificates/${first.id}/activate`, { key: owner.key });
    expect(act.body.active).toBe(true);
    list = (await call("GET", `/api/companies/${c}/certificates`, { key: owner.key })).body.data;
    expect(list.filter((x: { active: boolean }) => x.active).map((x: { id: string }) => x.id)).toEqual([first.id]);

    const del = await call("DELETE", `/api/companies/${c}/certificates/${first.id}`, { key: owner.key });
    expect(del.body).toMatchObject({ id: first.id, active: false });
    expectError(await call("GET", `/api/companies/${c}/certificates/${first.id}`, { key: owner.key }), 404, "CERTIFICATE_NOT_FOUND");
    const row = await env.DB.prepare("SELECT pfx_key FROM certificates WHERE id = ?").bind(first.id).first<{ pfx_key: string }>();
    expect(await env.FILES.get(row!.pfx_key)).toBeNull();
    // no active certificate left: issuance is refused with a clear error
    await expect(requireSigningCredentials(createDb(env.DB), env, c)).rejects.toMatchObject({ code: "CERTIFICATE_REQUIRED" });
    expectError(await call("POST", `/api/companies/${c}/certificates/cer_nope/activate`, { key: owner.key }), 404, "CERTIFICATE_NOT_FOUND");
  });

  it("an expired active certificate stops signing with CERTIFICATE_REQUIRED", async () => {
    const c = await newCompany(owner);
    const soon = await makeFakeCertificate({ notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 2 * DAY) });
    await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(soon, "pw", "modern"), "pw") });
    const later = new Date(Date.now() + 3 * DAY);
    const err = await requireSigningCredentials(createDb(env.DB), env, c, later).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe("CERTIFICATE_REQUIRED");
    expect(err.message).toContain("expired");
    const none = await requireSigningCredentials(createDb(env.DB), env, await newCompany(owner)).catch((e) => e);
    expect(none.code).toBe("CERTIFICATE_REQUIRED");
  });

  it("records certificate.expiring at 30, 15 and 7 days, once each", async () => {
    const c = await newCompany(owner);
    const cert = await makeFakeCertificate({ notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 40 * DAY) });
    const id = (await call("POST", `/api/companies/${c}/certificates`, { key: owner.key, body: pfxForm(makeFakePfx(cert, "pw", "modern"), "pw") })).body.id;
    const db = createDb(env.DB);
    const at = (days: number) => new Date(Date.now() + days * DAY);
    const events = async () =>
      (await env.DB.prepare("SELECT dedupe_key FROM event_outbox WHERE company_id = ? AND type = 'certificate.expiring' ORDER BY created_at").bind(c).all<{ dedupe_key: string }>()).results.map((r) => r.dedupe_key);
    await recordCertificateExpiryEvents(db, at(5)); // 35 days left: nothing
    expect(await events()).toEqual([]);
    await recordCertificateExpiryEvents(db, at(11)); // 29 days left
    await recordCertificateExpiryEvents(db, at(12));
    expect(await events()).toEqual([`CERTIFICATE_EXPIRING:${id}:30`]);
    await recordCertificateExpiryEvents(db, at(26)); // 14 days
    await recordCertificateExpiryEvents(db, at(34)); // 6 days
    await recordCertificateExpiryEvents(db, at(35));
    expect(await events()).toEqual([`CERTIFICATE_EXPIRING:${id}:30`, `CERTIFICATE_EXPIRING:${id}:15`, `CERTIFICATE_EXPIRING:${id}:7`]);
    const payload = JSON.parse((await env.DB.prepare("SELECT payload FROM event_outbox WHERE dedupe_key = ?").bind(`CERTIFICATE_EXPIRING:${id}:7`).first<{ payload: string }>())!.payload);
    expect(payload).toMatchObject({ certificate_id: id, threshold_days: 7, days_left: 5 });
  });
});
