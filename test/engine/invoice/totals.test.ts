/** Golden tests of the Totales builder (totals.ts): every rule of its table, and the feature samples to the peso. */
import { describe, expect, it } from "vitest";
import { computeDocument } from "../../../src/countries/cl/documents/invoice";
import { FEATURE_INPUTS } from "../../helpers/cl-feature-samples";
import { doc, fails, plain } from "./helpers";

const t = (d: ReturnType<typeof doc>) => plain(d.totals);

describe("totals", () => {
  it("gross prices (MntBruto): net = round(gross / 1.19) at the boundary, IVA the difference", () => {
    // 119 × 100/119 = 100 exactly; 1 → 0.84 → 1 (IVA 0); 6 → 5.04 → 5 (IVA 1); 3 → 2.52 → 3 (IVA 0)
    for (const [gross, net] of [[119, 100], [1, 1], [6, 5], [3, 3], [11900, 10000], [14900, 12521]] as const) {
      const d = doc({ gross_prices: true, items: [{ quantity: 1, unit_price: gross, description: "a" }] });
      expect(plain([d.totals.net, d.totals.iva, d.totals.total]), String(gross)).toEqual([net, gross - net, gross]);
    }
  });
  it("IVA rounds half away from zero: 50 × 19 % = 9.5 → 10; 21 × 19 % = 3.99 → 4; 2 × 19 % = 0.38 → 0", () => {
    expect(plain([50, 21, 2].map((p) => doc({ items: [{ quantity: 1, unit_price: p, description: "a" }] }).totals.iva))).toEqual([10, 4, 0]);
  });
  it("a partial withholding with a surcharge: IVANoRet is the IVA not withheld; the total loses the withholding", () => {
    const d = doc({ invoice_type: "46", items: [{ quantity: 1, unit_price: 100000, description: "trigo", surcharge_amount: 5000, taxes: [{ type: "34" }] }] });
    expect(t(d)).toMatchObject({ net: 105000, iva: 19950, additional: [{ type: "34", kind: "R", rate: "4", base: 105000, amount: 4200 }], ivaNotRetained: 15750, total: 120750 });
  });
  it("code 15 withholds the whole IVA: the total is the net and no IVANoRet is written", () => {
    const d = doc({ invoice_type: "46", items: [{ quantity: 3, unit_price: 333, description: "a", taxes: [{ type: "15" }] }] });
    expect(t(d)).toMatchObject({ net: 999, iva: 190, additional: [{ type: "15", amount: 190 }], total: 999 });
    expect(d.totals.ivaNotRetained).toBeUndefined();
  });
  it("client totals are checked, new fields included", () => {
    const items = [{ quantity: 1, unit_price: 1000, description: "a", surcharge_amount: 10 }, { quantity: 1, unit_price: 50, description: "nf", exempt_indicator: 2 }];
    expect(doc({ items, totals: { surcharge: 10, non_billable: 50, total: 1202 } }).totals.total).toBe(1202n);
    expect(fails({ items, totals: { surcharge: 11 } })).toEqual({ code: "TOTALS_MISMATCH", field: "totals.surcharge", expected: "10" });
    expect(fails({ items, totals: { non_billable: 0 } })).toEqual({ code: "TOTALS_MISMATCH", field: "totals.non_billable", expected: "50" });
  });
  it("every feature sample, to the peso", () => {
    const got = Object.fromEntries(Object.entries(FEATURE_INPUTS).map(([n, i]) => [n, t(computeDocument(i))]));
    expect(got).toEqual({
      // 10000 − 5 % = 9500; 2500 + 50 % = 3750; taxed 13250 − 10 % = 11925; IVA 2265.75 → 2266; exempt 5000 − 500
      "33-mixed-global": { subTotal: 17500, discount: 500, surcharge: 1250, additional: [], net: 11925, iva: 2266, ivaRate: "19", exempt: 4500, total: 18691 },
      "33-gross": { subTotal: 14900, discount: 0, surcharge: 0, additional: [], net: 12521, iva: 2379, ivaRate: "19", total: 14900 },
      // NF 2000 − 500 + 100; deposit 1500 in the total; the IndExe 4 line in nothing
      "33-indicators": { subTotal: 12001, discount: 0, surcharge: 0, additional: [{ type: "27", kind: "A", rate: "10", base: 8000, amount: 800 }], net: 8000, iva: 1520, ivaRate: "19", nonBillable: 1600, deposit: 1500, total: 11820 },
      "33-meat": { subTotal: 300000, discount: 0, surcharge: 0, additional: [{ type: "17", kind: "A", rate: "5", base: 250000, amount: 12500 }], net: 300000, iva: 57000, ivaRate: "19", meatBase: 250000, total: 369500 },
      // tax 17 on the slaughter bases 250,000 + 90,000; exempt 20,000 − 5,000; MntBase and MntMargenCom informative
      "33-meat-usd": { subTotal: 420000, discount: 0, surcharge: 0, additional: [{ type: "17", kind: "A", rate: "5", base: 340000, amount: 17000 }], net: 400000, iva: 76000, ivaRate: "19", exempt: 15000, meatBase: 340000, marginBase: 40000, total: 508000 },
      "46-withholdings": { subTotal: 960000, discount: 0, surcharge: 20000, additional: [{ type: "15", kind: "R", rate: "19", base: 60000, amount: 11400 }, { type: "32", kind: "R", rate: "8", base: 920000, amount: 73600 }], net: 980000, iva: 186200, ivaRate: "19", ivaNotRetained: 101200, total: 1081200 },
      "52-transfer": { subTotal: 100000, discount: 0, surcharge: 0, additional: [], net: 100000, iva: 19000, ivaRate: "19", total: 119000 },
      // cents: 1230.00 − 31.00 (2.5 %, whole units) + 60 − 25.75
      "110-customs": { subTotal: 129000, discount: 3100, surcharge: 0, additional: [], exempt: 123325, total: 123325 },
      // 28: 10 m³ × 98,765.4321 → 987,654 (no rate, base informative); 35 sent; IVATerc = 19 % of the third party's 100,000
      "33-fuel-third-party": { subTotal: 12600000, discount: 0, surcharge: 0, additional: [{ type: "28", kind: "A", base: 8000000, amount: 987654 }, { type: "35", kind: "A", base: 4500000, amount: 450000 }], net: 12600000, iva: 2394000, ivaRate: "19", ivaOwn: 2375000, ivaThirdParty: 19000, total: 16431654 },
      // CredEC 65 % of 9,500,000
      "33-construction": { subTotal: 50000000, discount: 0, surcharge: 0, additional: [], net: 50000000, iva: 9500000, ivaRate: "19", constructionCredit: 6175000, total: 53325000 },
      "34-other-currency": { subTotal: 1000000, discount: 0, surcharge: 0, additional: [], exempt: 1000000, total: 1000000 },
      "56-construction": { subTotal: 2000000, discount: 0, surcharge: 0, additional: [], net: 2000000, iva: 380000, ivaRate: "19", constructionCredit: 247000, total: 2133000 },
      // 120 × 1020.5 = 122,460 − 10 % (12,246) = 110,214; IVA 20,940.66 → 20,941
      "52-lots": { subTotal: 122460, discount: 12246, surcharge: 0, additional: [], net: 110214, iva: 20941, ivaRate: "19", total: 131155 },
      "61-references": { subTotal: 1300, discount: 0, surcharge: 0, additional: [], net: 1000, iva: 190, ivaRate: "19", deposit: 300, total: 1490 },
      "34-surcharge": { subTotal: 30000, discount: 0, surcharge: 0, additional: [], exempt: 30450, total: 30450 },
      // the first line is the principal's: IVATerc 120000 × 19 % = 22800, IVAProp the rest;
      // commissions 8 % of 165000 = 13200 (IVA 2508) and 5000 (IVA 950) are deducted
      "43-commission": { subTotal: 165000, discount: 0, surcharge: 0, additional: [], net: 165000, iva: 31350, ivaRate: "19", ivaOwn: 8550, ivaThirdParty: 22800, commissions: { net: 18200, exempt: 0, iva: 3458 }, total: 174692 },
      // 3582 + 3800 = 7382 − 5 % (369.1 → 369) = 7013 gross: net round(7013 / 1.19) = 5893
      "39-features": { subTotal: 8480, discount: 398, surcharge: 300, additional: [], net: 5893, iva: 1120, ivaRate: "19", nonBillable: 1000, total: 7013 },
      "39-net": { subTotal: 25210, discount: 0, surcharge: 0, additional: [], net: 25210, iva: 4790, ivaRate: "19", total: 30000 },
      // 43,000 gross: net round(43000 / 1.19) = 36,134
      "39-show": { subTotal: 43000, discount: 0, surcharge: 0, additional: [], net: 36134, iva: 6866, ivaRate: "19", total: 43000 },
      "41-surcharge": { subTotal: 20000, discount: 0, surcharge: 0, additional: [], exempt: 21000, total: 21000 },
      // 28,000 + IVA 5,320 + tax 27 (10 % of 8,000) 800 + exempt 3,000; the IndExe 2 line to MontoNF
      "33-period": { subTotal: 31500, discount: 0, surcharge: 0, additional: [{ type: "27", kind: "A", rate: "10", base: 8000, amount: 800 }], net: 28000, iva: 5320, ivaRate: "19", exempt: 3000, nonBillable: 500, total: 37120 },
      // 50,000 + IVA 9,500 − commission 5 % (2,500) and its IVA 475
      "43-period": { subTotal: 50000, discount: 0, surcharge: 0, additional: [], net: 50000, iva: 9500, ivaRate: "19", commissions: { net: 2500, exempt: 0, iva: 475 }, total: 56525 },
      "52-export-guide": { subTotal: 1200000, discount: 0, surcharge: 0, additional: [], net: 1200000, iva: 228000, ivaRate: "19", total: 1428000 },
      // cents: 100 × 12.50
      "110-additional-ids": { subTotal: 125000, discount: 0, surcharge: 0, additional: [], exempt: 125000, total: 125000 },
      // 11,900 gross: net 10,000, IVA 1,900; the not-billable 1,000 outside the total
      "39-period": { subTotal: 12900, discount: 0, surcharge: 0, additional: [], net: 10000, iva: 1900, ivaRate: "19", nonBillable: 1000, total: 11900 },
    });
  });
});
