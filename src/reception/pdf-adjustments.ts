/**
 * A received DTE's global discounts and surcharges (DscRcgGlobal) for its printed form, read from
 * the XML as the issued path prints its computed ones (src/countries/cl/documents/invoice/discounts.ts):
 * a `$` one carries its amount (ValorDR); a `%` one carries only the percentage, so its amount is
 * that percentage of the base it moves (IndExeDR: none the taxed lines, 1 the exempt ones, 2 the
 * not billable ones) as the lines leave it, rounded half away from zero, as the engine computes it.
 */
import { childElements, childText, divRound, formatScaled, parseScaled, type XElement } from "../countries/cl";
import type { PrintableAdjustment } from "../pdf";

const DECIMAL = /^-?\d+(?:\.\d+)?$/;
const decimalsOf = (v: string) => (v.includes(".") ? v.length - v.indexOf(".") - 1 : 0);

type Base = "taxed" | "exempt" | "nonBillable";

/** The lines' three bases at `scale` (the largest number of decimals among their amounts). */
function bases(branch: XElement, exemptType: boolean, scale: number): Record<Base, bigint> {
  const out: Record<Base, bigint> = { taxed: 0n, exempt: 0n, nonBillable: 0n };
  for (const d of childElements(branch, "Detalle")) {
    const amount = childText(d, "MontoItem") ?? "0";
    if (!DECIMAL.test(amount)) continue;
    const v = parseScaled(amount, scale, "MontoItem", { allowNegative: true });
    const ind = childText(d, "IndExe");
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
  const amounts = childElements(branch, "Detalle").map((d) => childText(d, "MontoItem") ?? "0");
  const scale = Math.min(6, Math.max(0, ...amounts.filter((a) => DECIMAL.test(a)).map(decimalsOf)));
  const lineBases = bases(branch, exemptType, scale);
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
