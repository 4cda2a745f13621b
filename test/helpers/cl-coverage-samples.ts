/**
 * Bodies that use, per schema family, the fields the feature samples (cl-feature-samples.ts) and
 * the type samples (cl-samples.ts) leave out there: with them every element of DTE_v10's Documento,
 * Liquidacion and Exportaciones and of EnvioBOLETA's DTE that the body can express is written at
 * least once (test/engine/model-coverage.node.test.ts).
 */
import type { InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { issuer, recipient } from "./cl-samples";

const date = "2026-11-20 10:30:00";
const rich = { ...issuer, email: "facturas@empresa.cl", phones: ["+56 2 2345 6789"], seller_code: "V-17", sii_branch_code: 81234567 };
const richRecipient = { ...recipient, contact: "Juana Pérez", email: "pagos@cliente.cl", internal_code: "CLI-0042", postal_address: { address: "Casilla 123", commune: "Providencia", city: "Santiago" } };
const paid = { code: "2", means: "PE" as const, paid_date: "2026-11-19", paid_amount: 1000, account: { type: "CORRIENTE" as const, number: "0012345678", bank: "Banco de Chile" } };
const extras = { item_codes: [{ type: "INT1", value: "X-1" }], long_description: "Detalle", reference_quantity: 1, reference_unit: "UN", reference_price: 10, elaboration_date: "2026-11-01", expiry_date: "2027-11-01" };

export const COVERAGE_INPUTS: Record<string, InvoiceInput> = {
  /** Liquidación-factura with every IdDoc, party, line and section field its schema has. */
  "43-max": {
    invoice_type: "43", invoice_date: date, payment_due_date: "2026-12-20", branch_office: 2, issuer: rich, recipient: richRecipient,
    payment_method: { ...paid, balance: 87560 }, payment_terms: { code: "30D", description: "30 días", days: 30 },
    payment_schedule: [{ date: "2026-12-20", amount: 88560, description: "Única cuota" }], service_indicator: 3, service_period: { from: "2026-11-01", to: "2026-11-30" },
    items: [
      { quantity: 10, unit_price: 5000, description: "Venta de vino por cuenta de", settled_type: "33", code_unit_of_measure: "CJ", taxes: [{ type: "IVA" }, { type: "25" }], sub_quantities: [{ quantity: 10, code: "L-1" }], ...extras },
      { quantity: 1, unit_price: 20000, description: "Venta exenta por cuenta de", settled_type: "34", exempt_indicator: 1 },
    ],
    commissions: [{ kind: "COMMISSION", description: "Comisión", net_amount: 1000 }],
    subtotals: [{ description: "Vinos", order: 1, lines: [1, 2], breakdown: true }],
    billing_reference: [{ number: 0, invoice_type: "33", invoice_date: "2026-11-01", global: true, reason: "Ventas del mes" }, { number: 7, invoice_type: "43", invoice_date: "2026-11-02", reason_code: "COM", reason: "Complementa liquidación 7" }],
  },
  /** Export invoice with every IdDoc, party, transport, line and reference field its schema has. */
  "110-max": {
    invoice_type: "110", invoice_date: date, payment_due_date: "2026-12-20", branch_office: 2, currency: { code: "USD" }, issuer: rich,
    recipient: { legal_name: "ACME TRADING INC", document_number: "US-99-1234567", contact: "John Doe", email: "ap@acme.example", internal_code: "ACME", tax_information: { activity: "Importer" }, postal_address: { address: "PO Box 1", commune: "Springfield", city: "Springfield" } },
    payment_method: { code: "1", means: "PE", paid_date: "2026-11-19" }, payment_terms: { code: "30D", description: "30 días", days: 30 },
    payment_schedule: [{ date: "2026-12-20", amount: 1015, description: "Única cuota" }], service_indicator: 3, service_period: { from: "2026-11-01", to: "2026-11-30" },
    transport: { plate: "ABCD12", carrier_rut: "77879240-0", driver: { rut: "11111111-1", name: "Pedro Soto" }, destination: { address: "Puerto", commune: "Valparaíso", city: "Valparaíso" } },
    customs: { sale_modality: "1", tare: 100, tare_unit: "6", total_items: 1, booking: "BK-1", operator: "OP-1", packages: [{ type: "75", quantity: 1, container_id: "MSCU1234567", seal: "S-1", seal_issuer: "Aduana" }] },
    items: [{ quantity: 10, unit_price: 100, description: "Servicio exportado", exempt_indicator: 1, surcharge_percent: 2, surcharge_breakdown: [{ percent: 2 }], other_currency: { code: "EUR", unit_price: 90, discount_amount: 1, surcharge_amount: 2 }, discount_amount: 5, ...extras }, { quantity: 1, unit_price: 1, description: "Muestra sin valor comercial", exempt_indicator: 4 }],
    subtotals: [{ description: "Servicios", order: 1, lines: [1] }],
    billing_reference: [{ number: 0, invoice_type: "33", invoice_date: "2026-11-01", global: true }],
  },
  /** Factura de compra in dollars with a partial withholding (IVANoRetOtrMnda), a line surcharge in the other currency and a global reference. */
  "46-other-currency": {
    invoice_type: "46", invoice_date: date, issuer, recipient, other_currency: { code: "USD", exchange_rate: 950.25 },
    items: [{ quantity: 2, unit_price: 450000, description: "Novillos", surcharge_percent: 1, taxes: [{ type: "32" }], other_currency: { code: "USD", unit_price: 473.5596, surcharge_amount: 9.4712 } }],
    billing_reference: [{ number: 0, invoice_type: "801", invoice_date: "2026-11-01", global: true }],
  },
  /** Guía for export with the customs block (Aduana, FmaPagExp) and a foreign recipient (Extranjero). */
  "52-export-customs": {
    invoice_type: "52", invoice_date: date, transfer_kind: 9, issuer, recipient: { ...recipient, foreign: { id: "US-99-1234567", nationality: "225" } },
    customs: { sale_modality: "1", sale_clause: "1", sale_clause_total: 1200000, transport_mode: "1", carrier_name: "MSC ALINA", carrier_company_rut: "77879240-0", carrier_company_name: "NAVIERA SUR", carrier_company_additional_id: "IMO 9876543", booking: "BK-1", operator: "OP-1", port_of_loading: "906", port_of_loading_additional_id: "CLVAP", port_of_unloading: "111", port_of_unloading_additional_id: "USLAX", tare: 100, tare_unit: "6", gross_weight: 820.5, gross_weight_unit: "6", net_weight: 780, net_weight_unit: "6", total_items: 1, packages: [{ type: "75", quantity: 60, marks: "ACME", container_id: "MSCU1234567", seal: "S-1", seal_issuer: "Aduana" }], freight: 15000, insurance: 2000, recipient_country: "225", destination_country: "225", payment_form: "1" },
    items: [{ quantity: 60, unit_price: 20000, description: "Vino tinto reserva (caja)" }],
  },
  /** Boleta with a due date, a postal commune, a unit and a line surcharge in percent. */
  "39-max": {
    invoice_type: "39", invoice_date: date, payment_due_date: "2026-12-20", issuer,
    recipient: { legal_name: "JUAN PÉREZ", document_number: "11111111-1", postal_address: { address: "Casilla 45", commune: "Viña del Mar", city: "Valparaíso" } },
    items: [{ quantity: 2, unit_price: 1000, description: "Pan", code_unit_of_measure: "KG", surcharge_percent: 10 }, { quantity: 1, unit_price: 500, description: "Bolsa exenta", exempt_indicator: 1 }],
    subtotals: [{ description: "Panadería", order: 1, lines: [1, 2], breakdown: true }],
    billing_reference: [{ number: 5, invoice_type: "39", invoice_date: "2026-11-19", reason_code: "COM", reason: "Corrige monto de boleta" }],
  },
};
