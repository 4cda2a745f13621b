/**
 * Bodies that write, on a given document type, the elements the type, feature and coverage samples
 * (cl-samples.ts, cl-feature-samples.ts, cl-coverage-samples.ts) write only on other types of the
 * same schema family: with them every element each type may carry is written on that type at least
 * once (test/engine/type-coverage.node.test.ts), and each validates against the official XSD
 * (test/engine/schemas.node.test.ts).
 */
import type { InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { issuer, recipient } from "./cl-samples";

const date = "2026-11-20 10:30:00";
const ref46 = { number: 7, invoice_type: "46", invoice_date: "2026-11-10", reason: "Corrige comisión" };
const foreign = { legal_name: "ACME TRADING INC", document_number: "US-99-1234567", address: { country: "US", address: "1 Main St, Springfield", city: "Springfield" }, foreign: { nationality: "225" } };

export const TYPE_INPUTS: Record<string, InvoiceInput> = {
  /** Factura that goes with the goods (TipoDespacho), part paid, a reference that corrects a guía's amounts (CodRef on a factura). */
  "33-dispatch": {
    invoice_type: "33", invoice_date: date, issuer, recipient, dispatch_kind: 2,
    payment_method: { code: "2", paid_amount: 5000, balance: 6900 },
    billing_reference: [{ number: 12, invoice_type: "52", invoice_date: "2026-11-18", reason_code: "COM", reason: "Factura guía 12 con precio corregido" }],
    items: [{ quantity: 10, unit_price: 1000, description: "Cajas despachadas" }],
  },
  /** Exempt factura with every element an exempt type has: gross mark, dispatch, schedule, balance, prices and a global surcharge in euros, exempt sub-total, global and coded references. */
  "34-max": {
    invoice_type: "34", invoice_date: date, issuer, recipient, gross_prices: true, dispatch_kind: 1, other_currency: { code: "EUR", exchange_rate: 1000 },
    payment_method: { code: "2", paid_amount: 1000, balance: 21400 }, payment_schedule: [{ date: "2026-12-20", amount: 22400, description: "Única cuota" }],
    items: [
      { quantity: 2, unit_price: 10000, description: "Asesoría exenta", surcharge_percent: 10, other_currency: { code: "EUR", unit_price: 10, surcharge_amount: 2 } },
      { quantity: 1, unit_price: 500, description: "Despacho informativo", exempt_indicator: 2 },
    ],
    global_adjustments: [{ kind: "SURCHARGE", amount: 400, description: "Gasto de cobranza" }],
    subtotals: [{ description: "Asesorías", lines: [1], breakdown: true }],
    billing_reference: [{ number: 0, invoice_type: "801", invoice_date: "2026-11-01", global: true }, { number: 3, invoice_type: "34", invoice_date: "2026-11-02", reason_code: "ANU", reason: "Reemplaza la factura 3" }],
  },
  /** Factura de compra: the buyer's commission to the seller (Comisiones), dispatch, part paid, a coded reference. */
  "46-commissions": {
    invoice_type: "46", invoice_date: date, issuer, recipient, dispatch_kind: 1,
    payment_method: { code: "1", paid_amount: 100000, balance: 14930 },
    items: [{ quantity: 100, unit_price: 1000, description: "Compra de uva" }],
    commissions: [{ kind: "COMMISSION", description: "Comisión de compra 2 %", percent: 2 }, { kind: "OTHER", description: "Flete", net_amount: 1000, exempt_amount: 500 }],
    billing_reference: [{ number: 5, invoice_type: "52", invoice_date: "2026-11-19", reason_code: "COM", reason: "Guía de recepción" }],
  },
  /** Credit note to a factura de compra that gives back part of a commission, with a balance. */
  "61-commissions": {
    invoice_type: "61", invoice_date: date, issuer, recipient, reason_code: "COM", billing_reference: [ref46], payment_method: { paid_amount: 1000, balance: 9710 },
    items: [{ quantity: 1, unit_price: 10000, description: "Ajuste de precio de compra" }],
    commissions: [{ kind: "COMMISSION", description: "Devolución comisión 10 %", percent: 10 }],
  },
  /** Debit note to a factura de compra that adds a charge, with a balance. */
  "56-commissions": {
    invoice_type: "56", invoice_date: date, issuer, recipient, reason_code: "COM", billing_reference: [ref46], payment_method: { paid_amount: 1000, balance: 9710 },
    items: [{ quantity: 1, unit_price: 10000, description: "Diferencia de precio de compra" }],
    commissions: [{ kind: "OTHER", description: "Cargo por flete 10 %", percent: 10 }],
  },
  /** Liquidación-factura at gross prices (MntBruto): the commission's percentage applies to the net. */
  "43-gross": {
    invoice_type: "43", invoice_date: date, issuer, recipient, gross_prices: true,
    items: [{ quantity: 10, unit_price: 11900, description: "Venta de vino por cuenta de", settled_type: "33" }],
    commissions: [{ kind: "COMMISSION", description: "Comisión 10 %", percent: 10 }],
  },
  /** Guía that is not a sale and takes items back from an earlier guía (IndExe 5), of a construction company selling on behalf of a third party, with a balance and a coded reference. */
  "52-reduction": {
    invoice_type: "52", invoice_date: date, issuer, recipient, transfer_kind: 6, construction_credit: {}, payment_method: { paid_amount: 1000, balance: 10731 },
    billing_reference: [{ number: 9, invoice_type: "52", invoice_date: "2026-11-15", reason_code: "COM", reason: "Rebaja guía 9" }],
    items: [
      { quantity: 10, unit_price: 1000, description: "Materiales por cuenta de tercero", third_party: true },
      { quantity: 1, unit_price: 1000, description: "Flete propio" },
      { quantity: 2, unit_price: 1000, description: "Materiales devueltos de la guía 9", exempt_indicator: 5 },
    ],
  },
  /** Guía that returns goods from the zone of shipment (transfer_kind 7), issued by the customs agent (GuiaExport, CdgTraslado 2). */
  "52-export-return": {
    invoice_type: "52", invoice_date: date, transfer_kind: 7, issuer: { ...issuer, export_guide: { transfer_code: 2 } }, recipient,
    customs: { port_of_loading: "906", total_packages: 3, packages: [{ type: "75", quantity: 3 }] },
    items: [{ quantity: 3, unit_price: 20000, description: "Vino devuelto desde zona primaria" }],
  },
  /** Boleta exenta with net amounts (IndMntNeto 2: only the mark, every amount being exempt). */
  "41-net": { invoice_type: "41", invoice_date: date, issuer, net_amounts: true, items: [{ quantity: 1, unit_price: 20000, description: "Matrícula" }] },
  /** Boleta with a global discount on its exempt lines (IndExeDR 1). */
  "39-exempt-discount": {
    invoice_type: "39", invoice_date: date, issuer,
    items: [{ quantity: 1, unit_price: 1190, description: "Pan" }, { quantity: 1, unit_price: 2000, description: "Libro exento", exempt_indicator: 1 }],
    global_adjustments: [{ kind: "DISCOUNT", amount: 200, applies_to: "EXEMPT", description: "Descuento libros" }],
  },
  /** Export invoice whose reference replaces an earlier one (CodRef and RazonRef on a 110). */
  "110-coded-reference": {
    invoice_type: "110", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" },
    billing_reference: [{ number: 4, invoice_type: "110", invoice_date: "2026-11-02", reason_code: "ANU", reason: "Reemplaza la factura 4" }],
    items: [{ quantity: 10, unit_price: 12.5, description: "Aceite de oliva 1 L" }],
  },
  /** Export credit note paid in instalments, with a not-billable line. */
  "112-schedule": {
    invoice_type: "112", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" }, reason_code: "COM",
    billing_reference: [{ number: 1, invoice_type: "110", invoice_date: "2026-11-02" }], payment_schedule: [{ date: "2026-12-20", amount: 50, description: "Abono en cuenta" }],
    items: [{ quantity: 1, unit_price: 50, description: "Rebaja de precio" }, { quantity: 1, unit_price: 5, description: "Muestra no facturable", exempt_indicator: 2 }],
  },
  /** Export debit note paid in instalments, with a not-billable line. */
  "111-schedule": {
    invoice_type: "111", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" }, reason_code: "COM",
    billing_reference: [{ number: 1, invoice_type: "110", invoice_date: "2026-11-02" }], payment_schedule: [{ date: "2026-12-20", amount: 20, description: "Cargo en cuenta" }],
    items: [{ quantity: 1, unit_price: 20, description: "Flete adicional" }, { quantity: 1, unit_price: 5, description: "Embalaje no facturable", exempt_indicator: 2 }],
  },
};
