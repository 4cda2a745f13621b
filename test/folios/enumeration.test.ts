import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { createDb } from "../../src/storage/db/client";
import { refetchCaf } from "../../src/folios/cafs";
import { findCompanyForClient } from "../../src/accounts/companies/repository";
import { toLocalDateTime } from "../../src/lib/time";
import { call, expectError, newCompany, newKey, newOwner, nextRut, type Actor } from "../helpers/api";

const today = () => toLocalDateTime(new Date(), "America/Santiago").slice(0, 10);

async function cafFile(rut: string, documentType: number, from: number, to: number, opts: { authorizedOn?: string; signer?: { idk: number; privateKey: CryptoKey } } = {}) {
  return (await issueSimulatorCaf({ rut, legalName: "EMPRESA DE PRUEBA", documentType, from, to, authorizedOn: opts.authorizedOn ?? today(), signer: opts.signer })).xml;
}

function cafForm(bytes: Uint8Array) {
  const form = new FormData();
  form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], "caf.xml", { type: "text/xml" }));
  return form;
}

let owner: Actor;
let companyId: string;
let rut: string;

async function upload(bytes: Uint8Array, company = companyId) {
  return call("POST", `/api/companies/${company}/enumeration/upload`, { key: owner.key, body: cafForm(bytes) });
}

async function list(company = companyId) {
  const res = await call("GET", `/api/companies/${company}/enumeration/list`, { key: owner.key });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

beforeAll(async () => {
  owner = await newOwner("Folios");
  rut = nextRut();
  companyId = await newCompany(owner, { tax_identification_document_number: rut });
});

describe("CAF upload", () => {
  it("loads a verified CAF and lists it with its availability and expiry", async () => {
    const res = await upload(await cafFile(rut, 33, 1, 100));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ id_document_type: "33", document_type_name: "FACTURA ELECTRÓNICA", enumeration_from: 1, enumeration_end: 100, active: true, available: 100, next_folio: 1, source: "UPLOAD" });
    expect(res.body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}$/); // 33 expires 6 months after FA
    const stored = await env.DB.prepare("SELECT file_key FROM cafs WHERE id = ?").bind(res.body.id).first<{ file_key: string }>();
    expect(await env.FILES.get(stored!.file_key)).not.toBeNull();
    const data = await list();
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ id_document_type: "33", folios_available: 100, next_folio: 1, alert_threshold: 10, alert_threshold_is_default: true });
  });

  it("a second, non-contiguous range of the same type adds up; another type lists separately", async () => {
    expect((await upload(await cafFile(rut, 33, 201, 300))).status).toBe(201);
    const b = await upload(await cafFile(rut, 39, 1, 50));
    expect(b.status).toBe(201);
    expect(b.body.expires_at).toBeNull(); // boleta folios do not expire
    const data = await list();
    expect(data.map((d) => [d.id_document_type, d.folios_available, d.ranges.length])).toEqual([["33", 200, 2], ["39", 50, 1]]);
  });

  it("refuses duplicates and overlaps, leaving everything as it was", async () => {
    const before = await list();
    expectError(await upload(await cafFile(rut, 33, 1, 100)), 409, "ENUMERATION_CAF_DUPLICATE");
    expectError(await upload(await cafFile(rut, 33, 50, 150)), 409, "ENUMERATION_CAF_OVERLAP");
    expectError(await upload(await cafFile(rut, 33, 300, 300)), 409, "ENUMERATION_CAF_OVERLAP");
    expect(await list()).toEqual(before);
  });

  it("refuses another company's CAF, a type we do not issue, an expired CAF and a CAF not signed by a trusted SII key", async () => {
    const before = await list();
    const other = await upload(await cafFile(nextRut(), 33, 1000, 1100));
    expectError(other, 400, "ENUMERATION_CAF_WRONG_COMPANY");
    expect(other.body.error.message).toContain(rut);
    expectError(await upload(await cafFile(rut, 45, 1, 10)), 400, "ENUMERATION_CAF_UNKNOWN_TYPE");
    const expired = await upload(await cafFile(rut, 61, 1, 10, { authorizedOn: "2020-01-01" }));
    expectError(expired, 400, "ENUMERATION_CAF_INVALID");
    expect(expired.body.error.message).toContain("expired");
    const rogue = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-1" }, true, ["sign", "verify"])) as CryptoKeyPair;
    expectError(await upload(await cafFile(rut, 56, 1, 10, { signer: { idk: 999, privateKey: rogue.privateKey } })), 400, "ENUMERATION_CAF_INVALID");
    expectError(await upload(await cafFile(rut, 56, 1, 10, { signer: { idk: 555, privateKey: rogue.privateKey } })), 400, "ENUMERATION_CAF_INVALID");
    // changing the authorised range breaks the SII signature over DA
    const good = new TextDecoder("latin1").decode(await cafFile(rut, 56, 1, 10));
    expectError(await upload(new TextEncoder().encode(good.replace("<H>10</H>", "<H>99</H>"))), 400, "ENUMERATION_CAF_INVALID");
    expectError(await upload(new TextEncoder().encode("not xml at all")), 400, "ENUMERATION_CAF_INVALID");
    expectError(await upload(new TextEncoder().encode("<AUTORIZACION><CAF/></AUTORIZACION>")), 400, "ENUMERATION_CAF_INVALID");
    expect(await list()).toEqual(before);
  });

  it("a missing file part is 400 and a non-multipart body 415; MEMBER keys may list but not upload", async () => {
    const empty = new FormData();
    empty.append("nothing", "x");
    expectError(await call("POST", `/api/companies/${companyId}/enumeration/upload`, { key: owner.key, body: empty }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", `/api/companies/${companyId}/enumeration/upload`, { key: owner.key, json: { file: "x" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const member = await newKey(owner.clientId, "MEMBER");
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key });
    expect((await call("GET", `/api/companies/${companyId}/enumeration/list`, { key: member.key })).status).toBe(200);
    expectError(await call("POST", `/api/companies/${companyId}/enumeration/upload`, { key: member.key, body: cafForm(await cafFile(rut, 52, 1, 5)) }), 403, "AUTH_ROLE_FORBIDDEN");
  });
});

