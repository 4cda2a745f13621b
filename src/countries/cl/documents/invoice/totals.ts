/** Totales: net, exempt, IVA, additional taxes and withholdings, and the check of client totals. */
import { EngineError } from "../../errors";
import { divRound, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { MAX_AMOUNT, sameAmount, sameRate } from "./checks";
import type { ComputedLine, ComputedTotals } from "./model";
import type { InvoiceInput } from "./schema";
import { ADDITIONAL_TAXES, IVA_RATE, RATE_SCALE } from "./tax-codes";

export function buildTotals(lines: ComputedLine[], type: DocumentTypeInfo): ComputedTotals {
  const subTotal = lines.reduce((s, l) => s + l.gross, 0n);
  const discount = lines.reduce((s, l) => s + l.discount, 0n);
  const affected = lines.filter((l) => !l.exempt).reduce((s, l) => s + l.amount, 0n);
  const exemptSum = lines.filter((l) => l.exempt).reduce((s, l) => s + l.amount, 0n);
  const totals: ComputedTotals = { subTotal, discount, additional: [], total: 0n };
  if (type.boleta) {
    if (!type.exempt && affected > 0n) {
      const net = divRound(affected * 100n, 100n + IVA_RATE);
      totals.net = net;
      totals.iva = affected - net;
      totals.ivaRate = String(IVA_RATE);
    }
    if (type.exempt || exemptSum > 0n) totals.exempt = exemptSum;
    totals.total = affected + exemptSum;
  } else if (type.export) {
    totals.exempt = exemptSum;
    totals.total = exemptSum;
  } else {
    const hasAffected = lines.some((l) => !l.exempt);
    if (hasAffected) {
      totals.net = affected;
      totals.ivaRate = String(IVA_RATE);
      totals.iva = divRound(affected * IVA_RATE, 100n);
    }
    if (type.exempt || exemptSum > 0n) totals.exempt = exemptSum;
    const codes = [...new Set(lines.flatMap((l) => l.additionalTaxCodes))].sort((a, b) => Number(a) - Number(b));
    for (const c of codes) {
      const info = ADDITIONAL_TAXES[c]!;
      const base = lines.filter((l) => l.additionalTaxCodes.includes(c)).reduce((s, l) => s + l.amount, 0n);
      const rateScaled = parseScaled(info.rate, RATE_SCALE, "rate");
      const amount = divRound(base * rateScaled, 100n * pow10(RATE_SCALE));
      totals.additional.push({ type: c, kind: info.kind, rate: info.rate, base, amount });
    }
    const add = totals.additional.filter((t) => t.kind === "A").reduce((s, t) => s + t.amount, 0n);
    const ret = totals.additional.filter((t) => t.kind === "R").reduce((s, t) => s + t.amount, 0n);
    totals.total = (totals.net ?? 0n) + (totals.exempt ?? 0n) + (totals.iva ?? 0n) + add - ret;
  }
  if (totals.total > MAX_AMOUNT) throw new EngineError("AMOUNT_OUT_OF_RANGE", `The total exceeds 18 digits`, { field: "totals.total" });

  return totals;
}

/** Every amount the client sent (line taxes, totals) must equal the engine's. */
export function checkClientAmounts(input: InvoiceInput, lines: ComputedLine[], totals: ComputedTotals, type: DocumentTypeInfo, scale: number): void {
  const { subTotal, discount } = totals;
  // Per-line tax amounts sent by the client
  input.items.forEach((it, i) => {
    const line = lines[i]!;
    (it.taxes ?? []).forEach((t, j) => {
      if (t.amount === undefined) return;
      const tt = t.type.trim().toUpperCase();
      const f = `items[${i}].taxes[${j}].amount`;
      if (tt === "EXE") sameAmount(t.amount, 0n, scale, f);
      else if (tt === "IVA") sameAmount(t.amount, type.boleta ? line.amount - divRound(line.amount * 100n, 100n + IVA_RATE) : divRound(line.amount * IVA_RATE, 100n), scale, f);
      else sameAmount(t.amount, divRound(line.amount * parseScaled(ADDITIONAL_TAXES[tt]!.rate, RATE_SCALE, f), 100n * pow10(RATE_SCALE)), scale, f);
    });
  });

  // Client totals
  if (input.totals) {
    const t = input.totals;
    sameAmount(t.sub_total, subTotal, scale, "totals.sub_total");
    sameAmount(t.discount, discount, scale, "totals.discount");
    (t.taxes ?? []).forEach((tx, j) => {
      const f = `totals.taxes[${j}]`;
      const tt = tx.type.trim().toUpperCase();
      if (tt === "IVA") {
        if (totals.iva === undefined) throw new EngineError("TOTALS_MISMATCH", `${f}: the document has no IVA`, { field: `${f}.type`, expected: "no IVA entry" });
        sameAmount(tx.amount, totals.iva, scale, `${f}.amount`);
        sameAmount(tx.base_amount, totals.net ?? 0n, scale, `${f}.base_amount`);
        sameRate(tx.rate, String(IVA_RATE), `${f}.rate`);
      } else if (tt === "EXE") {
        sameAmount(tx.amount, 0n, scale, `${f}.amount`);
        sameAmount(tx.base_amount, totals.exempt ?? 0n, scale, `${f}.base_amount`);
      } else {
        const c = totals.additional.find((a) => a.type === tt);
        if (!c) throw new EngineError("TOTALS_MISMATCH", `${f}: no line carries tax ${tx.type}`, { field: `${f}.type`, expected: "absent" });
        sameAmount(tx.amount, c.amount, scale, `${f}.amount`);
        sameAmount(tx.base_amount, c.base, scale, `${f}.base_amount`);
        sameRate(tx.rate, c.rate, `${f}.rate`);
      }
    });
    sameAmount(t.total, totals.total, scale, "totals.total");
  }

}
