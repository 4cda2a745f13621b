import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, companyBody, expectError, newCompany, newKey, newOwner, nextRut, type Actor } from "../helpers/api";

let owner: Actor;
beforeAll(async () => {
  owner = await newOwner("Companies");
});

describe("POST /api/companies", () => {
  it("creates a company: 201 with id_company and id", async () => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody() });
    expect(res.status).toBe(201);
    expect(res.body.id_company).toMatch(/^cmp_[0-9A-Z]{26}$/);
    expect(res.body.id).toBe(res.body.id_company);
  });

  it.each([
    ["760864285", "76086428-5"],
    ["76086428-5", "76086428-5"],
    ["76.086.428-5", "76086428-5"],
    ["76369187-k", "76369187-K"],
    ["76.369.187-K", "76369187-K"],
  ])("accepts the tax id form %s and stores %s", async (input, canonical) => {
    const actor = await newOwner();
    const id = await newCompany(actor, { tax_identification_document_number: input });
    const got = await call("GET", `/api/companies/${id}`, { key: actor.key });
    expect(got.body.tax_identifier).toBe(canonical);
  });

  it.each([["CHL"], ["chl"], ["CL"], ["cl"], ["Chl"]])("accepts the country form %s and stores CHL", async (country) => {
    const actor = await newOwner();
    const id = await newCompany(actor, { country });
    const got = await call("GET", `/api/companies/${id}`, { key: actor.key });
    expect(got.body.country_iso3).toBe("CHL");
    expect(got.body.country_name).toBe("Chile");
  });

  it("accepts a foreign company with a digits-only number", async () => {
    const id = await newCompany(owner, { country: "AR", tax_identification_document_code: "CUIT", tax_identification_document_number: "20123456789" });
    const got = await call("GET", `/api/companies/${id}`, { key: owner.key });
    expect(got.body).toMatchObject({ country_iso3: "ARG", country_name: "Argentina", tax_identifier: "20123456789", tax_identification_document_code: "CUIT" });
  });

  it("legal_name: 255 characters accepted, 256 and empty rejected", async () => {
    expect((await call("POST", "/api/companies", { key: owner.key, json: companyBody({ legal_name: "A".repeat(255) }) })).status).toBe(201);
    const long = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ legal_name: "A".repeat(256) }) });
    expectError(long, 400, "VALIDATION_FAILED");
    expect(long.body.error.details).toEqual([{ field: "legal_name", message: "At most 255 characters" }]);
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ legal_name: "" }) }), 400, "VALIDATION_FAILED");
  });

  it("tax_identification_document_code: 10 characters is the limit", async () => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_code: "ABCDEFGHIJK" }) });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details[0].field).toBe("tax_identification_document_code");
    const unknown = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_code: "ABCDEFGHIJ" }) });
    expectError(unknown, 400, "COMPANY_DOCUMENT_CODE_UNKNOWN");
    expect(unknown.body.error.message).toContain("RUT");
  });

  it("tax id number: 4 and 20 digits accepted, 3 and 21 rejected (foreign)", async () => {
    const base = { country: "ARG", tax_identification_document_code: "CUIT" };
    expect((await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "1234" }) })).status).toBe(201);
    expect((await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "1".repeat(20) }) })).status).toBe(201);
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "123" }) }), 400, "COMPANY_TAX_ID_INVALID");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "1".repeat(21) }) }), 400, "COMPANY_TAX_ID_INVALID");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "-1234" }) }), 400, "COMPANY_TAX_ID_INVALID");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ ...base, tax_identification_document_number: "12a45" }) }), 400, "COMPANY_TAX_ID_INVALID");
  });

  it("RUT: 4 characters is the shortest accepted, a wrong check digit names the right one", async () => {
    // 100-7 is a valid RUT with 4 characters (3 digits + check digit); 10-8 is valid but has 3.
    expect((await call("POST", "/api/companies", { key: (await newOwner()).key, json: companyBody({ tax_identification_document_number: "100-7" }) })).status).toBe(201);
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_number: "10-8" }) }), 400, "COMPANY_TAX_ID_INVALID");
    const wrong = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_number: "76086428-4" }) });
    expectError(wrong, 400, "COMPANY_TAX_ID_INVALID");
    expect(wrong.body.error.message).toContain("is 5, not 4");
    expect(wrong.body.error.details[0].field).toBe("tax_identification_document_number");
  });

  it("country: unknown codes and 4 characters are rejected", async () => {
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ country: "XX" }) }), 400, "COMPANY_COUNTRY_UNKNOWN");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ country: "XXX" }) }), 400, "COMPANY_COUNTRY_UNKNOWN");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ country: "CHLE" }) }), 400, "VALIDATION_FAILED");
  });

  it.each(["2019-02-30", "2019-13-01", "2019-3-1", "01-03-2019", "2019-03-01T00:00:00", ""])("start_activities_date %j is rejected", async (d) => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ start_activities_date: d }) });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details[0].field).toBe("start_activities_date");
  });

  it("leap day is a real date", async () => {
    expect((await call("POST", "/api/companies", { key: owner.key, json: companyBody({ start_activities_date: "2020-02-29" }) })).status).toBe(201);
  });

  it("missing fields are each named", async () => {
    const res = await call("POST", "/api/companies", { key: owner.key, json: {} });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(
      ["country", "legal_name", "start_activities_date", "tax_identification_document_code", "tax_identification_document_number"].sort(),
    );
  });

  it("a duplicate active tax id for the same client is 409, in any form; another client may use it", async () => {
    const rut = nextRut();
    await newCompany(owner, { tax_identification_document_number: rut });
    const dotted = rut.replace(/^(\d{2})(\d{3})(\d{3})/, "$1.$2.$3");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_number: dotted }) }), 409, "COMPANY_TAX_ID_TAKEN");
    const other = await newOwner();
    expect((await call("POST", "/api/companies", { key: other.key, json: companyBody({ tax_identification_document_number: rut }) })).status).toBe(201);
  });

  it("a deleted company's tax id can be registered again", async () => {
    const rut = nextRut();
    const id = await newCompany(owner, { tax_identification_document_number: rut });
    expect((await call("DELETE", `/api/companies/${id}`, { key: owner.key })).status).toBe(200);
    expect((await call("POST", "/api/companies", { key: owner.key, json: companyBody({ tax_identification_document_number: rut }) })).status).toBe(201);
  });

  it("a MEMBER key may not create companies", async () => {
    const member = await newKey(owner.clientId, "MEMBER");
    expectError(await call("POST", "/api/companies", { key: member.key, json: companyBody() }), 403, "AUTH_ROLE_FORBIDDEN");
  });

  it("a company created by one key is reachable by every OWNER and ADMIN key of the client", async () => {
    const admin = await newKey(owner.clientId, "ADMIN");
    const id = await newCompany(admin);
    const other = await newKey(owner.clientId, "OWNER");
    expect((await call("GET", `/api/companies/${id}`, { key: other.key })).status).toBe(200);
    const me = await call("GET", "/api/me", { key: other.key });
    expect(me.body.accessibleCompanyIds).toContain(id);
  });
});

