import { describe, expect, it } from "vitest";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { divRound, formatScaled, numberToPlain, parseScaled } from "../../src/countries/cl/documents/decimal";
import { DOCUMENT_TYPES, resolveDocumentType, resolveReasonCode } from "../../src/countries/cl/documents/document-types";
import { ENGINE_ERROR_CODES, EngineError } from "../../src/countries/cl/errors";
import { engineError as err } from "../helpers/engine-error";

const issuer = {
  legal_name: "EMPRESA DE PRUEBA SPA",
  document_type: "RUT",
  document_number: "76.086.428-5",
  address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" },
  tax_information: { activity: "Venta de software", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" },
};
const recipient = {
  legal_name: "CLIENTE LIMITADA",
  document_number: "77879240-0",
  address: { country: "CL", city: "Ñuñoa", address: "Calle 2" },
  tax_information: { activity: "Comercio" },
};
function inv(over: Partial<InvoiceInput> = {}): InvoiceInput {
  return {
    invoice_type: "33",
    invoice_date: "2026-11-20 10:30:00",
    issuer,
    recipient,
    items: [{ quantity: 1, unit_price: 1000, description: "Servicio" }],
    ...over,
  };
}

describe("decimal", () => {
  it("rounds half away from zero at every .5", () => {
    expect(divRound(5n, 10n)).toBe(1n);
    expect(divRound(15n, 10n)).toBe(2n);
    expect(divRound(25n, 10n)).toBe(3n);
    expect(divRound(-5n, 10n)).toBe(-1n);
    expect(divRound(-25n, 10n)).toBe(-3n);
    expect(divRound(4n, 10n)).toBe(0n);
    expect(divRound(14999n, 10000n)).toBe(1n);
  });
  it("parses numbers exactly, rejecting floats it cannot represent", () => {
    expect(parseScaled(0.1, 6, "x")).toBe(100000n);
    expect(parseScaled("1190.5", 2, "x")).toBe(119050n);
    expect(parseScaled(1e-6, 6, "x")).toBe(1n);
    expect(numberToPlain(1e21)).toBe("1000000000000000000000");
    expect(err(() => parseScaled(1e-7, 6, "q")).code).toBe("INVALID_NUMBER");
    expect(err(() => parseScaled(-1, 0, "q")).code).toBe("INVALID_NUMBER");
    expect(err(() => parseScaled("1,5", 2, "q")).code).toBe("INVALID_NUMBER");
    expect(formatScaled(1234500n, 6)).toBe("1.2345");
    expect(formatScaled(100n, 0)).toBe("100");
  });
});

describe("error table", () => {
  it("codes are UPPER_SNAKE with a description; EngineError serialises", () => {
    for (const [k, v] of Object.entries(ENGINE_ERROR_CODES)) {
      expect(k).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(v.length).toBeGreaterThan(10);
    }
    const e = new EngineError("TOTALS_MISMATCH", "m", { field: "totals.total", expected: 10n });
    expect(JSON.parse(JSON.stringify(e))).toEqual({ code: "TOTALS_MISMATCH", message: "m", field: "totals.total", expected: "10" });
  });
});

describe("document types", () => {
  it("resolves codes and mnemonics", () => {
    expect(resolveDocumentType("33").mnemonic).toBe("FAC");
    expect(resolveDocumentType("NCV").code).toBe(61);
    expect(resolveDocumentType("ncv").code).toBe(61);
    expect(resolveDocumentType(110).xmlBranch).toBe("Exportaciones");
    expect(DOCUMENT_TYPES[39].envelope).toBe("EnvioBOLETA");
    expect(DOCUMENT_TYPES[61].name).toBe("NOTA DE CRÉDITO ELECTRÓNICA");
    expect([33, 46, 56, 61].every((c) => DOCUMENT_TYPES[c as 33].cafExpires)).toBe(true);
    expect(DOCUMENT_TYPES[34].cafExpires).toBe(false);
    expect(err(() => resolveDocumentType("99")).code).toBe("DOCUMENT_TYPE_UNKNOWN");
    expect(err(() => resolveDocumentType("XYZ")).code).toBe("DOCUMENT_TYPE_UNKNOWN");
    expect(resolveReasonCode("ANU").codRef).toBe(1);
    expect(resolveReasonCode("COT").codRef).toBe(2);
    expect(resolveReasonCode("COM").codRef).toBe(3);
    expect(err(() => resolveReasonCode("XXX")).code).toBe("REASON_CODE_UNKNOWN");
  });
});

describe("computeDocument", () => {
  it("factura: net, IVA 19 %, total; rounding at .5 on lines and on IVA", () => {
    const d = computeDocument(inv({ items: [{ quantity: 3, unit_price: 0.5, description: "A" }, { quantity: 1, unit_price: "48.5", description: "B" }] }));
    // 3 × 0.5 = 1.5 -> 2; 48.5 -> 49; net 51; IVA 9.69 -> 10
    expect(d.lines.map((l) => l.amount)).toEqual([2n, 49n]);
    expect(d.totals.net).toBe(51n);
    expect(d.totals.iva).toBe(10n);
    expect(d.totals.total).toBe(61n);
    // IVA exactly at .5: net 50 -> 9.5 -> 10 ; net 150 -> 28.5 -> 29
    expect(computeDocument(inv({ items: [{ quantity: 1, unit_price: 50, description: "x" }] })).totals.iva).toBe(10n);
    expect(computeDocument(inv({ items: [{ quantity: 1, unit_price: 150, description: "x" }] })).totals.iva).toBe(29n);
    // just below .5: net 52 -> 9.88 -> 10 ; net 2 -> 0.38 -> 0
    expect(computeDocument(inv({ items: [{ quantity: 1, unit_price: 2, description: "x" }] })).totals.iva).toBe(0n);
    // 2.5 -> 3 and 4.5 -> 5 (not banker's rounding); IVA of 2.5 × 19 % = 0.475 -> 0
    expect(computeDocument(inv({ items: [{ quantity: 5, unit_price: 0.5, description: "x" }] })).lines[0]!.amount).toBe(3n);
    expect(computeDocument(inv({ items: [{ quantity: 9, unit_price: 0.5, description: "x" }] })).lines[0]!.amount).toBe(5n);
    // 0.1 + 0.2 style float traps: 3 × 0.1 = 0.3 exactly -> 0 ; 5 × 0.1 = 0.5 -> 1
    expect(computeDocument(inv({ items: [{ quantity: 5, unit_price: 0.1, description: "x" }] })).lines[0]!.amount).toBe(1n);
    expect(computeDocument(inv({ items: [{ quantity: 0.000001, unit_price: 500000, description: "x" }] })).lines[0]!.amount).toBe(1n);
  });

  it("line discounts and exempt lines", () => {
    const d = computeDocument(
      inv({
        items: [
          { quantity: 2, unit_price: 1000, discount_amount: 100, description: "A" },
          { quantity: 1, unit_price: 500, description: "Exento", taxes: [{ type: "EXE" }] },
        ],
        totals: { sub_total: 2500, discount: 100, taxes: [{ type: "IVA", amount: 361, base_amount: 1900, rate: 19 }, { type: "EXE", base_amount: 500 }], total: 2761 },
      }),
    );
    expect(d.lines[0]!.amount).toBe(1900n);
    expect(d.lines[1]!.indicator).toBe(1);
    expect(d.totals).toMatchObject({ net: 1900n, exempt: 500n, iva: 361n, total: 2761n });
  });

  it("rejects mismatching totals naming the field and the expected value", () => {
    const e = err(() => computeDocument(inv({ totals: { total: 1189 } })));
    expect(e.code).toBe("TOTALS_MISMATCH");
    expect(e.field).toBe("totals.total");
    expect(e.expected).toBe("1190");
    const e2 = err(() => computeDocument(inv({ totals: { taxes: [{ type: "IVA", amount: 191 }] } })));
    expect(e2.field).toBe("totals.taxes[0].amount");
    expect(e2.expected).toBe("190");
    const e3 = err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 100, description: "x", taxes: [{ type: "IVA", rate: 18 }] }] })));
    expect(e3.code).toBe("TAX_RATE_MISMATCH");
    expect(e3.field).toBe("items[0].taxes[0].rate");
    const e4 = err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 100, description: "x", taxes: [{ type: "IVA", amount: 20 }] }] })));
    expect(e4).toMatchObject({ code: "TOTALS_MISMATCH", field: "items[0].taxes[0].amount", expected: "19" });
  });

  it("additional taxes and withholdings", () => {
    const d = computeDocument(
      inv({
        items: [
          { quantity: 1, unit_price: 100, description: "Vino", taxes: [{ type: "IVA" }, { type: "25", rate: 20.5 }] },
          { quantity: 1, unit_price: 10, description: "Bebida", taxes: [{ type: "271" }] },
        ],
      }),
    );
    // IVA 110 × 19 % = 20.9 -> 21; 25: 100 × 20.5 % = 20.5 -> 21; 271: 10 × 18 % = 1.8 -> 2
    expect(d.totals.iva).toBe(21n);
    expect(d.totals.additional.map((a) => [a.type, a.amount])).toEqual([["25", 21n], ["271", 2n]]);
    expect(d.totals.total).toBe(110n + 21n + 21n + 2n);
    // 46 with IVA retenido total: total = net
    const f = computeDocument(inv({ invoice_type: "FCO", items: [{ quantity: 1, unit_price: 1000, description: "Compra", taxes: [{ type: "15" }] }] }));
    expect(f.totals).toMatchObject({ net: 1000n, iva: 190n, total: 1000n });
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "x", taxes: [{ type: "15" }] }] }))).code).toBe("TAX_NOT_ALLOWED");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "x", taxes: [{ type: "99" }] }] }))).code).toBe("TAX_NOT_ALLOWED");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "x", taxes: [{ type: "24", rate: 30 }] }] }))).code).toBe("TAX_RATE_MISMATCH");
  });

  it("boleta gross to net", () => {
    const d = computeDocument(inv({ invoice_type: "BEL", recipient: undefined, items: [{ quantity: 1, unit_price: 1000, description: "Pan" }] }));
    // 1000 / 1.19 = 840.34 -> 840 ; IVA 160
    expect(d.totals).toMatchObject({ net: 840n, iva: 160n, total: 1000n });
    expect(d.receiver.rut).toBe("66666666-6");
    // 100 / 1.19 = 84.03 -> 84; 1190 -> 1000 exactly; 6 / 1.19 = 5.04 -> 5
    expect(computeDocument(inv({ invoice_type: "39", items: [{ quantity: 1, unit_price: 1190, description: "x" }] })).totals.net).toBe(1000n);
    expect(computeDocument(inv({ invoice_type: "39", items: [{ quantity: 1, unit_price: 6, description: "x" }] })).totals).toMatchObject({ net: 5n, iva: 1n });
    const bex = computeDocument(inv({ invoice_type: "41", items: [{ quantity: 2, unit_price: 750, description: "x" }] }));
    expect(bex.totals).toMatchObject({ exempt: 1500n, total: 1500n });
    expect(bex.totals.iva).toBeUndefined();
  });

  it("exempt and export documents", () => {
    const fex = computeDocument(inv({ invoice_type: "34" }));
    expect(fex.totals).toMatchObject({ exempt: 1000n, total: 1000n });
    expect(err(() => computeDocument(inv({ invoice_type: "34", items: [{ quantity: 1, unit_price: 1, description: "x", taxes: [{ type: "IVA" }] }] }))).code).toBe("TAX_NOT_ALLOWED");
    const fee = computeDocument(
      inv({ invoice_type: "110", currency: { code: "USD", exchange_rate: 950.25 }, recipient: { legal_name: "ACME INC", document_number: "US-123456" }, items: [{ quantity: 3, unit_price: 10.005, description: "Export" }] }),
    );
    // 3 × 10.005 = 30.015 -> 30.02 (2 decimals, half away)
    expect(fee.totals.total).toBe(3002n);
    expect(fee.currency).toMatchObject({ siiName: "DOLAR USA", scale: 2, exchangeRate: "950.25" });
    expect(fee.receiver).toMatchObject({ rut: "55555555-5", foreignId: "US-123456" });
    expect(err(() => computeDocument(inv({ currency: { code: "USD" } }))).code).toBe("CURRENCY_NOT_SUPPORTED");
  });

  it("notes need references and a reason; ANU maps to CodRef 1", () => {
    const ref = [{ number: 12, invoice_type: "FAC", invoice_date: "2026-11-01 09:00:00" }];
    const nc = computeDocument(inv({ invoice_type: "NCV", reason_code: "ANU", billing_reference: ref }));
    expect(nc.references[0]).toMatchObject({ type: "33", folio: "12", date: "2026-11-01", codRef: 1 });
    expect(err(() => computeDocument(inv({ invoice_type: "NCV", reason_code: "ANU" }))).code).toBe("REFERENCE_REQUIRED");
    expect(err(() => computeDocument(inv({ invoice_type: "NCV", billing_reference: ref }))).code).toBe("REFERENCE_REQUIRED");
    expect(err(() => computeDocument(inv({ invoice_type: "NCV", reason_code: "ANU", billing_reference: [{ number: 1, invoice_type: "52", invoice_date: "2026-11-01" }] }))).code).toBe("REFERENCE_INVALID");
    const cot = computeDocument(inv({ invoice_type: "61", reason_code: "COT", billing_reference: ref, items: [{ quantity: 1, unit_price: 0, description: "Corrige giro" }] }));
    expect(cot.totals.total).toBe(0n);
    expect(cot.lines[0]!.price).toBeUndefined();
    expect(err(() => computeDocument(inv({ invoice_type: "61", reason_code: "COT", billing_reference: ref }))).code).toBe("TOTALS_MISMATCH");
    expect(err(() => computeDocument(inv({ invoice_type: "61", reason_code: "XXX", billing_reference: ref }))).code).toBe("REASON_CODE_UNKNOWN");
  });

  it("limits: lines, lengths, Latin-1, RUT, dates", () => {
    const many = Array.from({ length: 61 }, (_, i) => ({ quantity: 1, unit_price: 1, description: `L${i}` }));
    expect(err(() => computeDocument(inv({ items: many }))).code).toBe("TOO_MANY_LINES");
    expect(computeDocument(inv({ invoice_type: "39", items: many })).lines).toHaveLength(61);
    const thousand1 = Array.from({ length: 1001 }, () => ({ quantity: 1, unit_price: 1, description: "x" }));
    expect(err(() => computeDocument(inv({ invoice_type: "39", items: thousand1 }))).code).toBe("TOO_MANY_LINES");
    const e = err(() => computeDocument(inv({ recipient: { ...recipient, tax_information: { activity: "x".repeat(41) } } })));
    expect(e).toMatchObject({ code: "FIELD_TOO_LONG", field: "recipient.tax_information.activity" });
    const e2 = err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "Café ☕" }] })));
    expect(e2).toMatchObject({ code: "CHARACTER_NOT_LATIN1", field: "items[0].description" });
    expect(computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "Ñandú €? no: ÁÉÍÓÚ ñ" .replace("€", "E") }] })).lines[0]!.name).toContain("Ñandú");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "x".repeat(81) }] })))).toMatchObject({ code: "FIELD_TOO_LONG", field: "items[0].description", expected: "≤ 80 characters" });
    expect(err(() => computeDocument(inv({ issuer: { ...issuer, legal_name: "x".repeat(101) } })))).toMatchObject({ code: "FIELD_TOO_LONG", field: "issuer.legal_name" });
    expect(err(() => computeDocument(inv({ issuer: { ...issuer, address: { address: "x".repeat(71) } } })))).toMatchObject({ code: "FIELD_TOO_LONG", field: "issuer.address.address" });
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 1, description: "x", code_unit_of_measure: "UNIDAD" }] })))).toMatchObject({ code: "FIELD_TOO_LONG", field: "items[0].code_unit_of_measure" });
    expect(err(() => computeDocument(inv({ recipient: { ...recipient, document_number: "77879240-1" } })))).toMatchObject({ code: "INVALID_RUT", field: "recipient.document_number" });
    expect(err(() => computeDocument(inv({ invoice_date: "2026-02-30 10:00:00" }))).code).toBe("INVALID_DATE");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 0, unit_price: 1, description: "x" }] }))).code).toBe("INVALID_NUMBER");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: -1, description: "x" }] }))).code).toBe("INVALID_NUMBER");
    expect(err(() => computeDocument(inv({ items: [{ quantity: 1, unit_price: 10, discount_amount: 11, description: "x" }] }))).code).toBe("AMOUNT_OUT_OF_RANGE");
    expect(err(() => computeDocument({ invoice_type: "33" })).code).toBe("INVALID_INPUT");
    expect(err(() => computeDocument(inv({ recipient: undefined }))).code).toBe("INVALID_INPUT");
  });
});
