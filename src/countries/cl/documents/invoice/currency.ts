/**
 * OtraMoneda. Export documents: the exempt amount and the total in a second currency, amount ×
 * TpoCambio, rounded half away from zero to whole pesos (CLP) or to 4 decimals. Domestic documents:
 * every amount of Totales in a foreign currency, pesos ÷ TpoCambio to 4 decimals. The "$" global
 * discounts and surcharges too (ValorDROtrMnda).
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed } from "./checks";
import type { ComputedAdjustment, ComputedDocument, ComputedOtherCurrency, ComputedTotals } from "./model";
import type { InvoiceInput } from "./schema";
import { CURRENCY_SII_NAMES } from "./tax-codes";

const RATE_DECIMALS = 4;

export function buildOtherCurrency(input: InvoiceInput, type: DocumentTypeInfo, currency: ComputedDocument["currency"], totals: ComputedTotals): ComputedOtherCurrency | undefined {
  const o = input.other_currency;
  if (o && !type.export) return domesticOtherCurrency(o, type, totals);
  const code = (o?.code ?? "CLP").toUpperCase();
  const rateText = o ? formatScaled(parseScaled(o.exchange_rate, RATE_DECIMALS, "other_currency.exchange_rate"), RATE_DECIMALS) : currency.exchangeRate;
  if (!type.export || rateText === undefined || code === currency.code) {
    if (o) throw new EngineError("CURRENCY_NOT_SUPPORTED", `other_currency.code must differ from the document currency ${currency.code}`, { field: "other_currency.code" });
    return undefined;
  }
  const siiName = siiNameOf(code);
  const rate = positiveRate(rateText, o ? "other_currency.exchange_rate" : "currency.exchange_rate");
  const scale = code === "CLP" ? 0 : 4;
  const convert = (v: bigint) => divRound(v * rate * pow10(scale), pow10(currency.scale + RATE_DECIMALS));
  const total = convert(totals.total);
  withinRange(total, scale);
  return { code, siiName, rate: rateText, scale, exempt: convert(totals.exempt ?? 0n), total };
}

/** Domestic types whose schema (Documento) carries OtraMoneda: every one but boletas. */
export const DOMESTIC_OTHER_CURRENCY_TYPES: readonly number[] = [33, 34, 46, 52, 56, 61];

/**
 * OtraMoneda of a domestic document (amounts in pesos): exchange_rate is pesos per unit of the
 * other currency; each amount is round(pesos / rate) to 4 decimals. Zero amounts are left out (the
 * schema's minimum is 0.0001); MntTotOtrMnda is required, so a zero total cannot carry the block.
 */
function domesticOtherCurrency(o: NonNullable<InvoiceInput["other_currency"]>, type: DocumentTypeInfo, totals: ComputedTotals): ComputedOtherCurrency {
  if (!DOMESTIC_OTHER_CURRENCY_TYPES.includes(type.code)) notAllowed("other_currency", `the second-currency block (OtraMoneda) is not part of ${type.name}'s schema; it is used on ${[...DOMESTIC_OTHER_CURRENCY_TYPES, 110, 111, 112].join(", ")}`);
  const code = o.code.toUpperCase();
  if (code === "CLP") throw new EngineError("CURRENCY_NOT_SUPPORTED", "other_currency.code must differ from the document currency CLP", { field: "other_currency.code" });
  const siiName = siiNameOf(code);
  const rateText = formatScaled(parseScaled(o.exchange_rate, RATE_DECIMALS, "other_currency.exchange_rate"), RATE_DECIMALS);
  const rate = positiveRate(rateText, "other_currency.exchange_rate");
  const convert = (v: bigint) => divRound(v * pow10(2 * RATE_DECIMALS), rate);
  const nonZero = (v: bigint | undefined) => (v === undefined || v === 0n ? undefined : convert(v));
  const total = convert(totals.total);
  if (total <= 0n) notAllowed("other_currency", "a document whose total is 0 has no amount to show in another currency (MntTotOtrMnda must be at least 0.0001)");
  withinRange(total, RATE_DECIMALS);
  const out: ComputedOtherCurrency = { code, siiName, rate: rateText, scale: RATE_DECIMALS, exempt: nonZero(totals.exempt) ?? 0n, total };
  const net = nonZero(totals.net);
  if (net !== undefined) out.net = net;
  const meatBase = nonZero(totals.meatBase);
  if (meatBase !== undefined) out.meatBase = meatBase;
  const marginBase = nonZero(totals.marginBase);
  if (marginBase !== undefined) out.marginBase = marginBase;
  const iva = nonZero(totals.iva);
  if (iva !== undefined) out.iva = iva;
  const taxes = totals.additional.filter((x) => x.amount > 0n).map((x) => ({ type: x.type, ...(x.rate !== undefined ? { rate: x.rate } : {}), amount: convert(x.amount) }));
  if (taxes.length > 0) out.taxes = taxes;
  const ivaNotRetained = nonZero(totals.ivaNotRetained);
  if (ivaNotRetained !== undefined) out.ivaNotRetained = ivaNotRetained;
  return out;
}

/**
 * ValorDROtrMnda: each "$" global discount or surcharge in the second currency, converted like the
 * totals (exports: × rate; domestic: ÷ rate, 4 decimals). A "%" one is a percentage in any currency
 * and carries none.
 */
export function addAdjustmentsInOtherCurrency(adjustments: ComputedAdjustment[], o: ComputedOtherCurrency, type: DocumentTypeInfo, currencyScale: number): void {
  const rate = parseScaled(o.rate, RATE_DECIMALS, "other_currency.exchange_rate");
  const convert = type.export ? (v: bigint) => divRound(v * rate * pow10(o.scale), pow10(currencyScale + RATE_DECIMALS)) : (v: bigint) => divRound(v * pow10(2 * RATE_DECIMALS), rate);
  for (const a of adjustments) {
    if (a.valueType !== "$") continue;
    const v = convert(a.amount < 0n ? -a.amount : a.amount);
    if (v > 0n) a.otherValue = v;
  }
}

function siiNameOf(code: string): string {
  const siiName = CURRENCY_SII_NAMES[code];
  if (!siiName) throw new EngineError("CURRENCY_NOT_SUPPORTED", `Currency ${code} has no SII customs name`, { field: "other_currency.code" });
  return siiName;
}

/** TpoCambio: decimal(10,4), 0.0001–999999.9999. */
const MAX_RATE = 9_999_999_999n;
/** Amounts in another currency: at most 99999999999999.9999 (18 digits, 4 decimals). */
const MAX_OTHER = 999_999_999_999_999_999n;

function positiveRate(text: string, field: string): bigint {
  const rate = parseScaled(text, RATE_DECIMALS, field);
  if (rate === 0n) throw new EngineError("INVALID_NUMBER", "the exchange rate must be greater than 0", { field });
  if (rate > MAX_RATE) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${field} must be at most 999999.9999 (TpoCambio)`, { field, expected: "≤ 999999.9999" });
  return rate;
}

function withinRange(total: bigint, scale: number): void {
  if (total * pow10(RATE_DECIMALS - scale) > MAX_OTHER) {
    throw new EngineError("AMOUNT_OUT_OF_RANGE", "the total in the second currency exceeds 18 digits; check other_currency.exchange_rate", { field: "other_currency.exchange_rate" });
  }
}
