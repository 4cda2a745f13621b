/** Golden tests of the Detalle builder (lines.ts). */
import { describe, expect, it } from "vitest";
import { body, doc, fails, plain } from "./helpers";

describe("lines: discounts and surcharges", () => {
  it("a percentage rounds half away from zero on the line gross; MontoItem = gross − discount + surcharge", () => {
    const d = doc({ items: [{ quantity: 1, unit_price: 250, description: "a", discount_percent: 1 }, { quantity: 1, unit_price: 350, description: "b", surcharge_percent: 0.5 }, { quantity: 3, unit_price: 3333.33, description: "c", discount_percent: 12.35 }] });
    // 2.5 → 3; 1.75 → 2; 3 × 3333.33 = 9999.99 → 10000, 12.35 % of it 1235 exactly (undefined prints as null)
    expect(plain(d.lines.map((l) => [l.gross, l.discount, l.surcharge, l.amount, l.discountPct, l.surchargePct]))).toEqual([
      [250, 3, 0, 247, "1", null],
      [350, 0, 2, 352, null, "0.5"],
      [10000, 1235, 0, 8765, "12.35", null],
    ]);
  });
  it("just under .5 rounds down", () => {
    const d = doc({ items: [{ quantity: 1, unit_price: 249, description: "a", discount_percent: 1 }] }); // 2.49 → 2
    expect(d.lines[0]!.discount).toBe(2n);
  });
  it("percentage and amount together must agree", () => {
    expect(doc({ items: [{ quantity: 1, unit_price: 1000, description: "a", discount_percent: 10, discount_amount: 100 }] }).lines[0]!.amount).toBe(900n);
    expect(fails({ items: [{ quantity: 1, unit_price: 1000, description: "a", discount_percent: 10, discount_amount: 99 }] })).toEqual({ code: "TOTALS_MISMATCH", field: "items[0].discount_amount", expected: "100" });
  });
  it("precise errors: a discount over 100 %, a surcharge over 999.99 %, a boleta surcharge over 100 %, a discount above the line", () => {
    expect(fails({ items: [{ quantity: 1, unit_price: 1000, description: "a", discount_percent: 100.01 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].discount_percent", expected: "0.01–100" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1000, description: "a", surcharge_percent: 1000 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].surcharge_percent" });
    expect(doc({ items: [{ quantity: 1, unit_price: 1000, description: "a", surcharge_percent: 999.99 }] }).lines[0]!.surcharge).toBe(10000n);
    expect(fails({ invoice_type: "39", items: [{ quantity: 1, unit_price: 1000, description: "a", surcharge_percent: 101 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].surcharge_percent", expected: "0.01–100" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1000, description: "a", discount_amount: 1001 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].discount_amount", expected: "≤ 1000" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1000, description: "a", discount_percent: 0 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE" });
  });
  it("exports: line discounts are whole currency units (MntImpType); a percentage rounds to them", () => {
    const d = doc({ invoice_type: "110", recipient: { ...body().recipient!, document_number: "US-1" }, currency: { code: "USD" }, items: [{ quantity: 1, unit_price: 1230, description: "a", discount_percent: 2.5 }] });
    expect(plain([d.lines[0]!.discount, d.lines[0]!.amount])).toEqual([3100, 119900]); // 30.75 → 31.00
    expect(fails({ invoice_type: "110", currency: { code: "USD" }, items: [{ quantity: 1, unit_price: 100, description: "a", discount_amount: 1.5 }] })).toMatchObject({ code: "INVALID_NUMBER", field: "items[0].discount_amount" });
  });
});

describe("lines: codes, descriptions, reference quantities, retention agent", () => {
  it("carries codes, long description, reference quantity and the Retenedor amounts", () => {
    const l = doc({
      items: [{ quantity: 2, unit_price: 500, description: "Vino", long_description: "x".repeat(1000), item_codes: [{ type: "EAN13", value: "7801234567894" }], reference_quantity: 0.75, reference_unit: "LT", reference_price: 666.666667, retainer: { base_amount: 800, margin_amount: 100, final_price: 700 } }],
    }).lines[0]!;
    expect(plain({ codes: l.codes, refQty: l.refQty, refUnit: l.refUnit, refPrice: l.refPrice, retainer: l.retainer, long: l.longDescription?.length })).toEqual({
      codes: [{ type: "EAN13", value: "7801234567894" }], refQty: "0.75", refUnit: "LT", refPrice: "666.666667", retainer: { baseAmount: 800, margin: 100, finalPrice: 700 }, long: 1000,
    });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", long_description: "x".repeat(1001) }] })).toMatchObject({ code: "FIELD_TOO_LONG", field: "items[0].long_description" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", item_codes: Array.from({ length: 6 }, () => ({ type: "A", value: "1" })) }] })).toMatchObject({ code: "INVALID_INPUT", field: "items[0].item_codes" });
    expect(fails({ invoice_type: "39", items: [{ quantity: 1, unit_price: 1, description: "a", retainer: { base_amount: 1 } }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].retainer" });
  });
});

describe("lines: IndExe", () => {
  it("each value lands on the line, taxes EXE is IndExe 1, and an exempt type writes none", () => {
    const d = doc({ items: [1, 2, 3, 4, 6].map((n) => ({ quantity: 1, unit_price: 100, description: `i${n}`, exempt_indicator: n })).concat([{ quantity: 1, unit_price: 100, description: "exe", taxes: [{ type: "EXE" }] } as never]) });
    expect(d.lines.map((l) => [l.indicator, l.exempt])).toEqual([[1, true], [2, false], [3, false], [4, false], [6, false], [1, true]]);
    expect(doc({ invoice_type: "34", items: [{ quantity: 1, unit_price: 1, description: "a", exempt_indicator: 1 }] }).lines[0]!.indicator).toBeUndefined();
  });
  it("precise errors: a value the type cannot carry, taxes on a not-billable line, EXE with another value", () => {
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", exempt_indicator: 5 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].exempt_indicator" });
    expect(fails({ invoice_type: "39", items: [{ quantity: 1, unit_price: 1, description: "a", exempt_indicator: 3 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].exempt_indicator" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", exempt_indicator: 2, taxes: [{ type: "IVA" }] }] })).toEqual({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", exempt_indicator: 2, taxes: [{ type: "EXE" }] }] })).toEqual({ code: "TAX_NOT_ALLOWED", field: "items[0].exempt_indicator" });
  });
});

describe("lines: additional taxes and withholdings per type", () => {
  it("precise errors: a withholding on a type that cannot carry it, code 15 outside purchases, taxes with gross prices", () => {
    expect(fails({ invoice_type: "34", items: [{ quantity: 1, unit_price: 1, description: "a", taxes: [{ type: "32" }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
    expect(fails({ invoice_type: "39", items: [{ quantity: 1, unit_price: 1, description: "a", taxes: [{ type: "24" }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", taxes: [{ type: "15" }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
    expect(fails({ gross_prices: true, items: [{ quantity: 1, unit_price: 1, description: "a", taxes: [{ type: "27" }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", taxes: [{ type: "32", rate: 10 }] }] })).toMatchObject({ code: "TAX_RATE_MISMATCH", field: "items[0].taxes[0].rate", expected: "8" });
  });
  it("liquidación-factura lines need settled_type and carry no discounts; other types refuse settled_type", () => {
    expect(fails({ invoice_type: "43", items: [{ quantity: 1, unit_price: 1, description: "a" }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].settled_type" });
    expect(fails({ invoice_type: "43", items: [{ quantity: 1, unit_price: 100, description: "a", settled_type: "33", discount_amount: 1 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].discount_amount" });
    expect(fails({ items: [{ quantity: 1, unit_price: 1, description: "a", settled_type: "33" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].settled_type" });
  });
});
