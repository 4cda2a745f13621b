/**
 * One body per feature of the document model (issue #14) and per type that carries it: global and
 * line discounts and surcharges, IndExe 1–6, gross prices, withholdings, transport, customs, second
 * currency, references, the liquidación-factura. The schema tests validate each signed DTE against
 * the official XSD (boletas inside EnvioBOLETA); the golden tests pin their amounts.
 */
import { parseCaf, type Caf } from "../../src/countries/cl/documents/caf";
import { buildSignedDte, type SignedDte } from "../../src/countries/cl/documents/dte";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { issueSimulatorCaf } from "../../src/countries/cl/simulator/caf";
import { ISSUER_RUT, issuer, recipient } from "./cl-samples";

const date = "2026-11-20 10:30:00";
const foreign = {
  legal_name: "ACME TRADING INC",
  document_number: "US-99-1234567",
  address: { country: "US", address: "1 Main St, Springfield", city: "Springfield" },
  foreign: { nationality: "225" },
};
const ref33 = { number: 1, invoice_type: "FAC", invoice_date: "2026-11-20" };

export const FEATURE_INPUTS: Record<string, InvoiceInput> = {
  /** Mixed taxed/exempt factura: line % discount and surcharge, codes, a global % discount on the taxed base and an amount discount on the exempt one. */
  "33-mixed-global": {
    invoice_type: "33", invoice_date: date, payment_due_date: "2027-01-20", issuer: { ...issuer, email: "facturas@empresa.cl" },
    recipient: { ...recipient, contact: "Juana Pérez +56 2 2345 6789", email: "pagos@cliente.cl", internal_code: "CLI-0042", address: { ...recipient.address, commune: "Ñuñoa", city: "Santiago" } },
    payment_method: { code: "2" }, payment_terms: { code: "30D", description: "30 y 60 días", days: 60 },
    payment_schedule: [{ date: "2026-12-20", amount: 10000, description: "Primera cuota" }, { date: "2027-01-20", amount: 8691 }],
    service_indicator: 3, service_period: { from: "2026-11-01", to: "2026-11-30" },
    items: [
      { quantity: 3, unit_price: 3333.33, description: "Soporte mensual", discount_percent: 5, item_codes: [{ type: "INT1", value: "SOP-01" }, { type: "EAN13", value: "7801234567894" }], long_description: "Soporte 8x5 por correo y teléfono, noviembre 2026." },
      { quantity: 2, unit_price: 1250, description: "Horas extra", surcharge_percent: 50, surcharge_breakdown: [{ percent: 40 }, { amount: 250 }], code_unit_of_measure: "HR" },
      { quantity: 1, unit_price: 5000, description: "Curso exento", taxes: [{ type: "EXE" }], reference_quantity: 8, reference_unit: "HR", reference_price: 625 },
    ],
    global_adjustments: [
      { kind: "DISCOUNT", description: "Cliente frecuente", percent: 10 },
      { kind: "DISCOUNT", description: "Promoción curso", amount: 500, applies_to: "EXEMPT" },
    ],
    subtotals: [{ description: "Servicios", order: 1, lines: [1, 2] }],
  },
  /** Gross prices (MntBruto 1) on a factura. */
  "33-gross": { invoice_type: "33", invoice_date: date, gross_prices: true, issuer, recipient, items: [{ quantity: 1, unit_price: 11900, description: "Precio con IVA" }, { quantity: 3, unit_price: 1000, description: "Otro con IVA" }] },
  /** IndExe 2 (not billable), 3 (deposit), 4 (not a sale), 6 (not billable, negative) and a surcharge on the not-billable base. */
  "33-indicators": {
    invoice_type: "33", invoice_date: date, issuer, recipient,
    items: [
      { quantity: 10, unit_price: 800, description: "Bebida 1,5 L", taxes: [{ type: "IVA" }, { type: "27" }] },
      { quantity: 10, unit_price: 150, description: "Envase retornable", exempt_indicator: 3 },
      { quantity: 1, unit_price: 2000, description: "Despacho informativo", exempt_indicator: 2 },
      { quantity: 1, unit_price: 500, description: "Bonificación", exempt_indicator: 6 },
      { quantity: 1, unit_price: 0.5, description: "Muestra sin venta", exempt_indicator: 4 },
    ],
    global_adjustments: [{ kind: "SURCHARGE", amount: 100, applies_to: "NON_BILLABLE" }],
  },
  /** Meat: the slaughter base of the retention agent carries tax 17. */
  "33-meat": {
    invoice_type: "33", invoice_date: date, issuer, recipient,
    items: [{ quantity: 100, unit_price: 3000, code_unit_of_measure: "KG", description: "Carne en vara", taxes: [{ type: "17" }], retainer: { base_amount: 250000, final_price: 4500 } }],
  },
  /** Factura de compra: a partial withholding (32, cattle, 8 %) with a line surcharge, and the whole IVA (15) on another line. */
  "46-withholdings": {
    invoice_type: "46", invoice_date: date, issuer, recipient,
    items: [
      { quantity: 2, unit_price: 450000, description: "Novillos", surcharge_amount: 20000, taxes: [{ type: "32", rate: 8 }] },
      { quantity: 500, unit_price: 120, code_unit_of_measure: "KG", description: "Chatarra", taxes: [{ type: "15" }] },
    ],
  },
  /** Guía: internal transfer with transport data. */
  "52-transfer": {
    invoice_type: "52", invoice_date: date, issuer, recipient, transfer_kind: 5, dispatch_kind: 2, print_format: "TICKET", requester_rut: "11.111.111-1",
    transport: { plate: "ABCD12", carrier_rut: "77879240-0", driver: { rut: "11111111-1", name: "Pedro Soto" }, destination: { address: "Camino a Melipilla 1234", commune: "Maipú", city: "Santiago" } },
    items: [{ quantity: 40, unit_price: 2500, description: "Cajas de repuestos", item_codes: [{ type: "INT1", value: "REP-40" }] }],
  },
  /** Export invoice in USD with the customs block and CLP as second currency, a global discount and freight. */
  "110-customs": {
    invoice_type: "110", invoice_date: date, issuer, recipient: foreign, currency: { code: "USD" }, other_currency: { code: "CLP", exchange_rate: 945.37 },
    dispatch_kind: 1, payment_method: { code: "2", paid_amount: 1000, balance: 233, account: { type: "CORRIENTE", number: "0012345678", bank: "Banco de Chile" } },
    customs: {
      sale_modality: "1", sale_clause: "1", sale_clause_total: 1234.5, transport_mode: "1", carrier_name: "MSC ALINA", port_of_loading: "906", port_of_unloading: "111",
      gross_weight: 820.5, gross_weight_unit: "6", net_weight: 780, net_weight_unit: "6", packages: [{ type: "75", quantity: 60, marks: "ACME-2026" }], freight: 150, insurance: 12.5,
      recipient_country: "225", destination_country: "225", payment_form: "1",
    },
    items: [
      { quantity: 60, unit_price: 20.5, description: "Vino tinto reserva (caja)", code_unit_of_measure: "10", discount_percent: 2.5, discount_breakdown: [{ percent: 2 }, { amount: 6.4 }], item_codes: [{ type: "SA", value: "22042100" }], sub_quantities: [{ quantity: 40, code: "LOTE-A", code_type: "LOTE" }, { quantity: 20, code: "LOTE-B", code_type: "LOTE" }] },
      { quantity: 1, unit_price: 60, description: "Embalaje especial", other_currency: { code: "EUR", unit_price: 55.2, conversion_factor: 1020.33 } },
    ],
    global_adjustments: [{ kind: "DISCOUNT", amount: 25.75, description: "Pronto pago" }],
  },
  /** Meat of a retention agent with slaughter bases and a margin (MntBase, MntMargenCom), a "$" global discount, totals in USD too (MntFaeCarneOtrMnda, MntMargComOtrMnda, ValorDROtrMnda). */
  "33-meat-usd": {
    invoice_type: "33", invoice_date: date, issuer, recipient, other_currency: { code: "USD", exchange_rate: 950.25 },
    items: [
      { quantity: 100, unit_price: 3000, code_unit_of_measure: "KG", description: "Carne en vara", taxes: [{ type: "17" }], retainer: { base_amount: 250000, margin_amount: 40000 } },
      { quantity: 50, unit_price: 2000, code_unit_of_measure: "KG", description: "Cerdo en vara", taxes: [{ type: "17" }], retainer: { base_amount: 90000 } },
      { quantity: 1, unit_price: 20000, description: "Flete exento", taxes: [{ type: "EXE" }] },
    ],
    global_adjustments: [{ kind: "DISCOUNT", amount: 5000, description: "Descuento flete", applies_to: "EXEMPT" }],
  },
  /** Fuel distributor: specific taxes 28 (from m³ × sum per m³) and 35 (amount sent), a sale on behalf of a third party (IVATerc/IVAProp), totals in USD too. */
  "33-fuel-third-party": {
    invoice_type: "33", invoice_date: date, issuer, recipient, other_currency: { code: "USD", exchange_rate: 950.25 },
    items: [
      { quantity: 10000, unit_price: 800, code_unit_of_measure: "LT", description: "Petróleo diésel", taxes: [{ type: "IVA" }, { type: "28", cubic_metres: 10, per_cubic_metre: "98765.4321" }] },
      { quantity: 5000, unit_price: 900, code_unit_of_measure: "LT", description: "Gasolina 95", taxes: [{ type: "35", amount: 450000 }] },
      { quantity: 1, unit_price: 100000, description: "Lubricante por cuenta de Agrícola Sur", third_party: true },
    ],
  },
  /** Construction company: the 65 % special credit (CredEC) deducted from the total. */
  "33-construction": {
    invoice_type: "33", invoice_date: date, issuer, recipient, construction_credit: {},
    items: [{ quantity: 1, unit_price: 50000000, description: "Estado de pago 3, contrato general de construcción" }],
  },
  /** Exempt factura with its total in euros (domestic OtraMoneda: only MntExeOtrMnda and the total). */
  "34-other-currency": {
    invoice_type: "34", invoice_date: date, issuer, recipient, other_currency: { code: "EUR", exchange_rate: 1020.33 },
    items: [{ quantity: 1, unit_price: 1000000, description: "Asesoría exenta" }],
  },
  /** Debit note of a construction company: CredEC on the IVA of the increase. */
  "56-construction": {
    invoice_type: "56", invoice_date: date, issuer, recipient, reason_code: "COM", construction_credit: {},
    billing_reference: [{ ...ref33, reason: "Reajuste estado de pago 3" }],
    items: [{ quantity: 1, unit_price: 2000000, description: "Reajuste contrato de construcción" }],
  },
  /** Guía with lots (sub-quantities), elaboration and expiry dates and a price in euros per line. */
  "52-lots": {
    invoice_type: "52", invoice_date: date, issuer, recipient, transfer_kind: 1,
    items: [
      {
        quantity: 120, unit_price: 1020.5, code_unit_of_measure: "UN", description: "Queso mantecoso 1 kg", discount_percent: 10, discount_breakdown: [{ percent: 5 }, { amount: 6123 }],
        sub_quantities: [{ quantity: 70, code: "L2026-311" }, { quantity: 50, code: "L2026-312" }], elaboration_date: "2026-11-02", expiry_date: "2027-02-02",
        other_currency: { code: "EUR", unit_price: 1.05, conversion_factor: 971.9048 },
      },
    ],
  },
  /** Credit note: per-reference codes, a reference of another issuer, and a deposit refund line (IndExe 5). */
  "61-references": {
    invoice_type: "61", invoice_date: date, issuer, recipient, reason_code: "COM", no_debit_reduction: true,
    billing_reference: [
      { ...ref33, reason: "Devolución de envases" },
      { number: "OC-77", invoice_type: "801", invoice_date: "2026-11-01", other_issuer: "77879240-0" },
      { number: 9, invoice_type: "52", invoice_date: "2026-11-02", reason: "Guía asociada" },
    ],
    items: [{ quantity: 2, unit_price: 150, description: "Devolución envases", exempt_indicator: 5 }, { quantity: 1, unit_price: 1000, description: "Rebaja de precio" }],
  },
  /** Exempt factura with a global surcharge (EXEMPT by default), issued for a principal (RUTMandante), part paid by transfer at issue. */
  "34-surcharge": {
    invoice_type: "34", invoice_date: date, principal_rut: "11.111.111-1",
    issuer: { ...issuer, phones: ["+56 2 2345 6789", "+56 9 8765 4321"], seller_code: "V-17", sii_branch_code: 81234567 },
    recipient: { ...recipient, postal_address: { address: "Casilla 123", commune: "Providencia", city: "Santiago" } },
    payment_method: { code: "1", means: "PE", paid_date: "2026-11-19", paid_amount: 20000, balance: 10450, account: { type: "VISTA", number: "12-345-678", bank: "BancoEstado" } },
    items: [{ quantity: 2, unit_price: 15000, description: "Arriendo exento" }], global_adjustments: [{ kind: "SURCHARGE", percent: 1.5, description: "Interés por mora" }] },
  /** Liquidación-factura: the agent settles two sales of its principal and charges a commission. */
  "43-commission": {
    invoice_type: "43", invoice_date: date, issuer, recipient,
    items: [
      { quantity: 100, unit_price: 1200, description: "Venta de manzanas por cuenta de", settled_type: "33", third_party: true },
      { quantity: 50, unit_price: 900, description: "Venta de peras por cuenta de", settled_type: "33" },
    ],
    commissions: [{ kind: "COMMISSION", description: "Comisión de venta 8 %", percent: 8 }, { kind: "OTHER", description: "Flete", net_amount: 5000 }],
  },
  /** Boleta: codes, long description, line % discount and surcharge, a not-billable line and a global discount. */
  "39-features": {
    invoice_type: "39", invoice_date: date, issuer: { ...issuer, sii_branch_code: 81234567 },
    recipient: { legal_name: "JUAN PÉREZ", document_number: "11111111-1", contact: "+56 9 1234 5678", internal_code: "SOCIO-9", postal_address: { address: "Casilla 45", city: "Valparaíso" } },
    service_indicator: 3,
    items: [
      { quantity: 2, unit_price: 1990, description: "Pan amasado", item_codes: [{ type: "PLU", value: "4011" }], discount_percent: 10, long_description: "Bolsa de 1 kg" },
      { quantity: 1, unit_price: 3500, description: "Torta", surcharge_amount: 300, principal_rut: "77.879.240-0" },
      { quantity: 1, unit_price: 1000, description: "Propina sugerida", exempt_indicator: 2 },
    ],
    global_adjustments: [{ kind: "DISCOUNT", percent: 5, description: "Descuento socio" }],
  },
  /** Boleta with net amounts (IndMntNeto 2) and a billing period. */
  "39-net": { invoice_type: "39", invoice_date: date, issuer, net_amounts: true, service_indicator: 1, service_period: { from: "2026-10-01", to: "2026-10-31" }, items: [{ quantity: 1, unit_price: 25210, description: "Servicio de agua octubre" }] },
  /** Show boleta: two tickets (ItemEspectaculo 01 with InfoTicket) and the service charge (02). */
  "39-show": {
    invoice_type: "39", invoice_date: date, issuer, service_indicator: 3,
    items: [
      { quantity: 1, unit_price: 25000, description: "Entrada Platea Alta", ticket: { kind: "TICKET", folio: 1201, generated_at: "2026-11-20 10:29:00", event_name: "Concierto de Primavera", ticket_type: "Adulto", event_code: "CP26", event_date: "2026-12-05 21:00:00", venue: "Teatro Municipal, Santiago", section: "Platea Alta", row: "F", seat: "12" } },
      { quantity: 1, unit_price: 15000, description: "Entrada Platea Alta niño", ticket: { kind: "TICKET", folio: 1202, generated_at: "2026-11-20 10:29:00", event_name: "Concierto de Primavera", ticket_type: "Niño", event_code: "CP26", event_date: "2026-12-05 21:00:00", venue: "Teatro Municipal, Santiago", section: "Platea Alta" } },
      { quantity: 2, unit_price: 1500, description: "Cargo por servicio", ticket: { kind: "SERVICE" } },
    ],
  },
  /** Periodic service factura: transaction kinds, the period's amount, a previous balance and the amount to pay, a sub-total with its parts, the issuer's additional id. */
  "33-period": {
    invoice_type: "33", invoice_date: date, issuer: { ...issuer, additional_id: "EORI-CL-7608" }, recipient, purchase_transaction_kind: 1, sale_transaction_kind: 1,
    service_indicator: 1, service_period: { from: "2026-10-01", to: "2026-10-31" }, period_totals: { previous_balance: 15000 },
    items: [
      { quantity: 1, unit_price: 20000, description: "Plan internet octubre" },
      { quantity: 10, unit_price: 800, description: "Bebidas", taxes: [{ type: "IVA" }, { type: "27" }] },
      { quantity: 1, unit_price: 3000, description: "Arriendo equipo exento", taxes: [{ type: "EXE" }] },
      { quantity: 1, unit_price: 500, description: "Donación informativa", exempt_indicator: 2 },
    ],
    subtotals: [{ description: "Servicios del mes", lines: [1, 2, 3], breakdown: true }],
  },
  /** Liquidación-factura of a period: transaction kinds and the amount to pay with a negative previous balance. */
  "43-period": {
    invoice_type: "43", invoice_date: date, issuer, recipient, purchase_transaction_kind: 4, sale_transaction_kind: 2, period_totals: { previous_balance: -5000, amount_to_pay: 51525 },
    items: [{ quantity: 50, unit_price: 1000, description: "Venta de uvas por cuenta de", settled_type: "33" }],
    commissions: [{ kind: "COMMISSION", description: "Comisión 5 %", percent: 5 }],
  },
  /** Guía for export: the issuer of an exceptional transfer (GuiaExport) with the SII's authorisation. */
  "52-export-guide": {
    invoice_type: "52", invoice_date: date, transfer_kind: 8, issuer: { ...issuer, additional_id: "EXP-0042", export_guide: { transfer_code: 2, authorization_number: 123456, authorization_date: "2026-10-01" } }, recipient,
    items: [{ quantity: 60, unit_price: 20000, description: "Vino tinto reserva (caja)" }],
  },
  /** Export invoice with every additional identifier: the issuer's and its branch's, the foreign recipient's, the carrier's and the ports', and another issuer's in a reference. */
  "110-additional-ids": {
    invoice_type: "110", invoice_date: date, currency: { code: "USD" },
    issuer: { ...issuer, additional_id: "EORI-CL-7608", additional_branch_code: "SUC-VALPO" }, recipient: { ...foreign, foreign: { nationality: "225", additional_id: "EIN 12-3456789" } },
    customs: { transport_mode: "1", carrier_company_rut: "77879240-0", carrier_company_name: "NAVIERA SUR", carrier_company_additional_id: "IMO 9876543", port_of_loading: "906", port_of_loading_additional_id: "CLVAP", port_of_unloading: "111", port_of_unloading_additional_id: "USLAX" },
    billing_reference: [{ number: "PO-5512", invoice_type: "801", invoice_date: "2026-11-10", other_issuer: "55555555-5", other_issuer_additional_id: "ACME-PO" }],
    items: [{ quantity: 100, unit_price: 12.5, description: "Aceite de oliva 1 L" }],
    subtotals: [{ description: "Aceites", lines: [1], breakdown: true }],
  },
  /** Boleta of a periodic service: the period total, a previous balance in the client's favour, the amount to pay, the seller and the cash register. */
  "39-period": {
    invoice_type: "39", invoice_date: date, issuer, service_indicator: 1, period_totals: { previous_balance: -2000, period_amount: 12900 },
    point_of_sale: { seller_code: "INTERNET", register_code: "CAJA-07" },
    items: [{ quantity: 1, unit_price: 11900, description: "Agua potable noviembre" }, { quantity: 1, unit_price: 1000, description: "Cargo fijo no facturable", exempt_indicator: 2 }],
    subtotals: [{ description: "Consumo", lines: [1], breakdown: true }],
  },
  /** Boleta exenta with a global surcharge on its exempt base. */
  "41-surcharge": { invoice_type: "41", invoice_date: date, issuer, items: [{ quantity: 1, unit_price: 20000, description: "Matrícula" }], global_adjustments: [{ kind: "SURCHARGE", amount: 1000, description: "Recargo atraso" }] },
};

