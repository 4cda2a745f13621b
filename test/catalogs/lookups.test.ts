/**
 * The Chilean catalogs as functions other modules call: communes (with the SII unit the PDF prints),
 * economic activities, and the item code checker for CdgItem (TpoCodigo / VlrCodigo).
 */
import { describe, expect, it } from "vitest";
import { ACTIVITIES, findActivity } from "../../src/countries/cl/catalogs/activities";
import { checkCatalogCode, checkItemCode } from "../../src/countries/cl/catalogs/checks";
import { COMMUNES, findCommune, siiOfficeLabel } from "../../src/countries/cl/catalogs/communes";
import { findItemCodeType } from "../../src/countries/cl/catalogs/legal";
import { engineError } from "../helpers/engine-error";


describe("communes", () => {
  it("holds all 346 with unique official codes, names and spellings, each in its region's code range", () => {
    expect(COMMUNES).toHaveLength(346);
    expect(new Set(COMMUNES.map((c) => c.code)).size).toBe(346);
    const spellings = COMMUNES.flatMap((c) => [c.name, ...c.aliases]).map((n) => n.normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/[^A-Za-z0-9]/g, "").toUpperCase());
    expect(new Set(spellings).size).toBe(spellings.length);
    for (const c of COMMUNES) {
      expect(c.code, c.name).toMatch(/^\d{5}$/);
      expect(Number(c.code.slice(0, 2)), c.name).toBe(Number(c.regionCode));
      expect(c.name.length, c.name).toBeLessThanOrEqual(20); // CmnaOrigen / CmnaRecep
      expect(c.siiOffice, c.name).not.toBe("");
    }
    expect(new Set(COMMUNES.map((c) => c.regionCode)).size).toBe(16);
  });

  it("finds a commune by code, name or a known spelling, without regard to case, accents or spaces", () => {
    expect(findCommune("13120")?.name).toBe("ÑUÑOA");
    expect(findCommune("nunoa")?.code).toBe("13120");
    expect(findCommune("Coyhaique")?.name).toBe("COIHAIQUE");
    expect(findCommune("Til Til")?.name).toBe("TILTIL");
    expect(findCommune("o'higgins")?.code).toBe("11302");
    expect(findCommune("1101")?.name).toBe("IQUIQUE");
    expect(findCommune("Atlantis")).toBeUndefined();
    expect(findCommune("  ")).toBeUndefined();
  });

  it("names the SII unit the PDF prints: from the commune, else the city", () => {
    expect(siiOfficeLabel("Las Condes")).toBe("S.I.I. - SANTIAGO ORIENTE");
    expect(siiOfficeLabel("Ñuñoa")).toBe("S.I.I. - ÑUÑOA");
    expect(siiOfficeLabel("Maipú")).toBe("S.I.I. - MAIPÚ");
    expect(siiOfficeLabel("Santiago")).toBe("S.I.I. - SANTIAGO CENTRO");
    expect(siiOfficeLabel("Navidad")).toBe("S.I.I. - SAN ANTONIO");
    expect(siiOfficeLabel("Atlantis", "Concepción")).toBe("S.I.I. - CONCEPCIÓN");
    expect(siiOfficeLabel("Atlantis", undefined)).toBeUndefined();
  });
});

describe("economic activities", () => {
  it("holds the SII's 674 six-digit codes in order, with the IVA and category marks", () => {
    expect(ACTIVITIES).toHaveLength(674);
    const codes = ACTIVITIES.map((a) => a.code);
    expect(codes).toEqual([...codes].sort());
    expect(new Set(codes).size).toBe(674);
    for (const a of ACTIVITIES) expect(a.code).toMatch(/^\d{6}$/);
    const count = (vat: string) => ACTIVITIES.filter((a) => a.vat === vat).length;
    expect([count("affected"), count("not_affected"), count("depends")]).toEqual([585, 45, 44]);
  });

  it("finds an activity by number or by its 6 digits", () => {
    expect(findActivity(11101)?.name).toBe("CULTIVO DE TRIGO");
    expect(findActivity("011101")?.vat).toBe("affected");
    expect(findActivity(492230)).toMatchObject({ vat: "not_affected", taxCategory: "first" }); // taxis: passenger transport is exempt
    expect(findActivity(999999)).toBeUndefined();
    expect(findActivity("62 0200")).toBeUndefined();
  });
});

