/** Golden tests of the DscRcgGlobal builder (discounts.ts) and its effect on the totals. */
import { describe, expect, it } from "vitest";
import { doc, fails, plain } from "./helpers";

const mixed = [
  { quantity: 1, unit_price: 10005, description: "afecto" },
  { quantity: 1, unit_price: 3000, description: "exento", taxes: [{ type: "EXE" }] },
];

describe("global discounts and surcharges", () => {
  it("a global discount on a mixed taxed/exempt document moves only its base; percentages round half away from zero", () => {
    // 10005 × 5 % = 500.25 → 500; exempt 3000 − 10 % = 2700
    const d = doc({ items: mixed, global_adjustments: [{ kind: "DISCOUNT", percent: 5 }, { kind: "DISCOUNT", percent: 10, applies_to: "EXEMPT", description: "exento" }] });
    expect(plain(d.adjustments)).toEqual([
      { lineNo: 1, kind: "D", valueType: "%", value: "5", amount: 500 },
      { lineNo: 2, kind: "D", valueType: "%", value: "10", amount: 300, base: 1, description: "exento" },
    ]);
    expect(plain({ net: d.totals.net, iva: d.totals.iva, exempt: d.totals.exempt, total: d.totals.total })).toEqual({ net: 9505, iva: 1806, exempt: 2700, total: 14011 });
  });
  it("rounding boundary: .5 of a peso goes up, .49 down", () => {
    expect(doc({ items: [{ quantity: 1, unit_price: 1010, description: "a" }], global_adjustments: [{ kind: "SURCHARGE", percent: 0.05 }] }).adjustments[0]!.amount).toBe(1n); // 0.505
    expect(doc({ items: [{ quantity: 1, unit_price: 990, description: "a" }], global_adjustments: [{ kind: "SURCHARGE", percent: 0.05 }] }).adjustments[0]!.amount).toBe(0n); // 0.495
  });
  it("percentages are of the lines' base, not of the base already adjusted", () => {
    const d = doc({ items: [{ quantity: 1, unit_price: 1000, description: "a" }], global_adjustments: [{ kind: "DISCOUNT", percent: 10 }, { kind: "DISCOUNT", percent: 10 }] });
    expect(d.totals.net).toBe(800n);
  });
  it("with additional taxes, a percentage moves each tax base by the same percentage", () => {
    const d = doc({ items: [{ quantity: 1, unit_price: 10000, description: "vino", taxes: [{ type: "25" }] }], global_adjustments: [{ kind: "DISCOUNT", percent: 10 }] });
    expect(plain(d.totals.additional)).toEqual([{ type: "25", kind: "A", rate: "20.5", base: 9000, amount: 1845 }]);
    expect(d.totals.total).toBe(9000n + 1710n + 1845n);
  });
  it("precise errors", () => {
    expect(fails({ global_adjustments: [{ kind: "DISCOUNT", percent: 100.5 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "global_adjustments[0].percent", expected: "0.01–100" });
    expect(fails({ global_adjustments: [{ kind: "DISCOUNT", amount: 1001 }] })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "global_adjustments[0].amount" });
    expect(fails({ global_adjustments: [{ kind: "DISCOUNT", amount: 1, percent: 1 }] })).toMatchObject({ code: "INVALID_INPUT", field: "global_adjustments[0].percent" });
    expect(fails({ global_adjustments: [{ kind: "DISCOUNT" }] })).toMatchObject({ code: "INVALID_INPUT" });
    // a surcharge on the taxed base of a boleta exenta: it has none
    expect(fails({ invoice_type: "41", global_adjustments: [{ kind: "SURCHARGE", amount: 10, applies_to: "TAXED" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "global_adjustments[0].applies_to" });
    expect(fails({ items: [{ quantity: 1, unit_price: 100, description: "a", taxes: [{ type: "27" }] }], global_adjustments: [{ kind: "DISCOUNT", amount: 10 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "global_adjustments" });
    expect(fails({ invoice_type: "43", items: [{ quantity: 1, unit_price: 100, description: "a", settled_type: "33" }], global_adjustments: [{ kind: "DISCOUNT", amount: 10 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "global_adjustments" });
  });
  it("boleta: a global discount is taken from the gross amount before splitting net and IVA", () => {
    const d = doc({ invoice_type: "39", items: [{ quantity: 1, unit_price: 11900, description: "a" }], global_adjustments: [{ kind: "DISCOUNT", amount: 1190 }] });
    expect(plain({ net: d.totals.net, iva: d.totals.iva, total: d.totals.total })).toEqual({ net: 9000, iva: 1710, total: 10710 });
  });
});
