/**
 * A received DTE's global discounts and surcharges (DscRcgGlobal) for its printed form, read from
 * the XML as the issued path prints its computed ones (src/countries/cl/documents/invoice/discounts.ts):
 * a `$` one carries its amount (ValorDR); a `%` one carries only the percentage, so its amount is
 * that percentage of the base it moves (IndExeDR: none the taxed lines, 1 the exempt ones, 2 the
 * not billable ones) as the lines leave it, rounded half away from zero, as the engine computes it.
 */
import { childElements, childText, type XElement } from "../xml/xml";
import { divRound, formatScaled, parseScaled } from "../documents/decimal";
import type { PrintableAdjustment } from "./pdf";

const DECIMAL = /^-?\d+(?:\.\d+)?$/;
const decimalsOf = (v: string) => (v.includes(".") ? v.length - v.indexOf(".") - 1 : 0);

type Base = "taxed" | "exempt" | "nonBillable";

interface Line {
  amount: string;
  ind: string | undefined;
}

/** The lines' amounts (only well-formed ones) and exemption indicators, read once. */
function linesOf(branch: XElement): Line[] {
  return childElements(branch, "Detalle")
    .map((d) => ({ amount: childText(d, "MontoItem") ?? "0", ind: childText(d, "IndExe") }))
    .filter((l) => DECIMAL.test(l.amount));
}

/** The lines' three bases at `scale` (the largest number of decimals among their amounts). */
function bases(lines: Line[], exemptType: boolean, scale: number): Record<Base, bigint> {
  const out: Record<Base, bigint> = { taxed: 0n, exempt: 0n, nonBillable: 0n };
  for (const { amount, ind } of lines) {
    const v = parseScaled(amount, scale, "MontoItem", { allowNegative: true });
    if (ind === "1" || (ind === undefined && exemptType)) out.exempt += v;
    else if (ind === undefined) out.taxed += v;
    else if (ind === "2") out.nonBillable += v;
    else if (ind === "6") out.nonBillable -= v;
  }
  return out;
}

export function adjustmentsOfXml(branch: XElement, exemptType: boolean): PrintableAdjustment[] | undefined {
  const list = childElements(branch, "DscRcgGlobal");
  if (list.length === 0) return undefined;
  const lines = linesOf(branch);
  const scale = Math.min(6, Math.max(0, ...lines.map((l) => decimalsOf(l.amount))));
  const lineBases = bases(lines, exemptType, scale);
  const out: PrintableAdjustment[] = [];
  for (const g of list) {
    const value = childText(g, "ValorDR") ?? "";
    if (!DECIMAL.test(value)) continue;
    const ind = childText(g, "IndExeDR");
    const base: Base = ind === "1" ? "exempt" : ind === "2" ? "nonBillable" : exemptType ? "exempt" : "taxed";
    const percent = childText(g, "TpoValor") === "%";
    const amount = percent ? formatScaled(divRound(lineBases[base] * parseScaled(value, decimalsOf(value), "ValorDR"), 100n * 10n ** BigInt(decimalsOf(value))), scale) : value;
    out.push({
      kind: childText(g, "TpoMov") === "R" ? "surcharge" : "discount",
      description: childText(g, "GlosaDR"),
      percent: percent ? value : undefined,
      amount,
      base: ind === "1" ? "exempt" : ind === "2" ? "nonBillable" : undefined,
    });
  }
  return out.length > 0 ? out : undefined;
}
