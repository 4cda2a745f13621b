/**
 * Invoice body (spec §2.7) to computed DTE: one builder per DTE section, composed by
 * computeDocument. Pure: no I/O, no clock.
 *
 * | file | DTE section |
 * |---|---|
 * | schema.ts | the body the API accepts (zod, documented in the OpenAPI document) |
 * | header.ts | IdDoc (dates, payment form, terms and schedule, service, MntBruto, IndTraslado) and the currency |
 * | parties.ts | Emisor, Receptor (Extranjero) |
 * | breakdown.ts | Detalle's SubDscto/SubRecargo (the parts of a line's discount or surcharge) |
 * | lines.ts | Detalle (codes, discounts and surcharges, IndExe, Retenedor, additional and specific taxes) |
 * | line-extras.ts | Detalle's Subcantidad, FchElabor/FchVencim, third-party mark, OtrMnda, ItemEspectaculo/InfoTicket |
 * | discounts.ts | DscRcgGlobal |
 * | totals.ts | Totales (the amount rules, as a table: IVAProp/IVATerc, CredEC, specific taxes too), and the check of client-sent amounts |
 * | commissions.ts | Comisiones of the liquidación-factura (43) |
 * | subtotals.ts | SubTotInfo (and its net, IVA, additional and exempt parts) |
 * | period.ts | Totales of periodic services: MontoPeriodo/TotalPeriodo, SaldoAnterior, VlrPagar |
 * | transport.ts | Transporte and its customs block (Aduana) |
 * | currency.ts | OtraMoneda (exports; domestic documents) |
 * | settlement.ts | IdDoc's payment status (MedioPago, FchCancel, MntCancel, SaldoInsol, the account), RUTMandante, IndNoRebaja |
 * | references.ts | Referencia, CodRef of notes, the boletas' CodVndor/CodCaja line |
 * | model.ts | the computed document the XML (../dte.ts) and the PDF are made from |
 *
 * Conventions (documented in the schema descriptions too):
 * - Numbers may be JSON numbers or decimal strings; they are parsed into scaled BigInt, never floats.
 *   quantity and unit_price: up to 6 decimals; CLP amounts: integers; foreign-currency amounts on
 *   export documents (110/111/112): up to 2 decimals.
 * - items[].taxes says how a line is taxed: `IVA` (19 %, the default on taxable types), `EXE`
 *   (IndExe 1; every line of 34, 41, 110, 111, 112 is exempt anyway), or SII additional-tax codes
 *   (tax-codes.ts), at most 2 per line.
 * - Boletas (39): unit prices are gross (IVA included); MntNeto = round(affected / 1.19), IVA = the
 *   difference.
 * - totals (optional) is checked, never trusted; any difference raises TOTALS_MISMATCH naming the
 *   field and carrying the expected value.
 * - Rounding: half away from zero, at each step of the table in totals.ts.
 * - Specific fuel taxes (28, 35): the client sends each line's amount (or m³ and the sum per m³);
 *   they add to the total and are outside the IVA base.
 * - A second currency (OtraMoneda): exports multiply by the rate (units of it per document unit);
 *   domestic documents divide pesos by the rate (pesos per unit), to 4 decimals. Per-line prices
 *   in another currency (OtrMnda) keep 4 decimals too.
 */
import { EngineError } from "../../errors";
import { type DocumentTypeInfo, resolveDocumentType } from "../document-types";
import { checkLatin1, parseInvoice } from "./checks";
import { buildCommissions } from "./commissions";
import { addAdjustmentsInOtherCurrency, buildOtherCurrency } from "./currency";
import { buildAdjustments } from "./discounts";
import { buildCurrency, buildHeader, buildPayments } from "./header";
import { buildLines } from "./lines";
import type { ComputedDocument } from "./model";
import { buildParties } from "./parties";
import { buildPeriodTotals } from "./period";
import { buildPointOfSale, buildReferences } from "./references";
import { buildPrincipal, buildSettlement } from "./settlement";
import type { InvoiceInput } from "./schema";
import { buildSubtotals } from "./subtotals";
import { buildTotals, checkClientAmounts, lineBases, netAndIva } from "./totals";
import { buildCustoms, buildTransport, exportPaymentForm } from "./transport";

