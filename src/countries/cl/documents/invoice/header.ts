/** IdDoc and the document's currency: dates, payment form, service indicator. */
import { EngineError } from "../../errors";
import { formatScaled, parseScaled } from "../decimal";
import type { DocumentTypeInfo } from "../document-types";
import { checkDate, checkDateTime } from "./checks";
import type { ComputedDocument } from "./model";
import type { InvoiceInput } from "./schema";
import { CURRENCY_SII_NAMES } from "./tax-codes";

export type Header = Pick<ComputedDocument, "issueDate" | "issueDateTime" | "dueDate" | "branchOffice" | "paymentForm" | "serviceIndicator" | "externalReference">;

function paymentForm(code: string, field: string): 1 | 2 | 3 {
  const c = code.trim().toUpperCase();
  if (["1", "CONTADO", "CASH"].includes(c)) return 1;
  if (["2", "CREDITO", "CRÉDITO", "CREDIT"].includes(c)) return 2;
  if (["3", "SIN_COSTO", "FREE"].includes(c)) return 3;
  throw new EngineError("INVALID_INPUT", `payment_method.code "${code}" is not 1/CONTADO, 2/CREDITO or 3/SIN_COSTO`, { field });
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
  if (input.payment_method) h.paymentForm = paymentForm(input.payment_method.code, "payment_method.code");
  if (type.boleta) h.serviceIndicator = 3;
  if (input.external_reference) h.externalReference = input.external_reference;
  return h;
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
