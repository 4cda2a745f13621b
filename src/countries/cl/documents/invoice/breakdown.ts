/**
 * SubDscto and SubRecargo: the breakdown of a line's discount or surcharge into up to 5 parts, each
 * a percentage of the line's gross (quantity × price) or an amount (ValorDscto/ValorRecargo, 2
 * decimals). Our reading of DTE_v10 (the Formato document is not in the reference): the parts add
 * up, rounded to whole units, to the line's DescuentoMonto/RecargoMonto; without discount_percent
 * or discount_amount the line's amount is that sum.
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed } from "./checks";
import type { ComputedLine } from "./model";
import type { InvoiceInput } from "./schema";
import { RATE_SCALE } from "./tax-codes";

type Part = NonNullable<InvoiceInput["items"][number]["discount_breakdown"]>[number];
/** ValorDscto and ValorRecargo carry 2 decimals (decimal 18.2, at least 0.01). */
const PART_SCALE = 2;

export interface Breakdown {
  parts: NonNullable<ComputedLine["discountParts"]>;
  /** The sum, rounded to whole units and scaled by the document's currency scale. */
  amount: bigint;
}

/** The parts of a discount or surcharge; `gross` is scaled by `scale` (0 or 2). */
export function breakdownOf(parts: Part[], gross: bigint, field: string, type: DocumentTypeInfo, scale: number): Breakdown {
  if (type.boleta || type.xmlBranch === "Liquidacion") notAllowed(field, `SubDscto and SubRecargo are not part of ${type.name}`);
  const gross2 = gross * pow10(PART_SCALE - scale);
  let sum = 0n;
  const out = parts.map((part, j) => {
    const f = `${field}[${j}]`;
    if ((part.percent === undefined) === (part.amount === undefined)) {
      throw new EngineError("INVALID_INPUT", `${f} needs exactly one of percent and amount`, { field: f });
    }
    if (part.percent !== undefined) {
      const pct = parseScaled(part.percent, RATE_SCALE, `${f}.percent`);
      if (pct === 0n || pct > 10000n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${f}.percent must be greater than 0 and at most 100`, { field: `${f}.percent`, expected: "0.01–100" });
      sum += divRound(gross2 * pct, 100n * pow10(RATE_SCALE));
      return { type: "%" as const, value: formatScaled(pct, RATE_SCALE) };
    }
    const v = parseScaled(part.amount, PART_SCALE, `${f}.amount`);
    if (v === 0n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${f}.amount must be at least 0.01`, { field: `${f}.amount`, expected: "≥ 0.01" });
    sum += v;
    return { type: "$" as const, value: formatScaled(v, PART_SCALE) };
  });
  return { parts: out, amount: divRound(sum, pow10(PART_SCALE)) * pow10(scale) };
}

/** The line's DescuentoMonto/RecargoMonto must be the sum of its parts. */
export function checkBreakdown(b: Breakdown, lineAmount: bigint, field: string, scale: number): void {
  if (b.amount !== lineAmount) {
    const e = formatScaled(b.amount, scale);
    throw new EngineError("TOTALS_MISMATCH", `${field} adds up to ${e} but the line's amount is ${formatScaled(lineAmount, scale)}`, { field, expected: formatScaled(lineAmount, scale) });
  }
}
