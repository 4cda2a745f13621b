/**
 * OtraMoneda of export documents: the exempt amount and the total in a second currency.
 * amount × TpoCambio, rounded half away from zero to whole pesos (CLP) or to 4 decimals.
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { notAllowed } from "./checks";
import type { ComputedDocument, ComputedOtherCurrency, ComputedTotals } from "./model";
import type { InvoiceInput } from "./schema";
import { CURRENCY_SII_NAMES } from "./tax-codes";

const RATE_DECIMALS = 4;

export function buildOtherCurrency(input: InvoiceInput, type: DocumentTypeInfo, currency: ComputedDocument["currency"], totals: ComputedTotals): ComputedOtherCurrency | undefined {
  const o = input.other_currency;
  if (o && !type.export) notAllowed("other_currency", "the second-currency block is issued on export documents (110, 111, 112)");
  const code = (o?.code ?? "CLP").toUpperCase();
  const rateText = o ? formatScaled(parseScaled(o.exchange_rate, RATE_DECIMALS, "other_currency.exchange_rate"), RATE_DECIMALS) : currency.exchangeRate;
  if (!type.export || rateText === undefined || code === currency.code) {
    if (o) throw new EngineError("CURRENCY_NOT_SUPPORTED", `other_currency.code must differ from the document currency ${currency.code}`, { field: "other_currency.code" });
    return undefined;
  }
  const siiName = CURRENCY_SII_NAMES[code];
  if (!siiName) throw new EngineError("CURRENCY_NOT_SUPPORTED", `Currency ${code} has no SII customs name`, { field: "other_currency.code" });
  const rate = parseScaled(rateText, RATE_DECIMALS, "other_currency.exchange_rate");
  if (rate === 0n) throw new EngineError("INVALID_NUMBER", "the exchange rate must be greater than 0", { field: o ? "other_currency.exchange_rate" : "currency.exchange_rate" });
  const scale = code === "CLP" ? 0 : 4;
  const convert = (v: bigint) => divRound(v * rate * pow10(scale), pow10(currency.scale + RATE_DECIMALS));
  return { code, siiName, rate: rateText, scale, exempt: convert(totals.exempt ?? 0n), total: convert(totals.total) };
}