export * from "./model";
export * from "./schema";
export { parseInvoice } from "./checks";
export { ADDITIONAL_TAXES, CURRENCY_SII_NAMES, IVA_RATE, SPECIFIC_TAXES } from "./tax-codes";
export { OTHER_SCALE } from "./line-extras";

/** The line limit of the type is checked before the body is parsed (a huge body fails fast). */
function checkLineCount(raw: unknown, typeInfo?: DocumentTypeInfo): void {
  if (!raw || typeof raw !== "object" || !Array.isArray((raw as { items?: unknown }).items)) return;
  const t = typeInfo ?? (typeof (raw as { invoice_type?: unknown }).invoice_type === "string" ? resolveDocumentType((raw as { invoice_type: string }).invoice_type) : undefined);
  const n = (raw as { items: unknown[] }).items.length;
  const max = t?.maxLines ?? 1000;
  if (n > max) throw new EngineError("TOO_MANY_LINES", `${n} lines; ${t ? t.name : "a document"} allows at most ${max}`, { field: "items", expected: `≤ ${max}` });
}

/**
 * Validates the invoice body and computes every amount. `typeInfo` defaults to the resolution of
 * input.invoice_type.
 */
export function computeDocument(raw: InvoiceInput | unknown, typeInfo?: DocumentTypeInfo): ComputedDocument {
  checkLineCount(raw, typeInfo);
  const input = parseInvoice(raw);
  checkLatin1(input, "");
  const type = typeInfo ?? resolveDocumentType(input.invoice_type);
  checkLineCount(input, type);
  const header = buildHeader(input, type);
  const currency = buildCurrency(input, type);
  const { issuer, receiver } = buildParties(input, type);
  const lines = buildLines(input, type, currency.scale);
  const lineBase = lineBases(lines);
  const { adjustments, bases } = buildAdjustments(input, type, currency.scale, lineBase);
  const grossPrices = header.grossPrices === true || (type.boleta && header.netAmounts !== true);
  // A commission's percentage applies to the net of the taxed lines (with gross prices, net of IVA).
  const commissions = buildCommissions(input, type, currency.scale, grossPrices ? netAndIva(lineBase.taxed, true).net : lineBase.taxed);
  const totals = buildTotals({ lines, adjustments, bases, commissions, grossPrices, constructionCredit: input.construction_credit }, type);
  checkClientAmounts(input, lines, totals, grossPrices, currency.scale);
  const { references, reason } = buildReferences(input, type, totals.total);
  const doc: ComputedDocument = {
    type,
    ...header,
    ...buildPrincipal(input, type),
    payments: buildPayments(input, type, currency.scale, totals.total),
    issuer,
    receiver,
    currency,
    lines,
    adjustments,
    subtotals: buildSubtotals(input, lines, grossPrices),
    totals,
    references,
    commissions,
  };
  const transport = buildTransport(input, type);
  if (transport) doc.transport = transport;
  const customs = buildCustoms(input, type, currency.scale);
  if (customs) doc.customs = customs;
  const fma = exportPaymentForm(input);
  if (fma !== undefined) doc.exportPaymentForm = fma;
  const other = buildOtherCurrency(input, type, currency, totals);
  if (other) {
    doc.otherCurrency = other;
    addAdjustmentsInOtherCurrency(adjustments, other, type, currency.scale);
  }
  if (reason) doc.reason = reason;
  const period = buildPeriodTotals(input, type, totals);
  if (period) doc.periodTotals = period;
  const pos = buildPointOfSale(input, type);
  if (pos) doc.pointOfSale = pos;
  const settlement = buildSettlement(input, type, currency.scale, totals.total);
  if (settlement) doc.settlement = settlement;
  return doc;
}