describe("set next folio (§3 rules, §4.7) with ranges 1-100 and 201-300", () => {
  const put = (type: string, n: unknown, company = companyId) =>
    call("PUT", `/api/companies/${company}/enumeration/document-type/${type}/next-folio`, { key: owner.key, json: { next_folio_number: n } });
  const state = async () => (await list()).find((d) => d.id_document_type === "33");

  it("without a move, numbering starts at the lowest available folio", async () => {
    expect((await state()).next_folio).toBe(1);
  });

  it("N inside a range: lower folios across all active ranges are marked used", async () => {
    const res = await put("33", 50);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id_document_type: "33", folios_updated: 49, next_number_to_use: 50 });
    expect(typeof res.body.message).toBe("string");
    expect((await state())).toMatchObject({ next_folio: 50, folios_available: 151 });
  });

  it("N in the second range marks the rest of the first range and the lower part of the second", async () => {
    const res = await put("FAC", 250); // mnemonic accepted as document_type_id
    expect(res.body).toMatchObject({ folios_updated: 51 + 49, next_number_to_use: 250 });
    expect((await state()).folios_available).toBe(51);
  });

  it("N already used resolves to the next available folio", async () => {
    const res = await put("33", 220); // below 250: already marked used
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ folios_updated: 0, next_number_to_use: 250 });
  });

  it("N in the gap or outside every range is 400 ENUMERATION_OUT_OF_RANGE and modifies nothing", async () => {
    const before = await state();
    for (const n of [150, 101, 200, 301, 5000]) {
      const res = await put("33", n);
      expectError(res, 400, "ENUMERATION_OUT_OF_RANGE");
    }
    expect(await state()).toEqual(before);
  });

  it("N inside a range with nothing available at or above it is 400 ENUMERATION_NO_FOLIOS_AVAILABLE_FROM, nothing modified", async () => {
    expect((await put("33", 300)).body.next_number_to_use).toBe(300);
    const c = await newCompany(owner);
    const r = (await call("GET", `/api/companies/${c}`, { key: owner.key })).body.tax_identifier;
    await upload(await cafFile(r, 34, 1, 10), c);
    await put("34", 10, c); // folios 1-9 used, 10 next
    const stub = env.FOLIO_ALLOCATOR.get(env.FOLIO_ALLOCATOR.idFromName(`${c}:34`));
    const got = await stub.allocate("doc-final");
    expect(got).toMatchObject({ ok: true, folio: 10 });
    const before = (await list(c))[0];
    expectError(await put("34", 5, c), 400, "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM");
    expect((await list(c))[0]).toEqual(before);
  });

  it("a type without active ranges is 404 ENUMERATION_NOT_FOUND; an unknown type 400; a bad number 400", async () => {
    expectError(await put("61", 1), 404, "ENUMERATION_NOT_FOUND");
    expectError(await put("999", 1), 400, "ENUMERATION_DOCUMENT_TYPE_UNKNOWN");
    for (const bad of [0, -1, 1.5, "7", null]) expectError(await put("33", bad), 400, "VALIDATION_FAILED");
  });
});

