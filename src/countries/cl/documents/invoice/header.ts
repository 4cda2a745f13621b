/** IdDoc and the document's currency: dates, payment, service indicator, guía and price marks. */
import { EngineError } from "../../errors";
import { formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { checkDate, checkDateTime, notAllowed } from "./checks";
import type { ComputedDocument } from "./model";
import type { InvoiceInput } from "./schema";
import { CURRENCY_SII_NAMES } from "./tax-codes";

export type Header = Pick<
  ComputedDocument,
  "issueDate" | "issueDateTime" | "dueDate" | "branchOffice" | "paymentForm" | "serviceIndicator" | "servicePeriod" | "externalReference" | "grossPrices" | "netAmounts" | "transferKind" | "dispatchKind" | "paymentTerms" | "purchaseKind" | "saleKind"
>;

function paymentForm(code: string, field: string): 1 | 2 | 3 {
  const c = code.trim().toUpperCase();
  if (["1", "CONTADO", "CASH"].includes(c)) return 1;
  if (["2", "CREDITO", "CRÉDITO", "CREDIT"].includes(c)) return 2;
  if (["3", "SIN_COSTO", "FREE"].includes(c)) return 3;
  throw new EngineError("INVALID_INPUT", `payment_method.code "${code}" is not 1/CONTADO, 2/CREDITO or 3/SIN_COSTO`, { field });
}

/** IndServicio values per family (EnvioBOLETA, Documento, Exportaciones schemas). */
function serviceIndicator(input: InvoiceInput, type: DocumentTypeInfo): Header["serviceIndicator"] {
  const v = input.service_indicator;
  const allowed = type.boleta ? [1, 2, 3, 4] : type.export ? [3, 4, 5] : [1, 2, 3];
  if (v !== undefined && !allowed.includes(v)) notAllowed("service_indicator", `IndServicio ${v} is not allowed on ${type.name}; use ${allowed.join(", ")}`);
  if (v === undefined) return type.boleta ? 3 : undefined;
  return v as Header["serviceIndicator"];
}

function priceMarks(input: InvoiceInput, type: DocumentTypeInfo, h: Header): void {
  if (input.gross_prices) {
    if (type.boleta || type.export) notAllowed("gross_prices", `MntBruto is not used on ${type.name}${type.boleta ? " (boleta prices are gross already)" : ""}`);
    h.grossPrices = true;
  }
  if (input.net_amounts) {
    if (!type.boleta) notAllowed("net_amounts", "IndMntNeto is for boletas (39, 41) only");
    h.netAmounts = true;
  }
}

/** TipoDespacho: documents that may go with the goods they sell or move (Formato DTE v2.2, TipoDespacho), besides exports. */
const DISPATCH_TYPES: readonly number[] = [33, 34, 46, 52];

function dispatch(input: InvoiceInput, type: DocumentTypeInfo, h: Header): void {
  if (type.code === 52) h.transferKind = input.transfer_kind ?? 1;
  else if (input.transfer_kind !== undefined) notAllowed("transfer_kind", "IndTraslado is for guías de despacho (52) only");
  if (input.dispatch_kind !== undefined) {
    if (!DISPATCH_TYPES.includes(type.code) && !type.export) notAllowed("dispatch_kind", `TipoDespacho is for documents that go with goods: ${DISPATCH_TYPES.join(", ")} and export documents (a note carries none)`);
    h.dispatchKind = input.dispatch_kind as 1 | 2 | 3;
  }
}

/** TpoTranCompra and TpoTranVenta: IdDoc of the Documento and Liquidacion schemas (not boletas, not exports). */
function transactionKinds(input: InvoiceInput, type: DocumentTypeInfo, h: Header): void {
  for (const [field, key] of [["purchase_transaction_kind", "purchaseKind"], ["sale_transaction_kind", "saleKind"]] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (type.boleta || type.export) notAllowed(field, `${field === "purchase_transaction_kind" ? "TpoTranCompra" : "TpoTranVenta"} is not in the schema of ${type.name}`);
    h[key] = v;
  }
}

function payment(input: InvoiceInput, type: DocumentTypeInfo, h: Header): void {
  if (input.payment_method?.code !== undefined) h.paymentForm = paymentForm(input.payment_method.code, "payment_method.code");
  const terms = input.payment_terms;
  if (terms) {
    if (type.boleta) notAllowed("payment_terms", "boletas carry no payment terms");
    h.paymentTerms = {};
    if (terms.code) h.paymentTerms.code = terms.code;
    if (terms.description) h.paymentTerms.description = terms.description;
    if (terms.days !== undefined) h.paymentTerms.days = terms.days;
  }
}

export function buildHeader(input: InvoiceInput, type: DocumentTypeInfo): Header {
  const { date: issueDate, dateTime: issueDateTime } = checkDateTime(input.invoice_date, "invoice_date");
  const dueDate = input.payment_due_date ? checkDate(input.payment_due_date, "payment_due_date") : undefined;
  if (dueDate !== undefined && dueDate < issueDate) {
    throw new EngineError("INVALID_DATE", `payment_due_date ${dueDate} is before the issue date ${issueDate}`, { field: "payment_due_date", expected: `≥ ${issueDate}` });
  }
  const h: Header = { issueDate, issueDateTime };
  if (dueDate) h.dueDate = dueDate;
  if (input.branch_office !== undefined) h.branchOffice = input.branch_office;
  payment(input, type, h);
  const service = serviceIndicator(input, type);
  if (service !== undefined) h.serviceIndicator = service;
  if (input.service_period) {
    const from = checkDate(input.service_period.from, "service_period.from");
    const to = checkDate(input.service_period.to, "service_period.to");
    if (to < from) throw new EngineError("INVALID_DATE", `service_period.to ${to} is before service_period.from ${from}`, { field: "service_period.to", expected: `≥ ${from}` });
    h.servicePeriod = { from, to };
  }
  priceMarks(input, type, h);
  dispatch(input, type, h);
  transactionKinds(input, type, h);
  if (input.external_reference) h.externalReference = input.external_reference;
  return h;
}

/** MntPagos: instalments, whose sum is the total. */
export function buildPayments(input: InvoiceInput, type: DocumentTypeInfo, scale: number, total: bigint): ComputedDocument["payments"] {
  const list = input.payment_schedule ?? [];
  if (list.length === 0) return [];
  if (type.boleta) notAllowed("payment_schedule", "boletas carry no payment schedule");
  const out = list.map((p, i) => {
    const f = `payment_schedule[${i}]`;
    const row: ComputedDocument["payments"][number] = { date: checkDate(p.date, `${f}.date`), amount: parseScaled(p.amount, scale, `${f}.amount`) };
    if (p.description) row.description = p.description;
    return row;
  });
  const s = out.reduce((a, p) => a + p.amount, 0n);
  if (s !== total) {
    const e = formatScaled(total, scale);
    throw new EngineError("TOTALS_MISMATCH", `payment_schedule adds up to ${formatScaled(s, scale)} but the total is ${e}`, { field: "payment_schedule", expected: e });
  }
  return out;
}

/** CLP on domestic documents; on exports any currency with an SII customs name (scale 2). */
export function buildCurrency(input: InvoiceInput, type: DocumentTypeInfo): ComputedDocument["currency"] {
  const code = (input.currency?.code ?? "CLP").toUpperCase();
  if (code !== "CLP" && !type.export) {
    throw new EngineError("CURRENCY_NOT_SUPPORTED", `${type.name} is issued in CLP; ${code} is only allowed on export documents (110, 111, 112)`, { field: "currency.code", expected: "CLP" });
  }
  const siiName = CURRENCY_SII_NAMES[code];
  if (!siiName) throw new EngineError("CURRENCY_NOT_SUPPORTED", `Currency ${code} has no SII customs name`, { field: "currency.code" });
  const currency: ComputedDocument["currency"] = { code, siiName, scale: code === "CLP" ? 0 : 2 };
  if (input.currency?.exchange_rate !== undefined) {
    currency.exchangeRate = formatScaled(parseScaled(input.currency.exchange_rate, 4, "currency.exchange_rate"), 4);
  }
  return currency;
}
