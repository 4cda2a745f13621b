import { beforeAll, describe, expect, it } from "vitest";
import { ADDITIONAL_TAXES, SPECIFIC_TAXES } from "../../src/countries/cl/documents/invoice";
import { CHILE } from "../../src/countries/cl/catalogs";
import { expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, type Issuer } from "../helpers/issuer";

let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33, 110]);
});

function expectCatalogError(res: Awaited<ReturnType<typeof issue>>, code: string, field: string, endpoint: string) {
  expectError(res, 400, code);
  expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  expect(res.body.error.message).toContain(`GET /api/catalogs/CL/${endpoint}`);
}

describe("coded fields of an invoice body are checked against the catalogs", () => {
  it("currency", async () => {
    const body = invoiceBody(issuer.rut, "110", { currency: { code: "XYZ", exchange_rate: 900 } });
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "currency.code", "currencies");
  });

  it("unit of measure on an export document (customs table)", async () => {
    const body = invoiceBody(issuer.rut, "110");
    body.items[0].code_unit_of_measure = "CAJA";
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "items[0].code_unit_of_measure", "measurement-units");
    body.items[0].code_unit_of_measure = "kn"; // customs KN, any case
    expect((await issue(issuer, body)).status).toBe(202);
  });

  it("unit of measure on a domestic document stays free text of up to 4 characters, as the SII accepts (UN, KG, ...)", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.items[0].code_unit_of_measure = "CAJA";
    expect((await issue(issuer, body)).status).toBe(202);
    body.items[0].code_unit_of_measure = "KILOGRAMO"; // longer than UnmdItem allows: refused by the body's schema, naming the field
    const long = await issue(issuer, body);
    expectError(long, 400, "VALIDATION_FAILED");
    expect(long.body.error.details).toEqual([expect.objectContaining({ field: "items[0].code_unit_of_measure" })]);
  });

  it("the currency of a line's price in another currency (OtrMnda Moneda)", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.items[0].other_currency = { code: "XYZ", unit_price: 1 };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "items[0].other_currency.code", "currencies");
  });

  it("tax type", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.items[0].taxes = [{ type: "IVA" }, { type: "999" }];
    expectCatalogError(await issue(issuer, body), "INVOICE_TAX_NOT_ALLOWED", "items[0].taxes[1].type", "tax-types");
  });

  it("item codes: a GS1 code with a wrong check digit is refused, naming the code and the catalog; an issuer's own coding passes", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.items[0].item_codes = [{ type: "INT1", value: "SKU-1" }, { type: "EAN13", value: "7801234567890" }];
    expectCatalogError(await issue(issuer, body), "INVOICE_INVALID_INPUT", "items[0].item_codes[1].value", "item-code-types");
    body.items[0].item_codes[1].value = "7801234567894";
    expect((await issue(issuer, body)).status).toBe(202);
  });

  it("payment type", async () => {
    const body = invoiceBody(issuer.rut, "33", { payment_method: { code: "CHEQUE" } });
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "payment_method.code", "payment-types");
  });

  it("region of a Chilean address (code, roman numeral or name accepted)", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.issuer = { ...body.issuer, address: { ...body.issuer.address, region: "17" } };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "issuer.address.region", "regions");
    body.recipient = { ...body.recipient, address: { ...body.recipient.address, region: "Narnia" } };
    body.issuer.address.region = "RM";
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "recipient.address.region", "regions");
    body.recipient.address.region = "valparaiso";
    expect((await issue(issuer, body)).status).toBe(202);
  });

  it("economic activity codes (Acteco) against the SII's table", async () => {
    const body = invoiceBody(issuer.rut, "33");
    body.issuer.tax_information = { ...body.issuer.tax_information, activity_codes: [620200, 999999] };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "issuer.tax_information.activity_codes[1]", "legal-activities");
    body.issuer.tax_information.activity_codes = [11101]; // 011101, CULTIVO DE TRIGO: leading zero dropped as a number
    expect((await issue(issuer, body)).status).toBe(202);
  });
});

describe("the export customs block is checked against the customs tables", () => {
  it("ports, clauses, package types and the recipient's nationality; a known set is issued", async () => {
    const customs = { sale_clause: "1", port_of_loading: "906", port_of_unloading: "111", packages: [{ type: "75", quantity: 2 }], destination_country: "225" };
    const body = invoiceBody(issuer.rut, "110", { customs: { ...customs, port_of_loading: "9999" } });
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "customs.port_of_loading", "additional-export-info/ports");
    body.customs = { ...customs, packages: [{ type: "998", quantity: 1 }] };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "customs.packages[0].type", "additional-export-info/package-types");
    body.customs = { ...customs, sale_clause: "77" };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "customs.sale_clause", "additional-export-info/sale-clauses");
    body.customs = customs;
    body.recipient = { ...body.recipient, foreign: { nationality: "1" } };
    expectCatalogError(await issue(issuer, body), "INVOICE_CATALOG_CODE_UNKNOWN", "recipient.foreign.nationality", "additional-export-info/countries");
    body.recipient.foreign = { nationality: "225" };
    expect((await issue(issuer, body)).status).toBe(202);
  });

  it("a block the type cannot carry is 400 INVOICE_FIELD_NOT_ALLOWED naming it", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "33", { customs: { sale_clause: "1" } }));
    expectError(res, 400, "INVOICE_FIELD_NOT_ALLOWED");
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: "customs" })]);
  });
});

describe("the catalog is the one home of the engine's codes", () => {
  it("every additional tax the engine issues is in the tax-types catalog with the same rate and kind", () => {
    const taxTypes = CHILE.catalogs.find((c) => c.slug === "tax-types")!;
    for (const [code, t] of Object.entries(ADDITIONAL_TAXES)) {
      const e = taxTypes.entries.find((x) => x.code === code);
      expect(e, code).toBeDefined();
      expect(e!.attributes).toMatchObject({ rate: t.rate, retention: t.kind === "R", supported: true });
    }
    for (const [code, t] of Object.entries(SPECIFIC_TAXES)) {
      expect(taxTypes.entries.find((x) => x.code === code), code).toEqual({ code, name: t.name, attributes: { rate: null, per: "m3", retention: false, supported: true } });
    }
  });
});