describe("Idempotency-Key", () => {
  it("replays the first response without creating twice; another body is 409", async () => {
    const body = companyBody();
    const headers = { "Idempotency-Key": `create-${crypto.randomUUID()}` };
    const first = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    const again = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    const listed = await call("GET", `/api/companies?tax_identifier=${body.tax_identification_document_number}`, { key: owner.key });
    expect(listed.body.total).toBe(1);
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody(), headers }), 409, "IDEMPOTENCY_KEY_REUSED");
  });

  it("a failed request can be retried with the same key", async () => {
    const headers = { "Idempotency-Key": `retry-${crypto.randomUUID()}` };
    const bad = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ country: "ZZ" }), headers });
    expectError(bad, 400, "COMPANY_COUNTRY_UNKNOWN");
    const body = companyBody();
    expectError(await call("POST", "/api/companies", { key: owner.key, json: body, headers: { "Idempotency-Key": "bad key with spaces" } }), 400, "IDEMPOTENCY_KEY_INVALID");
    // The failed attempt released the key: a corrected request with the same key is processed.
    expect((await call("POST", "/api/companies", { key: owner.key, json: body, headers })).status).toBe(201);
  });

  it("a body refused by validation gives the key back: the corrected request with the same key is processed", async () => {
    const headers = { "Idempotency-Key": `invalid-${crypto.randomUUID()}` };
    const { legal_name: _, ...incomplete } = companyBody();
    const refused = await call("POST", "/api/companies", { key: owner.key, json: incomplete, headers });
    expectError(refused, 400, "VALIDATION_FAILED");
    expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
    const malformed = await call("POST", "/api/companies", { key: owner.key, body: "{not json", headers: { ...headers, "Content-Type": "application/json" } });
    expect(malformed.status).toBe(400);
    const body = companyBody();
    const created = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const again = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.id).toBe(created.body.id);
  });

  it("keys are per client", async () => {
    const headers = { "Idempotency-Key": `shared-${crypto.randomUUID()}` };
    const a = await call("POST", "/api/companies", { key: owner.key, json: companyBody(), headers });
    const b = await call("POST", "/api/companies", { key: (await newOwner()).key, json: companyBody(), headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });
});