/** Signs every feature body with the sample set's signer and simulator CAFs (43 gets its own). */
export async function buildFeatureDtes(set: { cafs: Record<number, Caf>; signer: SigningCredentials }): Promise<Record<string, SignedDte>> {
  return signInputs(set, FEATURE_INPUTS, 20);
}

/** Computes and signs each body (folios from `firstFolio` + 1), issuing a simulator CAF for a type the set lacks. */
export async function signInputs(set: { cafs: Record<number, Caf>; signer: SigningCredentials }, inputs: Record<string, InvoiceInput>, firstFolio: number): Promise<Record<string, SignedDte>> {
  const out: Record<string, SignedDte> = {};
  let folio = firstFolio;
  for (const [name, input] of Object.entries(inputs)) {
    const doc = computeDocument(input);
    const code = doc.type.code;
    set.cafs[code] ??= await parseCaf((await issueSimulatorCaf({ rut: ISSUER_RUT, legalName: issuer.legal_name, documentType: code, from: 1, to: 50, authorizedOn: "2026-11-01" })).xml, { mode: "simulator" });
    out[name] = await buildSignedDte({ document: doc, folio: ++folio, caf: set.cafs[code]!, signer: set.signer, timestamp: "2026-11-20T10:30:05" });
  }
  return out;
}
