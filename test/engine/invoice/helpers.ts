/** Shared bodies and an error catcher for the section-builder golden tests. */
import { computeDocument, type ComputedDocument, type InvoiceInput } from "../../../src/countries/cl/documents/invoice";
import { engineError } from "../../helpers/engine-error";
import { issuer, recipient } from "../../helpers/cl-samples";

export { issuer, recipient };
export const foreign = { legal_name: "ACME TRADING INC", document_number: "US-99-1234567" };

export function body(over: Partial<InvoiceInput> = {}): InvoiceInput {
  return { invoice_type: "33", invoice_date: "2026-11-20 10:30:00", issuer, recipient, items: [{ quantity: 1, unit_price: 1000, description: "Servicio" }], ...over };
}

export function doc(over: Partial<InvoiceInput> = {}): ComputedDocument {
  return computeDocument(body(over));
}

/** The EngineError a body raises, as { code, field }. */
export function fails(over: Partial<InvoiceInput>): { code: string; field?: string; expected?: string } {
  const e = engineError(() => computeDocument(body(over)));
  return { code: e.code, field: e.field, ...(e.expected !== undefined ? { expected: e.expected } : {}) };
}

/** Numbers instead of bigints, for readable golden objects. */
export function plain<T>(v: T): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? Number(x) : x)));
}
