import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, newOwner, nextRut } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

/**
 * A company's issuer profile: set on create or by PATCH, shown on the company, filling the issuer
 * block of a document sent without one, and checked against a block that is sent.
 */
const PROFILE = {
  address: { country: "CL", region: "13", city: "Santiago", commune: "Providencia", address: "Av. Providencia 1234, of. 501" },
  tax_information: { activity: "Desarrollo de software y servicios informáticos", activity_codes: [620200, 631100] },
  email: "facturacion@prueba.cl",
};

let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer([33]);
});

const patch = (body: unknown) => call("PATCH", issuer.base, { key: issuer.owner.key, json: body });

describe("issuer profile", () => {
  it("is set by PATCH, shown on the company, replaced whole and removed with null", async () => {
    const set = await patch({ issuer_profile: PROFILE });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.issuer_profile).toEqual(PROFILE);
    expect((await call("GET", issuer.base, { key: issuer.owner.key })).body.issuer_profile).toEqual(PROFILE);
    const replaced = await patch({ issuer_profile: { email: "otro@prueba.cl" } });
    expect(replaced.body.issuer_profile).toEqual({ email: "otro@prueba.cl" });
    const removed = await patch({ issuer_profile: null });
    expect(removed.body.issuer_profile).toBeNull();
    expect((await call("GET", issuer.base, { key: issuer.owner.key })).body.issuer_profile).toBeNull();
  });

  it("refuses a profile the issuer block could not hold, naming the field", async () => {
    const long = await patch({ issuer_profile: { tax_information: { activity: "x".repeat(81) } } });
    expectError(long, 400, "VALIDATION_FAILED");
    expect(JSON.stringify(long.body.error.details)).toContain("issuer_profile.tax_information.activity");
    const unknown = await patch({ issuer_profile: { document_number: "76086428-5" } });
    expectError(unknown, 400, "VALIDATION_FAILED");
    expectError(await patch({}), 400, "VALIDATION_FAILED");
  });

  it("can be given at creation", async () => {
    const owner = await newOwner("Profiled");
    const created = await call("POST", "/api/companies", {
      key: owner.key,
      json: { legal_name: "PERFIL SPA", tax_identification_document_code: "RUT", tax_identification_document_number: nextRut(), country: "CHL", start_activities_date: "2020-01-01", issuer_profile: PROFILE },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await call("GET", `/api/companies/${created.body.id}`, { key: owner.key })).body.issuer_profile).toEqual(PROFILE);
  });

  it("a document without issuer is issued with the profile, the company's legal name and RUT", async () => {
    expect((await patch({ issuer_profile: PROFILE })).status).toBe(200);
    const { issuer: _sent, ...body } = invoiceBody(issuer.rut, "33");
    const r = await issue(issuer, body);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const done = await untilFinal(issuer, r.body.id);
    expect(done.status).toBe("ACCEPTED");
    const xml = await call("GET", `${issuer.base}/invoices/${r.body.id}/xml`, { key: issuer.owner.key });
    const text = new TextDecoder("latin1").decode(await xml.raw.arrayBuffer());
    expect(text).toContain(`<RUTEmisor>${issuer.rut}</RUTEmisor>`);
    expect(text).toContain("<RznSoc>EMPRESA DE PRUEBA SPA</RznSoc>");
    expect(text).toContain("<GiroEmis>Desarrollo de software y servicios inform\u00e1ticos</GiroEmis>");
    expect(text).toMatch(/<Acteco>620200<\/Acteco>\s*<Acteco>631100<\/Acteco>/);
    expect(text).toMatch(/<DirOrigen>Av. Providencia 1234, of. 501<\/DirOrigen>\s*<CmnaOrigen>Providencia<\/CmnaOrigen>/);
    expect(text).toContain("<CorreoEmisor>facturacion@prueba.cl</CorreoEmisor>");
  });

  it("a sent issuer block that agrees with the profile is issued as sent; one that differs is refused naming each field", async () => {
    expect((await patch({ issuer_profile: PROFILE })).status).toBe(200);
    const agreeing = invoiceBody(issuer.rut, "33");
    agreeing.issuer = { ...agreeing.issuer, address: PROFILE.address, tax_information: { ...agreeing.issuer.tax_information, ...PROFILE.tax_information } };
    const ok = await issue(issuer, agreeing);
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    const differing = invoiceBody(issuer.rut, "33");
    differing.issuer = { ...differing.issuer, address: { ...PROFILE.address, commune: "Las Condes" }, tax_information: { ...differing.issuer.tax_information, activity: "Otra cosa" } };
    const refused = await issue(issuer, differing);
    expectError(refused, 400, "INVOICE_ISSUER_MISMATCH");
    expect(refused.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(["issuer.address.commune", "issuer.tax_information.activity"]);
  });

  it("a batch's rows without issuer take the profile too; a row that disagrees is refused alone", async () => {
    expect((await patch({ issuer_profile: PROFILE })).status).toBe(200);
    const { issuer: _sent, ...without } = invoiceBody(issuer.rut, "33");
    const differing = invoiceBody(issuer.rut, "33");
    differing.issuer = { ...differing.issuer, email: "otro@prueba.cl" };
    const r = await call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, json: { rows: [without, differing] } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect([r.body.documents, r.body.refused]).toEqual([1, 1]);
    expect(r.body.results[1].error.code).toBe("INVOICE_ISSUER_MISMATCH");
    // The sample's own address differs from the profile's too: each differing field is named.
    expect(r.body.results[1].error.details.map((d: { field: string }) => d.field).sort()).toEqual(["rows[1].issuer.address.address", "rows[1].issuer.email"]);
  });

  it("without a profile, a document without issuer is refused and says how to fix it", async () => {
    expect((await patch({ issuer_profile: null })).status).toBe(200);
    const { issuer: _sent, ...body } = invoiceBody(issuer.rut, "33");
    const r = await issue(issuer, body);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body.error.details.map((d: { field: string }) => d.field)).toContain("issuer");
    expect(r.body.error.message).toMatch(/issuer profile/);
  });
});