describe("item codes (CdgItem), for the invoice engine to call", () => {
  it("knows the standard types, any case", () => {
    expect(findItemCodeType("ean13")?.attributes.digits).toBe(13);
    expect(findItemCodeType("INT1")?.name).toBe("Código interno del emisor");
    expect(findItemCodeType("MYCODE")).toBeUndefined();
  });

  it("accepts an issuer's own coding and normalises the standard names", () => {
    expect(checkItemCode({ type: "ean13", value: "7802800000005" }, "items[0].codes[0]")).toEqual({ type: "EAN13", value: "7802800000005" });
    expect(checkItemCode({ type: "SKU-ACME", value: "AB-123/x" }, "items[0].codes[0]")).toEqual({ type: "SKU-ACME", value: "AB-123/x" });
    expect(checkItemCode({ type: "UPC", value: "036000291452" }, "f")).toEqual({ type: "UPC", value: "036000291452" });
    expect(checkItemCode({ type: "EAN8", value: "96385074" }, "f").type).toBe("EAN8");
  });

  it("refuses a GS1 code with a bad check digit or length, and over-long types or values, naming the field", () => {
    const bad = engineError(() => checkItemCode({ type: "EAN13", value: "7802800000008" }, "items[2].codes[0]"));
    expect(bad).toMatchObject({ code: "INVALID_INPUT", field: "items[2].codes[0].value" });
    expect(bad.message).toContain("GET /api/catalogs/CL/item-code-types");
    expect(engineError(() => checkItemCode({ type: "DUN14", value: "123" }, "f")).field).toBe("f.value");
    const type = engineError(() => checkItemCode({ type: "ELEVENCHARS", value: "1" }, "f"));
    expect(type).toMatchObject({ code: "CATALOG_CODE_UNKNOWN", field: "f.type" });
    expect(type.message).toContain("GET /api/catalogs/CL/item-code-types");
    expect(engineError(() => checkItemCode({ type: "INT1", value: "x".repeat(36) }, "f")).field).toBe("f.value");
    expect(engineError(() => checkItemCode({ type: " ", value: "1" }, "f")).field).toBe("f.type");
  });
});

describe("any coded field against a catalog by its slug, for the engine's new fields", () => {
  it("returns the entry, case-insensitively, or names the field and the endpoint", () => {
    expect(checkCatalogCode("transfer-kinds", 5, "transport.transfer_kind").name).toBe("Traslados internos");
    expect(checkCatalogCode("dispatch-kinds", "2", "transport.dispatch_kind").code).toBe("2");
    expect(checkCatalogCode("reference-types", "801", "billing_reference[0].invoice_type").name).toBe("Orden de compra");
    expect(checkCatalogCode("additional-export-info/ports", "905", "customs.port_of_loading").name).toBe("VALPARAISO");
    expect(checkCatalogCode("measurement-units", "kn", "customs.tare_unit").code).toBe("KN");
    const bad = engineError(() => checkCatalogCode("additional-export-info/sale-clauses", "ZZ", "customs.sale_clause"));
    expect(bad).toMatchObject({ code: "CATALOG_CODE_UNKNOWN", field: "customs.sale_clause" });
    expect(bad.message).toContain("GET /api/catalogs/CL/additional-export-info/sale-clauses");
    expect(() => checkCatalogCode("no-such-table", "1", "f")).toThrow(/no Chilean catalog/);
  });
});
