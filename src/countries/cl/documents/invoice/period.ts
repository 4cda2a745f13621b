/**
 * Totales of periodic services: MontoPeriodo (TotalPeriodo on boletas), SaldoAnterior and VlrPagar.
 * DTE_v10 names them "Total de Ventas o Servicios del Periodo", "Saldo Anterior - Puede ser Negativo
 * o Positivo" and "Valor a Pagar Total del documento"; the Formato's rules are not in our reference,
 * so the amounts are our reading, in whole pesos:
 *
 * | element | rule |
 * |---|---|
 * | MontoPeriodo / TotalPeriodo | MntTotal + MontoNF (the period's sales and services, the not-billable ones included) |
 * | SaldoAnterior | as sent, positive (owed) or negative (in the recipient's favour) |
 * | VlrPagar | MontoPeriodo + SaldoAnterior |
 */
import { EngineError } from "../../errors";
import { parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { MAX_AMOUNT, notAllowed, sameAmount } from "./checks";
import type { ComputedPeriodTotals, ComputedTotals } from "./model";
import type { InvoiceInput } from "./schema";

function inRange(v: bigint, field: string, min: bigint): bigint {
  if (v > MAX_AMOUNT || v < min) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${field} is ${v}; the SII allows ${min === 0n ? "0" : `−${MAX_AMOUNT}`} to ${MAX_AMOUNT}`, { field, expected: `${min === 0n ? "0" : `−${MAX_AMOUNT}`}–${MAX_AMOUNT}` });
  return v;
}

export function buildPeriodTotals(input: InvoiceInput, type: DocumentTypeInfo, totals: ComputedTotals): ComputedPeriodTotals | undefined {
  const p = input.period_totals;
  if (!p) return undefined;
  if (type.export) notAllowed("period_totals", `the Totales of ${type.name} have no period amount, previous balance or amount to pay`);
  // TotalPeriodo is a nonNegativeInteger on boletas; MontoPeriodo a signed integer on DTE_v10.
  const periodAmount = inRange(totals.total + (totals.nonBillable ?? 0n), "period_totals.period_amount", type.boleta ? 0n : -MAX_AMOUNT);
  sameAmount(p.period_amount, periodAmount, 0, "period_totals.period_amount");
  const out: ComputedPeriodTotals = { periodAmount, amountToPay: periodAmount };
  if (p.previous_balance !== undefined) {
    out.previousBalance = inRange(parseScaled(p.previous_balance, 0, "period_totals.previous_balance", { allowNegative: true }), "period_totals.previous_balance", -MAX_AMOUNT);
    out.amountToPay = inRange(periodAmount + out.previousBalance, "period_totals.amount_to_pay", -MAX_AMOUNT);
  }
  sameAmount(p.amount_to_pay, out.amountToPay, 0, "period_totals.amount_to_pay");
  return out;
}
