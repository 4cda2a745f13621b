/**
 * SubTotInfo: sub-totals for printing, each the sum of the MontoItem of the lines it names
 * (ValSubtotSTI). With `breakdown` also its parts, our reading of DTE_v10's "Valor Neto / del IVA /
 * Impuestos adicionales / no Afecto o Exento del Subtotal" (informative, before global adjustments):
 *
 * | element | rule |
 * |---|---|
 * | SubTotNetoSTI, SubTotIVASTI | net and IVA of the sub-total's taxed lines (Σ MontoItem), as Totales computes them (gross prices: round(Σ × 100 / 119) and the rest) |
 * | SubTotAdicSTI | Σ of its lines' additional taxes (kind A, not withholdings): round(MontoItem × TasaImp / 100) per line and code (MntBaseFaena instead for 17 and 18 when sent); the amount sent for the specific taxes 28 and 35 |
 * | SubTotExeSTI | Σ MontoItem of its exempt lines |
 */
import { EngineError } from "../../errors";
import { divRound, parseScaled, pow10 } from "../decimal";
import type { ComputedLine, ComputedSubtotal } from "./model";
import type { InvoiceInput } from "./schema";
import { ADDITIONAL_TAXES, RATE_SCALE, SLAUGHTER_BASE_TAXES, SPECIFIC_TAXES } from "./tax-codes";
import { isTaxed, netAndIva } from "./totals";

const sum = (xs: bigint[]) => xs.reduce((s, x) => s + x, 0n);

function lineAdditional(l: ComputedLine): bigint {
  return sum(
    l.additionalTaxCodes.map((c) => {
      if (SPECIFIC_TAXES[c]) return l.specificTaxes?.find((x) => x.code === c)?.amount ?? 0n;
      const info = ADDITIONAL_TAXES[c];
      if (!info || info.kind !== "A") return 0n;
      const base = SLAUGHTER_BASE_TAXES.includes(c) && l.retainer?.baseAmount !== undefined ? l.retainer.baseAmount : l.amount;
      return divRound(base * parseScaled(info.rate, RATE_SCALE, "rate"), 100n * pow10(RATE_SCALE));
    }),
  );
}

function breakdown(lines: ComputedLine[], grossPrices: boolean): NonNullable<ComputedSubtotal["breakdown"]> {
  const { net, iva } = netAndIva(sum(lines.filter(isTaxed).map((l) => l.amount)), grossPrices);
  return { net, iva, additional: sum(lines.map(lineAdditional)), exempt: sum(lines.filter((l) => l.exempt).map((l) => l.amount)) };
}

export function buildSubtotals(input: InvoiceInput, lines: ComputedLine[], grossPrices: boolean): ComputedSubtotal[] {
  return (input.subtotals ?? []).map((s, i) => {
    const p = `subtotals[${i}]`;
    const own = s.lines.map((n, j) => {
      const line = lines[n - 1];
      if (!line) throw new EngineError("INVALID_INPUT", `${p}.lines[${j}]: there is no line ${n} (the document has ${lines.length})`, { field: `${p}.lines[${j}]`, expected: `1–${lines.length}` });
      return line;
    });
    const out: ComputedSubtotal = { no: i + 1, description: s.description, lines: s.lines, value: sum(own.map((l) => l.amount)) };
    if (s.order !== undefined) out.order = s.order;
    if (s.breakdown) out.breakdown = breakdown(own, grossPrices);
    return out;
  });
}
