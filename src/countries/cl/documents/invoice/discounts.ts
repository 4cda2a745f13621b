/**
 * DscRcgGlobal: global discounts and surcharges. Each one moves one base (taxed, exempt or not
 * billable); a percentage is taken of that base as the lines leave it, before any other global
 * adjustment, and rounded half away from zero.
 */
import { EngineError } from "../../errors";
import { formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed } from "./checks";
import { percentOf } from "./lines";
import type { ComputedAdjustment } from "./model";
import type { InvoiceInput } from "./schema";
import { RATE_SCALE } from "./tax-codes";

/** The three bases global adjustments apply to, in currency units. */
export interface Bases {
  taxed: bigint;
  exempt: bigint;
  nonBillable: bigint;
}

const BASE_OF = { TAXED: undefined, EXEMPT: 1, NON_BILLABLE: 2 } as const;
const KEY_OF = { TAXED: "taxed", EXEMPT: "exempt", NON_BILLABLE: "nonBillable" } as const;

export function buildAdjustments(input: InvoiceInput, type: DocumentTypeInfo, scale: number, bases: Bases): { adjustments: ComputedAdjustment[]; bases: Bases } {
  const list = input.global_adjustments ?? [];
  if (list.length > 0 && type.code === 43) notAllowed("global_adjustments", "a liquidación-factura carries no global discounts or surcharges");
  const after: Bases = { ...bases };
  const adjustments = list.map((g, i): ComputedAdjustment => {
    const p = `global_adjustments[${i}]`;
    const appliesTo = g.applies_to ?? (type.exempt ? "EXEMPT" : "TAXED");
    if (appliesTo === "TAXED" && type.exempt) {
      notAllowed(`${p}.applies_to`, `${type.name} has no taxed amount; a global ${g.kind.toLowerCase()} there applies to EXEMPT or NON_BILLABLE`);
    }
    if ((g.percent === undefined) === (g.amount === undefined)) {
      throw new EngineError("INVALID_INPUT", `${p}: send exactly one of percent and amount`, { field: `${p}.percent` });
    }
    const key = KEY_OF[appliesTo];
    let amount: bigint;
    let value: string;
    if (g.percent !== undefined) {
      const max = g.kind === "DISCOUNT" || type.boleta ? 10000n : 99999n;
      const pct = parseScaled(g.percent, RATE_SCALE, `${p}.percent`);
      if (pct === 0n || pct > max) {
        const m = formatScaled(max, RATE_SCALE);
        throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}.percent must be greater than 0 and at most ${m}`, { field: `${p}.percent`, expected: `0.01–${m}` });
      }
      amount = percentOf(bases[key], pct);
      value = formatScaled(pct, RATE_SCALE);
    } else {
      amount = parseScaled(g.amount, scale, `${p}.amount`);
      if (amount === 0n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}.amount must be greater than 0`, { field: `${p}.amount` });
      value = formatScaled(amount, scale);
    }
    after[key] += g.kind === "DISCOUNT" ? -amount : amount;
    if (key !== "nonBillable" && after[key] < 0n) {
      throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}: the discounts exceed the ${appliesTo.toLowerCase().replace("_", "-")} amount ${formatScaled(bases[key], scale)}`, { field: `${p}.${g.percent !== undefined ? "percent" : "amount"}` });
    }
    const adj: ComputedAdjustment = { lineNo: i + 1, kind: g.kind === "DISCOUNT" ? "D" : "R", valueType: g.percent !== undefined ? "%" : "$", value, amount };
    if (g.description) adj.description = g.description;
    const base = BASE_OF[appliesTo];
    if (base !== undefined) adj.base = base;
    return adj;
  });
  return { adjustments, bases: after };
}

/**
 * The percentage by which the taxed adjustments changed the taxed base, for the bases of the
 * additional taxes: every taxed adjustment must be a percentage when the document carries
 * additional taxes or withholdings (an amount cannot be shared among the tax bases exactly).
 */
export function scaleTaxBase(base: bigint, adjustments: ComputedAdjustment[], field: string): bigint {
  let out = base;
  for (const a of adjustments) {
    if (a.base !== undefined) continue;
    if (a.valueType === "$") notAllowed(field, "a global discount or surcharge by amount on the taxed base cannot be shared among additional taxes or withholdings; send it as a percentage");
    const moved = percentOf(base, parseScaled(a.value, RATE_SCALE, field));
    out += a.kind === "D" ? -moved : moved;
  }
  return out;
}