describe("GET /api/companies", () => {
  let lister: Actor;
  const ids: string[] = [];
  beforeAll(async () => {
    lister = await newOwner("Lister");
    for (let i = 0; i < 45; i++) {
      ids.push(await newCompany(lister, { legal_name: i % 3 === 0 ? `Panadería Ñuñoa ${i}` : `Ferretería ${i}` }));
    }
  });

  it("pages with the spec envelope in a stable order", async () => {
    const p1 = await call("GET", "/api/companies", { key: lister.key });
    expect(p1.body).toMatchObject({ current_page: 1, per_page: 20, total: 45, last_page: 3 });
    expect(p1.body.data).toHaveLength(20);
    const p3 = await call("GET", "/api/companies?page=3&per_page=20", { key: lister.key });
    expect(p3.body.data).toHaveLength(5);
    const all = [];
    for (let page = 1; page <= 3; page++) all.push(...(await call("GET", `/api/companies?page=${page}`, { key: lister.key })).body.data);
    expect(all.map((c: { id: string }) => c.id)).toEqual(ids);
  });

  it("page edges: beyond the last page is empty; page 0, negative, non-numeric and per_page over 100 are 400", async () => {
    const beyond = await call("GET", "/api/companies?page=4", { key: lister.key });
    expect(beyond.status).toBe(200);
    expect(beyond.body).toMatchObject({ data: [], current_page: 4, total: 45, last_page: 3 });
    for (const q of ["page=0", "page=-1", "page=abc", "page=1.5", "per_page=0", "per_page=101", "per_page=x"]) {
      const res = await call("GET", `/api/companies?${q}`, { key: lister.key });
      expectError(res, 400, "VALIDATION_FAILED");
      expect(res.body.error.details[0].field).toBe(q.split("=")[0]);
    }
    const max = await call("GET", "/api/companies?per_page=100", { key: lister.key });
    expect(max.body.data).toHaveLength(45);
    expect(max.body.last_page).toBe(1);
  });

  it("filters by legal name: contains, case- and accent-insensitive", async () => {
    const total = async (q: string) => (await call("GET", `/api/companies?legal_name=${encodeURIComponent(q)}&per_page=100`, { key: lister.key })).body.total;
    expect(await total("Panadería Ñuñoa")).toBe(15);
    expect(await total("panadería ñ")).toBe(15);
    expect(await total("PANADERIA NUNOA")).toBe(15);
    expect(await total("ñuño")).toBe(15);
    expect(await total("ferreter")).toBe(30);
    expect(await total("ería")).toBe(45);
    expect(await total("%")).toBe(0);
    expect(await total("_")).toBe(0);
    expect(await total("Carnicería")).toBe(0);
  });

  it("filters by tax identifier in any accepted form", async () => {
    const rut = nextRut();
    const id = await newCompany(lister, { tax_identification_document_number: rut });
    const [body, dv] = rut.split("-");
    const dotted = body!.replace(/^(\d{2})(\d{3})(\d{3})$/, "$1.$2.$3");
    for (const form of [rut, `${body}${dv}`, `${dotted}-${dv}`, `${body}-${dv!.toLowerCase()}`]) {
      const res = await call("GET", `/api/companies?tax_identifier=${encodeURIComponent(form)}`, { key: lister.key });
      expect(res.body.data.map((c: { id: string }) => c.id), form).toEqual([id]);
    }
  });

  it("only lists the client's companies; MEMBER keys see granted ones only", async () => {
    const other = await newOwner();
    expect((await call("GET", "/api/companies", { key: other.key })).body.total).toBe(0);
    const member = await newKey(lister.clientId, "MEMBER");
    expect((await call("GET", "/api/companies", { key: member.key })).body.total).toBe(0);
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${ids[2]}`, { key: lister.key });
    const seen = await call("GET", "/api/companies", { key: member.key });
    expect(seen.body.data.map((c: { id: string }) => c.id)).toEqual([ids[2]]);
  });

  it("an invalid status filter is 400", async () => {
    expectError(await call("GET", "/api/companies?status=GONE", { key: lister.key }), 400, "VALIDATION_FAILED");
  });

  it("created_at is local time in the company's time zone, without offset", async () => {
    const res = await call("GET", `/api/companies/${ids[0]}`, { key: lister.key });
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    const utc = new Date(`${res.body.created_at}Z`).getTime();
    // Santiago is 3 or 4 hours behind UTC.
    const diffHours = Math.round((Date.now() - utc) / 3_600_000);
    expect([3, 4]).toContain(diffHours);
  });
});

describe("DELETE /api/companies/{idCompany} (soft delete)", () => {
  it("marks DELETED, hides it from lists, 404s afterwards, keeps the data", async () => {
    const actor = await newOwner();
    const id = await newCompany(actor, { legal_name: "Borrar Ltda" });
    const del = await call("DELETE", `/api/companies/${id}?apiKey=ignored`, { key: actor.key });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id, status: "DELETED" });
    expect((await call("GET", "/api/companies", { key: actor.key })).body.total).toBe(0);
    const deleted = await call("GET", "/api/companies?status=DELETED", { key: actor.key });
    expect(deleted.body.data).toHaveLength(1);
    expect(deleted.body.data[0]).toMatchObject({ id, legal_name: "Borrar Ltda", status: "DELETED" });
    expectError(await call("GET", `/api/companies/${id}`, { key: actor.key }), 404, "COMPANY_NOT_FOUND");
    expectError(await call("GET", `/api/companies/${id}/settings`, { key: actor.key }), 404, "COMPANY_NOT_FOUND");
    expectError(await call("DELETE", `/api/companies/${id}`, { key: actor.key }), 404, "COMPANY_NOT_FOUND");
    expectError(await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_places: 2 } }), 404, "COMPANY_NOT_FOUND");
    const row = await env.DB.prepare("SELECT status, legal_name, deleted_at FROM companies WHERE id = ?").bind(id).first<{ status: string; legal_name: string; deleted_at: string }>();
    expect(row).toMatchObject({ status: "DELETED", legal_name: "Borrar Ltda" });
    expect(row!.deleted_at).toMatch(/^\d{4}-/);
    const settings = await env.DB.prepare("SELECT count(*) AS n FROM company_settings WHERE company_id = ?").bind(id).first<{ n: number }>();
    expect(settings!.n).toBe(1);
  });

  it("only OWNER keys delete; an unknown id and someone else's answer the same 403", async () => {
    const actor = await newOwner();
    const id = await newCompany(actor);
    const admin = await newKey(actor.clientId, "ADMIN");
    expectError(await call("DELETE", `/api/companies/${id}`, { key: admin.key }), 403, "AUTH_ROLE_FORBIDDEN");
    expectError(await call("DELETE", `/api/companies/cmp_01J00000000000000000000000`, { key: actor.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expectError(await call("DELETE", `/api/companies/${id}`, { key: (await newOwner()).key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expect((await call("GET", `/api/companies/${id}`, { key: actor.key })).body.status).toBe("ACTIVE");
  });
});

describe("company settings", () => {
  let actor: Actor;
  let id: string;
  beforeAll(async () => {
    actor = await newOwner();
    id = await newCompany(actor);
  });

  it("has the documented defaults", async () => {
    const res = await call("GET", `/api/companies/${id}/settings`, { key: actor.key });
    expect(res.body).toMatchObject({
      id_company: id, decimal_places: 0, thousand_separator: ".", decimal_separator: ",", language: "es-CL", time_zone: "America/Santiago", logo: null,
    });
    expect(res.body.id).toMatch(/^set_/);
  });

  it("updates partially and canonicalises the language tag", async () => {
    const res = await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_places: 4, thousand_separator: ",", decimal_separator: ".", language: "en-us", time_zone: "Europe/Madrid" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ decimal_places: 4, thousand_separator: ",", decimal_separator: ".", language: "en-US", time_zone: "Europe/Madrid" });
    const again = await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_places: 0 } });
    expect(again.body).toMatchObject({ decimal_places: 0, thousand_separator: ",", language: "en-US" });
    expect((await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body.time_zone).toBe("Europe/Madrid");
  });

  it.each([
    [{ decimal_places: 5 }, "decimal_places"],
    [{ decimal_places: -1 }, "decimal_places"],
    [{ decimal_places: 1.5 }, "decimal_places"],
    [{ thousand_separator: " " }, "thousand_separator"],
    [{ decimal_separator: ";" }, "decimal_separator"],
    [{ language: "not a tag!" }, "language"],
    [{ language: "e" }, "language"],
    [{ time_zone: "Mars/Olympus" }, "time_zone"],
    [{ time_zone: "../../etc" }, "time_zone"],
    [{ colour: "red" }, "colour"], // unknown fields are named
  ])("rejects %j naming %s", async (patch, field) => {
    const before = (await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body;
    const res = await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: patch });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details[0].field).toBe(field);
    expect((await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body).toEqual(before);
  });

  it("decimal_places 0 and 4 are the edges", async () => {
    expect((await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_places: 4 } })).status).toBe(200);
    expect((await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_places: 0 } })).status).toBe(200);
  });

  it("separators may not be equal, also when only one changes", async () => {
    await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { thousand_separator: ".", decimal_separator: "," } });
    const res = await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { decimal_separator: "." } });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details[0]).toMatchObject({ field: "decimal_separator" });
    expectError(await call("PATCH", `/api/companies/${id}/settings`, { key: actor.key, json: { thousand_separator: ",", decimal_separator: "," } }), 400, "VALIDATION_FAILED");
  });

  it("MEMBER keys may read but not change settings", async () => {
    const member = await newKey(actor.clientId, "MEMBER");
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${id}`, { key: actor.key });
    expect((await call("GET", `/api/companies/${id}/settings`, { key: member.key })).status).toBe(200);
    expectError(await call("PATCH", `/api/companies/${id}/settings`, { key: member.key, json: { decimal_places: 2 } }), 403, "AUTH_ROLE_FORBIDDEN");
  });
});

