/**
 * The optional parts of a Detalle line beyond its amount: sub-quantities (Subcantidad), elaboration
 * and expiry dates (FchElabor, FchVencim), the third-party mark (IVATerc), the price in another
 * currency (OtrMnda), the show ticket of boletas (ItemEspectaculo, InfoTicket) and a boleta line's
 * principal (RUTMandante).
 */
import { EngineError } from "../../errors";
import { divRound, formatScaled, parseScaled, pow10 } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { checkDate, checkDateTime, notAllowed } from "./checks";
import type { ComputedLine, ComputedTicket } from "./model";
import { rutOf } from "./parties";
import type { InvoiceInput } from "./schema";
import { QTY_SCALE, RATE_SCALE } from "./tax-codes";

type Item = InvoiceInput["items"][number];

/** Amounts in another currency keep 4 decimals (SII MontoImpType of OtrMnda, TpoCambio). */
export const OTHER_SCALE = 4;
/** Amounts in another currency: at most 99999999999999.9999 (scaled by 10^4). */
const MAX_OTHER = 999_999_999_999_999_999n;
/** Types whose IVA may be partly third parties' (IVATerc / IVAProp in Totales). */
export const THIRD_PARTY_TYPES: readonly number[] = [33, 43, 46, 52, 56, 61];

/** Adds every optional part the item sends to the computed line; `qty` is scaled by QTY_SCALE. */
export function addLineExtras(line: ComputedLine, it: Item, p: string, type: DocumentTypeInfo, qty: bigint): void {
  if (it.sub_quantities) line.subQuantities = subQuantities(it.sub_quantities, p, type, qty);
  dates(line, it, p, type);
  if (it.third_party) line.thirdParty = thirdParty(line, p, type);
  if (it.other_currency) line.otherCurrency = otherCurrencyLine(it, p, type, qty);
  if (it.ticket) line.show = show(it.ticket, p, type);
  if (it.principal_rut !== undefined) {
    if (!type.boleta) notAllowed(`${p}.principal_rut`, `a line's RUTMandante is part of boletas (39, 41) only; on ${type.name} send principal_rut for the whole document`);
    line.principalRut = rutOf(it.principal_rut, `${p}.principal_rut`);
  }
}

function subQuantities(subs: NonNullable<Item["sub_quantities"]>, p: string, type: DocumentTypeInfo, qty: bigint): NonNullable<ComputedLine["subQuantities"]> {
  if (type.boleta) notAllowed(`${p}.sub_quantities`, `sub-quantities (Subcantidad) are not part of ${type.name}'s schema`);
  let sum = 0n;
  const out = subs.map((s, j) => {
    const f = `${p}.sub_quantities[${j}]`;
    const q = parseScaled(s.quantity, QTY_SCALE, `${f}.quantity`);
    if (q === 0n) throw new EngineError("INVALID_NUMBER", `${f}.quantity must be greater than 0`, { field: `${f}.quantity` });
    if (s.code_type !== undefined && !type.export) notAllowed(`${f}.code_type`, "TipCodSubQty is used on export documents (110, 111, 112) only");
    sum += q;
    return { qty: formatScaled(q, QTY_SCALE), code: s.code, ...(s.code_type !== undefined ? { codeType: s.code_type } : {}) };
  });
  if (sum > qty) {
    const max = formatScaled(qty, QTY_SCALE);
    throw new EngineError("AMOUNT_OUT_OF_RANGE", `${p}: the sub-quantities add up to ${formatScaled(sum, QTY_SCALE)}, more than the line's quantity ${max}`, { field: `${p}.sub_quantities`, expected: `≤ ${max}` });
  }
  return out;
}

function dates(line: ComputedLine, it: Item, p: string, type: DocumentTypeInfo): void {
  for (const k of ["elaboration_date", "expiry_date"] as const) {
    if (it[k] === undefined) continue;
    if (type.boleta) notAllowed(`${p}.${k}`, `${type.name}'s schema has no item dates (FchElabor, FchVencim)`);
    checkDate(it[k], `${p}.${k}`);
  }
  if (it.elaboration_date && it.expiry_date && it.expiry_date < it.elaboration_date) {
    throw new EngineError("INVALID_DATE", `${p}.expiry_date ${it.expiry_date} is before the elaboration date ${it.elaboration_date}`, { field: `${p}.expiry_date`, expected: `≥ ${it.elaboration_date}` });
  }
  if (it.elaboration_date) line.elaborationDate = it.elaboration_date;
  if (it.expiry_date) line.expiryDate = it.expiry_date;
}

function thirdParty(line: ComputedLine, p: string, type: DocumentTypeInfo): true {
  if (!THIRD_PARTY_TYPES.includes(type.code)) notAllowed(`${p}.third_party`, `IVA de terceros (IVATerc) is carried by ${THIRD_PARTY_TYPES.join(", ")}, not by ${type.name}`);
  if (line.exempt || line.indicator !== undefined) notAllowed(`${p}.third_party`, "only a taxed line has IVA to attribute to a third party");
  return true;
}

