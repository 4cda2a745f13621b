import { beforeAll, describe, expect, it } from "vitest";
import { CHILE } from "../../src/countries/cl/catalogs";
import { call, expectError, newKey, newOwner, type Actor } from "../helpers/api";

let owner: Actor;
let member: Actor;
beforeAll(async () => {
  owner = await newOwner("Catalogs");
  member = await newKey(owner.clientId, "MEMBER");
});

const get = (path: string, key = owner.key, headers: Record<string, string> = {}) => call("GET", path, { key, headers });

describe("every catalog endpoint", () => {
  it.each(CHILE.catalogs.map((c) => [c.slug, c.entries.length] as const))("GET /api/catalogs/CL/%s lists all %i entries over its pages", async (slug, count) => {
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const res = await get(`/api/catalogs/CL/${slug}?per_page=100&page=${page}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.total).toBe(count);
      expect(res.body.catalog.country).toBe("CHL");
      seen.push(...res.body.data.map((e: { code: string }) => e.code));
      if (page >= res.body.last_page) break;
    }
    expect(seen.length).toBe(count);
    expect(new Set(seen).size).toBe(count);
  });
});

describe("the catalog index", () => {
  it("GET /api/catalogs lists each country with its catalogs, their paths, sizes and sources", async () => {
    const res = await get("/api/catalogs");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ current_page: 1, total: 1, last_page: 1 });
    const [cl] = res.body.data;
    expect(cl).toMatchObject({ country: "CHL", alpha2: "CL", path: "/api/catalogs/CHL" });
    expect(cl.catalogs.map((k: { slug: string }) => k.slug)).toEqual(CHILE.catalogs.map((k) => k.slug));
    for (const k of cl.catalogs) {
      const own = CHILE.catalogs.find((c) => c.slug === k.slug)!;
      expect(k).toEqual({ slug: own.slug, title: own.title, description: own.description, path: `/api/catalogs/CHL/${own.slug}`, total: own.entries.length, source: own.source });
    }
    expect(cl.lookups).toEqual([expect.objectContaining({ name: "taxpayers", path: "/api/catalogs/CHL/taxpayers/{tax_id}" })]);
    // Every path it names answers.
    const listed = await get(cl.catalogs.find((k: { slug: string }) => k.slug === "legal-activities").path);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(CHILE.catalogs.find((k) => k.slug === "legal-activities")!.entries.length);
  });

  it("GET /api/catalogs/{country} answers one country's index by alpha-2 or alpha-3; an unknown country is 404 in the envelope", async () => {
    const all = await get("/api/catalogs");
    for (const code of ["CL", "chl"]) {
      const res = await get(`/api/catalogs/${code}`);
      expect(res.status).toBe(200);
      const { livemode, ...index } = res.body;
      expect(livemode).toBe(false); // the key's mode, as on every answer
      expect(index).toEqual(all.body.data[0]);
    }
    expectError(await get("/api/catalogs/PE"), 404, "CATALOG_COUNTRY_NOT_SUPPORTED");
    const etag = (await call("GET", "/api/catalogs/CL", { key: owner.key })).headers.get("etag")!;
    expect((await get("/api/catalogs/CL", owner.key, { "If-None-Match": etag })).status).toBe(304);
  });

  it("needs a key, and a member's key reads it", async () => {
    expectError(await call("GET", "/api/catalogs", {}), 401, "AUTH_MISSING_API_KEY");
    expect((await get("/api/catalogs", member.key)).status).toBe(200);
  });

  it("ranks exact and prefix matches first", async () => {
    const names = async (slug: string, q: string) => (await get(`/api/catalogs/CL/${slug}?q=${encodeURIComponent(q)}&per_page=100`)).body.data.map((e: { name: string }) => e.name) as string[];
    expect((await names("communes", "nunoa"))[0]).toBe("ÑUÑOA");
    const santiago = await names("communes", "santiago");
    expect(santiago[0]).toBe("SANTIAGO");
    expect(santiago.length).toBeGreaterThan(1);
    const valpo = await names("communes", "valpa");
    expect(valpo[0]).toBe("VALPARAÍSO");
  });
});

describe("GET /api/catalogs/{country}/…", () => {
  it("pages with the list envelope", async () => {
    const res = await get("/api/catalogs/CHL/additional-export-info/ports?per_page=7&page=2");
    expect(res.body.per_page).toBe(7);
    expect(res.body.current_page).toBe(2);
    expect(res.body.data).toHaveLength(7);
    expect(res.body.last_page).toBe(Math.ceil(res.body.total / 7));
    const past = await get(`/api/catalogs/CHL/additional-export-info/ports?per_page=7&page=${res.body.last_page + 1}`);
    expect(past.body.data).toEqual([]);
  });

  it("filters by exact code, case-insensitively", async () => {
    const res = await get("/api/catalogs/cl/measurement-units?code=kn");
    expect(res.body.data).toEqual([{ code: "KN", name: "KN", attributes: { customs_code: 6 } }]);
    const tax = await get("/api/catalogs/CL/tax-types?code=271");
    expect(tax.body.data[0]).toMatchObject({ code: "271", attributes: { rate: "18", retention: false, supported: true } });
    const ret = await get("/api/catalogs/CL/tax-types?code=15");
    expect(ret.body.data[0].attributes).toMatchObject({ rate: "19", retention: true });
  });

  it("filters by text without regard to accents or case", async () => {
    const a = await get("/api/catalogs/CL/communes?code=13120");
    expect(a.body.data.map((e: { name: string }) => e.name)).toEqual(["ÑUÑOA"]);
    const served = await get("/api/catalogs/CL/communes?q=NUNOA");
    // By name or SII unit; the commune named so first, then the others in the catalog's order.
    expect(served.body.data.map((e: { name: string }) => e.name)).toEqual(["ÑUÑOA", ...["LA REINA", "MACUL", "PEÑALOLÉN"].filter((n) => served.body.data.some((e: { name: string }) => e.name === n))]);
    expect(served.body.data).toHaveLength(4);
    expect(a.body.data[0].attributes).toEqual({ sii_office: "ÑUÑOA", region_code: "13", aliases: [] });
    const alias = await get("/api/catalogs/CL/communes?q=san%20francisco%20de%20mostazal");
    expect(alias.body.data.map((e: { code: string; name: string }) => [e.code, e.name])).toEqual([["06110", "MOSTAZAL"]]); // the SII's spelling finds the official name
    const b = await get(`/api/catalogs/CL/communes?q=${encodeURIComponent("VALPARAÍSO")}`);
    const c = await get("/api/catalogs/CL/communes?q=valparaiso");
    expect(b.body.data).toEqual(c.body.data);
    expect(c.body.total).toBeGreaterThanOrEqual(4); // the communes the Valparaíso unit serves
    const words = await get("/api/catalogs/CL/legal-activities?q=gestion%20de%20INSTALACIONES%20informaticas");
    expect(words.body.data.map((e: { code: string }) => e.code)).toEqual(["620200"]);
    expect(words.body.data[0].attributes).toMatchObject({ vat: "affected", tax_category: "first", online: true, section: "INFORMACIÓN Y COMUNICACIONES" });
    const none = await get("/api/catalogs/CL/currencies?q=zzzz");
    expect(none.body).toMatchObject({ data: [], total: 0, last_page: 1 });
  });

  it("carries the document types' cancellation and acceptance facts", async () => {
    const res = await get("/api/catalogs/CL/document-types?code=33");
    expect(res.body.data[0].attributes).toMatchObject({ mnemonic: "FAC", cancellable: true, cancelled_by: [61], eight_day_acceptance: true });
    const fee = await get("/api/catalogs/CL/document-types?code=110");
    expect(fee.body.data[0].attributes).toMatchObject({ cancelled_by: [112], eight_day_acceptance: false });
    const reasons = await get("/api/catalogs/CL/document-cancellation-reasons");
    expect(reasons.body.data.map((e: any) => [e.code, e.attributes.cod_ref])).toEqual([["ANU", 1], ["COT", 2], ["COM", 3]]);
  });

  it("serves the complete official tables with their source and date", async () => {
    const acts = await get("/api/catalogs/CL/legal-activities?per_page=1");
    expect(acts.body.total).toBe(674);
    expect(acts.body.catalog.source).toMatchObject({ complete: true, date: "2018-11-01" });
    expect(acts.body.catalog.source.document).toMatch(/^SII, Códigos de actividad económica/);
    const notary = await get("/api/catalogs/CL/legal-activities?code=691002");
    expect(notary.body.data[0]).toEqual({
      code: "691002", name: "SERVICIO NOTARIAL",
      attributes: { vat: "not_affected", tax_category: "second", online: false, section: "ACTIVIDADES PROFESIONALES, CIENTIFICAS Y TÉCNICAS", group: expect.any(String) },
    });
    const programming = await get("/api/catalogs/CL/legal-activities?code=620100");
    expect(programming.body.data[0].attributes).toMatchObject({ vat: "depends", tax_category: "depends" }); // the SII's "G"
    const communes = await get("/api/catalogs/CL/communes?per_page=1");
    expect(communes.body.total).toBe(346);
    expect(communes.body.catalog.source.complete).toBe(true);
    const ports = await get("/api/catalogs/CL/additional-export-info/ports");
    expect(ports.body.catalog.source.complete).toBe(true);
  });

  it("answers ETag and Cache-Control, and 304 to a matching If-None-Match", async () => {
    const first = await get("/api/catalogs/CL/currencies?code=USD");
    const etag = first.headers.get("ETag")!;
    expect(etag).toMatch(/^"[0-9a-f]{24}"$/);
    expect(first.headers.get("Cache-Control")).toBe("public, max-age=3600, stale-while-revalidate=86400");
    expect(first.body.data[0]).toEqual({ code: "USD", name: "DOLAR USA", attributes: { customs_code: "13" } });
    const again = await get("/api/catalogs/CL/currencies?code=USD", owner.key, { "If-None-Match": etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    const weakList = await get("/api/catalogs/CL/currencies?code=USD", owner.key, { "If-None-Match": `"other", W/${etag}` });
    expect(weakList.status).toBe(304);
    const otherPage = await get("/api/catalogs/CL/currencies?code=EUR", owner.key, { "If-None-Match": etag });
    expect(otherPage.status).toBe(200);
    expect(otherPage.headers.get("ETag")).not.toBe(etag);
  });

  it("is readable by every role", async () => {
    const res = await get("/api/catalogs/CL/regions", member.key);
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toEqual({ code: "1", name: "Tarapacá", attributes: { roman: "I" } });
  });

  it("refuses bad input with our envelope", async () => {
    expectError(await get("/api/catalogs/PE/currencies"), 404, "CATALOG_COUNTRY_NOT_SUPPORTED");
    expectError(await get("/api/catalogs/CL/currencies?per_page=101"), 400, "VALIDATION_FAILED");
    expectError(await get("/api/catalogs/CL/currencies?page=0"), 400, "VALIDATION_FAILED");
    expectError(await call("GET", "/api/catalogs/CL/currencies"), 401, "AUTH_MISSING_API_KEY");
  });
});