const PNG_1x1 = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));
/** A real 2 x 2 baseline JPEG (made with sharp). */
const JPEG_HEAD = Uint8Array.from(
  atob("/9j/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAACAAIDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAf/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABgf/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCTADC6v//Z"),
  (c) => c.charCodeAt(0),
);

function logoForm(bytes: Uint8Array, name: string, type: string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append("logo", new File([bytes as Uint8Array<ArrayBuffer>], name, { type }));
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  return form;
}

describe("POST /api/companies/{idCompany}/logo", () => {
  let actor: Actor;
  let id: string;
  beforeAll(async () => {
    actor = await newOwner();
    id = await newCompany(actor);
  });

  it("stores a PNG, serves it at file_url and records it in settings", async () => {
    const res = await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(PNG_1x1, "logo.png", "image/png", { apiKey: "{}" }) });
    expect(res.status).toBe(201);
    expect(res.body.file_url).toMatch(new RegExp(`^http://localhost/files/logos/${id}/lgo_[0-9A-Z]{26}\\.png$`));
    const file = await call("GET", new URL(res.body.file_url).pathname);
    expect(file.status).toBe(200);
    expect(file.headers.get("Content-Type")).toBe("image/png");
    expect(new Uint8Array(await file.raw.arrayBuffer())).toEqual(PNG_1x1);
    expect((await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body.logo).toBe(res.body.file_url);
  });

  it("detects JPEG from the bytes even when declared as something else", async () => {
    const res = await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(JPEG_HEAD, "photo.txt", "text/plain") });
    expect(res.status).toBe(201);
    expect(res.body.file_url).toMatch(/\.jpg$/);
  });

  it("rejects a text file renamed to .png, keeping the previous logo", async () => {
    const before = (await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body.logo;
    const res = await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(new TextEncoder().encode("just some text, not an image"), "logo.png", "image/png") });
    expectError(res, 400, "LOGO_INVALID_FORMAT");
    expect((await call("GET", `/api/companies/${id}/settings`, { key: actor.key })).body.logo).toBe(before);
  });

  it("accepts exactly 1 MiB and rejects one byte more", async () => {
    const exact = new Uint8Array(1024 * 1024);
    exact.set(PNG_1x1);
    expect((await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(exact, "big.png", "image/png") })).status).toBe(201);
    const over = new Uint8Array(1024 * 1024 + 1);
    over.set(PNG_1x1);
    expectError(await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(over, "big.png", "image/png") }), 413, "LOGO_TOO_LARGE");
  });

  it("a body over the global limit is 413 PAYLOAD_TOO_LARGE", async () => {
    const huge = new Uint8Array(3 * 1024 * 1024);
    huge.set(PNG_1x1);
    expectError(await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: logoForm(huge, "huge.png", "image/png") }), 413, "PAYLOAD_TOO_LARGE");
  });

  it("a missing part, a non-file part and JSON are rejected", async () => {
    const empty = new FormData();
    empty.append("other", "x");
    expectError(await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: empty }), 400, "VALIDATION_FAILED");
    const text = new FormData();
    text.append("logo", "not a file");
    expectError(await call("POST", `/api/companies/${id}/logo`, { key: actor.key, body: text }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", `/api/companies/${id}/logo`, { key: actor.key, json: { logo: "x" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("an unknown logo file is 404", async () => {
    expectError(await call("GET", `/files/logos/${id}/lgo_01J00000000000000000000000.png`), 404, "LOGO_NOT_FOUND");
  });
});
