/**
 * The totals check (documents/totals-check.ts) over every document the engine issues: each sample,
 * feature and coverage body of every family agrees with itself (boletas are not checked); an edit of
 * the net, the IVA or a line that keeps the total is named.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { checkTotals } from "../../src/countries/cl/documents/totals-check";
import { parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { buildSamples, type SampleSet } from "../helpers/cl-samples";
import { buildFeatureDtes, signInputs } from "../helpers/cl-feature-samples";
import { COVERAGE_INPUTS } from "../helpers/cl-coverage-samples";

let set: SampleSet;
let all: Record<string, SignedDte>;

beforeAll(async () => {
  set = await buildSamples();
  all = { ...set.dtes, ...(await buildFeatureDtes(set)), ...(await signInputs(set, COVERAGE_INPUTS, 40)) };
});

const totalsOf = (element: string) => checkTotals(parseXml(element).documentElement as XElement);

describe("totals check", () => {
  it("every document the engine issues agrees with itself, every family (boletas: not applicable)", () => {
    const verdicts = Object.fromEntries(Object.entries(all).map(([name, d]) => [name, totalsOf(d.element)]));
    for (const [name, v] of Object.entries(verdicts)) {
      const boleta = name.startsWith("39") || name.startsWith("41");
      expect(v.result, `${name}: ${v.message}`).toBe(boleta ? "NOT_APPLICABLE" : "PASSED");
    }
    for (const family of ["33", "34", "43", "46", "52", "56", "61", "110", "111", "112"]) expect(Object.keys(verdicts).some((n) => n.split("-")[0] === family), family).toBe(true);
  });

  it("a net and IVA moved with the total kept, and a line's amount changed, are each named", () => {
    const d = set.dtes["33"]!;
    const net = Number(/<MntNeto>(\d+)<\/MntNeto>/.exec(d.element)![1]);
    const iva = Number(/<IVA>(\d+)<\/IVA>/.exec(d.element)![1]);
    const moved = d.element.replace(`<MntNeto>${net}</MntNeto>`, `<MntNeto>${net + 1000}</MntNeto>`).replace(`<IVA>${iva}</IVA>`, `<IVA>${iva - 1000}</IVA>`);
    const v = totalsOf(moved);
    expect(v.result).toBe("FAILED");
    expect(v.message).toContain(`the taxed lines come to ${net} after global discounts and surcharges, not MntNeto ${net + 1000}`);
    expect(v.message).toContain(`IVA ${iva - 1000} is not 19 % of MntNeto ${net + 1000}`);
    const amount = /<MontoItem>(\d+)<\/MontoItem>/.exec(d.element)![1]!;
    const line = totalsOf(d.element.replace(`<MontoItem>${amount}</MontoItem>`, `<MontoItem>${Number(amount) + 500}</MontoItem>`));
    expect(line.message).toMatch(/line 1: MontoItem \d+ is not QtyItem/);
    const total = /<MntTotal>(\d+)<\/MntTotal>/.exec(d.element)![1]!;
    const sum = totalsOf(d.element.replace(`<MntTotal>${total}</MntTotal>`, `<MntTotal>${Number(total) + 7}</MntTotal>`));
    expect(sum.message).toContain(`not MntTotal ${Number(total) + 7}`);
  });

  it("a one-peso rounding difference in the IVA is tolerated, two are not", () => {
    const d = set.dtes["33"]!;
    const iva = Number(/<IVA>(\d+)<\/IVA>/.exec(d.element)![1]);
    const total = Number(/<MntTotal>(\d+)<\/MntTotal>/.exec(d.element)![1]);
    const shift = (by: number) => d.element.replace(`<IVA>${iva}</IVA>`, `<IVA>${iva + by}</IVA>`).replace(`<MntTotal>${total}</MntTotal>`, `<MntTotal>${total + by}</MntTotal>`);
    expect(totalsOf(shift(1)).result).toBe("PASSED");
    expect(totalsOf(shift(2)).result).toBe("FAILED");
  });
});