describe("alert threshold", () => {
  it("is configurable per document type and restorable to the default", async () => {
    const path = `/api/companies/${companyId}/enumeration/document-type/39/alert-threshold`;
    const set = await call("PUT", path, { key: owner.key, json: { alert_threshold: 20 } });
    expect(set.body).toEqual({ id_document_type: "39", alert_threshold: 20, alert_threshold_is_default: false, livemode: false });
    expect((await list()).find((d) => d.id_document_type === "39").alert_threshold).toBe(20);
    const reset = await call("PUT", path, { key: owner.key, json: { alert_threshold: null } });
    expect(reset.body).toMatchObject({ alert_threshold: 5, alert_threshold_is_default: true });
    expectError(await call("PUT", path, { key: owner.key, json: { alert_threshold: -1 } }), 400, "VALIDATION_FAILED");
  });
});

describe("CAF from the tax authority", () => {
  it("the simulator grants a CAF file (DECISIONS 18) that uploads like a portal download", async () => {
    const c = await newCompany(owner);
    const r = (await call("GET", `/api/companies/${c}`, { key: owner.key })).body.tax_identifier;
    const res = await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: r, document_type: 33, from: 1, to: 100 } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/xml; charset=ISO-8859-1");
    const bytes = new Uint8Array(await res.raw.arrayBuffer());
    expect(new TextDecoder("latin1").decode(bytes)).toMatch(/^<\?xml version="1.0" encoding="ISO-8859-1"\?>/);
    expect((await upload(bytes, c)).status).toBe(201);
    expectError(await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: r, document_type: 33, from: 50, to: 150 } }), 409, "SIMULATOR_CAF_OVERLAP");
    expectError(await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: "76086428-4", document_type: 33, from: 1, to: 2 } }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: r, document_type: 35, from: 1, to: 2 } }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: r, document_type: 33, from: 10, to: 2 } }), 400, "VALIDATION_FAILED");
    // A test key gets CAFs only for its own test companies; outside local development no key finds nothing.
    expectError(await call("POST", "/simulator/sii/caf", { key: owner.key, json: { rut: nextRut(), document_type: 33, from: 1, to: 2 } }), 403, "SIMULATOR_RUT_NOT_OWNED");
    expectError(await call("POST", "/simulator/sii/caf", { json: { rut: r, document_type: 33, from: 200, to: 201 } }), 404, "ROUTE_NOT_FOUND");
  });

  it("refetch asks the simulated SII for the next folios and loads them", async () => {
    const c = await newCompany(owner);
    const path = `/api/companies/${c}/enumeration/refetch`;
    const first = await call("POST", path, { key: owner.key, json: { document_type: "NCV", quantity: 25 } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ id_document_type: "61", enumeration_from: 1, enumeration_end: 25, source: "AUTHORITY", available: 25 });
    const second = await call("POST", path, { key: owner.key, json: { document_type: "61", quantity: 10 } });
    expect(second.body).toMatchObject({ enumeration_from: 26, enumeration_end: 35 });
    expect((await list(c))[0].folios_available).toBe(35);
    expectError(await call("POST", path, { key: owner.key, json: { document_type: "XYZ", quantity: 10 } }), 400, "ENUMERATION_DOCUMENT_TYPE_UNKNOWN");
    expectError(await call("POST", path, { key: owner.key, json: { document_type: "33", quantity: 0 } }), 400, "VALIDATION_FAILED");
  });

  it("against the real SII (a live company), refetch is a clear 'not supported' error", async () => {
    const company = (await findCompanyForClient(createDb(env.DB), companyId))!;
    for (const mode of ["certification", "production"]) {
      const err = await refetchCaf(createDb(env.DB), { ...env, SII_MODE: mode }, { ...company, livemode: true }, { document_type: "33", quantity: 10 }).catch((e) => e);
      expect(err.code).toBe("ENUMERATION_REFETCH_NOT_SUPPORTED");
      expect(err.message).toContain("portal");
    }
  });

  it("a foreign company cannot load Chilean CAFs", async () => {
    const c = await newCompany(owner, { country: "ARG", tax_identification_document_code: "CUIT", tax_identification_document_number: "20123456789" });
    expectError(await upload(await cafFile(rut, 33, 5000, 5010), c), 400, "ENUMERATION_CAF_WRONG_COMPANY");
  });
});
