/** Golden and bad-path tests of SubDscto and SubRecargo, the parts of a line's discount or surcharge (breakdown.ts). */
import { describe, expect, it } from "vitest";
import { doc, fails, plain } from "./helpers";

const line = { quantity: 3, unit_price: 1000, description: "a" };
const usd = { invoice_type: "110", currency: { code: "USD" }, recipient: { legal_name: "ACME INC", document_number: "US-1" } };

describe("SubDscto and SubRecargo", () => {
  it("without discount_percent or discount_amount the parts are the discount: 10 % of 3,000 + 55.50 = 355.5 → 356", () => {
    const d = doc({ items: [{ ...line, discount_breakdown: [{ percent: 10 }, { amount: 55.5 }] }] });
    expect(plain([d.lines[0]!.discount, d.lines[0]!.amount, d.lines[0]!.discountParts])).toEqual([356, 2644, [{ type: "%", value: "10" }, { type: "$", value: "55.5" }]]);
    expect(d.lines[0]!.discountPct).toBeUndefined();
  });
  it("with the line's percent or amount the parts must add up to it; a surcharge the same", () => {
    const d = doc({ items: [{ ...line, discount_percent: 15, discount_breakdown: [{ percent: 10 }, { percent: 5 }], surcharge_amount: 100, surcharge_breakdown: [{ amount: 60 }, { amount: 40 }] }] });
    expect(plain([d.lines[0]!.discount, d.lines[0]!.surcharge, d.lines[0]!.amount])).toEqual([450, 100, 2650]);
    expect(plain(d.lines[0]!.surchargeParts)).toEqual([{ type: "$", value: "60" }, { type: "$", value: "40" }]);
  });
  it("in a foreign currency the parts keep 2 decimals and their sum is rounded to whole units (1.5 + 1.5 % of 100 = 3)", () => {
    const d = doc({ ...usd, items: [{ quantity: 1, unit_price: 100, description: "x", discount_breakdown: [{ amount: 1.5 }, { percent: 1.5 }] }] });
    expect(plain([d.lines[0]!.discount, d.lines[0]!.amount])).toEqual([300, 9700]);
  });
  it("parts that do not add up to the line's amount are refused with the expected value", () => {
    expect(fails({ items: [{ ...line, discount_amount: 300, discount_breakdown: [{ amount: 200 }] }] })).toEqual({ code: "TOTALS_MISMATCH", field: "items[0].discount_breakdown", expected: "300" });
    expect(fails({ items: [{ ...line, surcharge_percent: 10, surcharge_breakdown: [{ percent: 5 }] }] })).toEqual({ code: "TOTALS_MISMATCH", field: "items[0].surcharge_breakdown", expected: "300" });
  });
  it("a part with both or neither of percent and amount, zero, over 100 % or 3 decimals is refused naming it", () => {
    expect(fails({ items: [{ ...line, discount_breakdown: [{ percent: 1, amount: 1 }] }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].discount_breakdown[0]" });
    expect(fails({ items: [{ ...line, discount_breakdown: [{ amount: 10 }, {}] }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].discount_breakdown[1]" });
    expect(fails({ items: [{ ...line, discount_breakdown: [{ amount: 0 }] }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].discount_breakdown[0].amount", expected: "≥ 0.01" });
    expect(fails({ items: [{ ...line, discount_breakdown: [{ percent: 100.01 }] }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].discount_breakdown[0].percent", expected: "0.01–100" });
    expect(fails({ items: [{ ...line, discount_breakdown: [{ amount: 1.005 }] }] }).field).toBe("items[0].discount_breakdown[0].amount");
  });
  it("more than 5 parts, a discount over the line, boletas and the liquidación-factura are refused", () => {
    expect(fails({ items: [{ ...line, discount_breakdown: Array.from({ length: 6 }, () => ({ amount: 1 })) }] }).field).toBe("items[0].discount_breakdown");
    expect(fails({ items: [{ ...line, discount_breakdown: [{ percent: 100 }, { amount: 1 }] }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].discount_amount", expected: "≤ 3000" });
    expect(fails({ invoice_type: "39", recipient: undefined, items: [{ ...line, discount_breakdown: [{ amount: 1 }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].discount_breakdown" });
    expect(fails({ invoice_type: "43", items: [{ ...line, settled_type: "33", surcharge_breakdown: [{ amount: 1 }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].surcharge_breakdown" });
  });
});