function otherCurrencyLine(it: Item, p: string, type: DocumentTypeInfo, qty: bigint): NonNullable<ComputedLine["otherCurrency"]> {
  const o = it.other_currency!;
  const f = `${p}.other_currency`;
  if (type.boleta || type.code === 43) notAllowed(f, `${type.name}'s schema has no price in another currency (OtrMnda)`);
  const price = parseScaled(o.unit_price, OTHER_SCALE, `${f}.unit_price`);
  if (price === 0n) throw new EngineError("INVALID_NUMBER", `${f}.unit_price must be greater than 0 (PrcOtrMon)`, { field: `${f}.unit_price` });
  const gross = divRound(qty * price, pow10(QTY_SCALE));
  const pct = (v: unknown, k: string) => (v === undefined ? undefined : divRound(gross * parseScaled(v, RATE_SCALE, k), 100n * pow10(RATE_SCALE)));
  const part = (amount: unknown, percent: unknown, k: string) => (amount !== undefined ? parseScaled(amount, OTHER_SCALE, `${f}.${k}`) : pct(percent, `${p}.${k.replace("amount", "percent")}`));
  const discount = part(o.discount_amount, it.discount_percent, "discount_amount");
  const surcharge = part(o.surcharge_amount, it.surcharge_percent, "surcharge_amount");
  const amount = gross - (discount ?? 0n) + (surcharge ?? 0n);
  if (amount < 0n) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${f}.discount_amount exceeds the line's amount in ${o.code}`, { field: `${f}.discount_amount` });
  if (amount > MAX_OTHER) throw new EngineError("AMOUNT_OUT_OF_RANGE", `${f}: the line's amount in ${o.code} exceeds 18 digits`, { field: `${f}.unit_price` });
  const out: NonNullable<ComputedLine["otherCurrency"]> = { code: o.code.toUpperCase(), price: formatScaled(price, OTHER_SCALE), amount };
  // FctConv converts to pesos: the line's own price is in pesos (checked) except on exports (written as sent).
  if (o.conversion_factor !== undefined) out.factor = type.export ? formatScaled(parseScaled(o.conversion_factor, OTHER_SCALE, `${f}.conversion_factor`), OTHER_SCALE) : conversionFactor(o.conversion_factor, it.unit_price, price, p);
  if (discount) out.discount = discount;
  if (surcharge) out.surcharge = surcharge;
  return out;
}

/** FctConv: pesos per unit; the line's unit_price must be the converted price. */
function conversionFactor(factorIn: unknown, unitPrice: unknown, price: bigint, p: string): string {
  const factor = parseScaled(factorIn, OTHER_SCALE, `${p}.other_currency.conversion_factor`);
  if (factor === 0n) throw new EngineError("INVALID_NUMBER", `${p}.other_currency.conversion_factor must be greater than 0`, { field: `${p}.other_currency.conversion_factor` });
  // Compared at the precision the client wrote unit_price with (1020.5 matches 1020.50004).
  const sent = parseScaled(unitPrice, QTY_SCALE, `${p}.unit_price`);
  const decimals = (formatScaled(sent, QTY_SCALE).split(".")[1] ?? "").length;
  const expected = divRound(price * factor * pow10(decimals), pow10(2 * OTHER_SCALE));
  if (sent !== expected * pow10(QTY_SCALE - decimals)) {
    const e = formatScaled(expected, decimals);
    throw new EngineError("TOTALS_MISMATCH", `${p}.unit_price must be other_currency.unit_price × conversion_factor = ${e}`, { field: `${p}.unit_price`, expected: e });
  }
  return formatScaled(factor, OTHER_SCALE);
}

const TICKET_FIELDS = ["folio", "generated_at", "event_name", "ticket_type", "event_code", "event_date", "venue", "section"] as const;

function show(t: NonNullable<Item["ticket"]>, p: string, type: DocumentTypeInfo): NonNullable<ComputedLine["show"]> {
  const f = `${p}.ticket`;
  if (!type.boleta) notAllowed(f, `show tickets (ItemEspectaculo) are part of boletas (39, 41) only, not of ${type.name}`);
  const kind = t.kind === "TICKET" ? 1 : 2;
  const sent = TICKET_FIELDS.filter((k) => t[k] !== undefined);
  if (sent.length === 0 && t.row === undefined && t.seat === undefined) return { kind };
  if (kind === 2) notAllowed(`${f}.${sent[0] ?? "row"}`, "the ticket data (InfoTicket) belongs to a TICKET line, not to a SERVICE line");
  const missing = TICKET_FIELDS.find((k) => t[k] === undefined);
  if (missing) throw new EngineError("INVALID_INPUT", `${f}.${missing} is required with the other ticket fields (InfoTicket)`, { field: `${f}.${missing}` });
  const ticket: ComputedTicket = {
    folio: t.folio!,
    generatedAt: ticketTime(t.generated_at!, `${f}.generated_at`),
    eventName: t.event_name!,
    ticketType: t.ticket_type!,
    eventCode: t.event_code!,
    eventDate: ticketTime(t.event_date!, `${f}.event_date`),
    venue: t.venue!,
    section: t.section!,
  };
  if (t.row !== undefined) ticket.row = t.row;
  if (t.seat !== undefined) ticket.seat = t.seat;
  return { kind, ticket };
}

/** InfoTicket date-times: 2010-03-10T00:00:00 to 2050-12-31T23:59:59 (EnvioBOLETA_v11.xsd). */
function ticketTime(v: string, field: string): string {
  const { dateTime } = checkDateTime(v, field);
  if (dateTime < "2010-03-10T00:00:00") throw new EngineError("INVALID_DATE", `${field} must be on or after 2010-03-10`, { field });
  return dateTime;
}
