/**
 * Examples of the issuing operations (checked by test/api/examples.test.ts, which also issues the
 * body example): a factura 33 of COMERCIAL LOS ANDES SPA to DISTRIBUIDORA EL SIMULADOR S.A., net
 * 1.000.000 + IVA 19 % 190.000 = 1.190.000.
 */
import { EX, examplePage } from "../../openapi/example-ids";

export const invoiceCreateExample = {
  invoice_type: "33",
  invoice_date: "2026-11-27 10:30:00",
  payment_due_date: "2026-12-27",
  external_reference: "ERP-OV-2026-001042",
  issuer: {
    legal_name: "COMERCIAL LOS ANDES SPA",
    document_type: "RUT",
    document_number: EX.issuerRut,
    address: { country: "CL", region: "13", city: "Santiago", commune: "Providencia", address: "Av. Providencia 1234, of. 501" },
    tax_information: { activity: "Venta al por mayor de computadores y equipo periférico", activity_codes: [465100], resolution_number: "80", resolution_date: "2014-08-22" },
    email: "facturacion@losandes.cl",
  },
  recipient: {
    legal_name: "DISTRIBUIDORA EL SIMULADOR S.A.",
    document_type: "RUT",
    document_number: EX.buyerRut,
    address: { country: "CL", region: "13", city: "Santiago", commune: "Las Condes", address: "Av. Apoquindo 4501, piso 8" },
    tax_information: { activity: "Distribución de artículos de oficina" },
    email: "dte@elsimulador.cl",
  },
  payment_method: { code: "2", description: "Crédito 30 días" },
  items: [
    { quantity: 2, code_unit_of_measure: "UN", unit_price: 450000, description: "Notebook 14 pulgadas 16 GB RAM", item_codes: [{ type: "INT1", value: "NB-1416" }], taxes: [{ type: "IVA", rate: 19 }] },
    { quantity: 1, code_unit_of_measure: "UN", unit_price: 100000, description: "Instalación y configuración", taxes: [{ type: "IVA", rate: 19 }] },
  ],
  billing_reference: [{ number: "4500012345", invoice_type: "801", invoice_date: "2026-11-20", reason: "Orden de compra" }],
  totals: { sub_total: 1000000, taxes: [{ type: "IVA", base_amount: 1000000, rate: 19, amount: 190000 }], total: 1190000 },
};

const RECEIVED = { status: "RECEIVED", fiscal_status: null, message: "Received; queued for folio assignment, signature and sending", at: "2026-11-27T13:30:00.120Z" };

const HISTORY = [
  RECEIVED,
  { status: "GENERATED", fiscal_status: null, message: "Folio 1042 assigned", at: "2026-11-27T13:30:00.610Z" },
  { status: "SIGNED", fiscal_status: null, message: "Stamped and signed as F1042T33", at: "2026-11-27T13:30:00.640Z" },
  { status: "SENT", fiscal_status: null, message: `Sent to the SII in envelope ${EX.envelope}, track id 6512345678`, at: "2026-11-27T13:30:01.900Z" },
  { status: "SENT", fiscal_status: "EPR", message: "EPR: Envío procesado. / Envelope processed.", at: "2026-11-27T13:31:05.000Z" },
  { status: "ACCEPTED", fiscal_status: "DOK", message: "DOK: Documento aceptado. / Document accepted. (envelope EPR: 1/1 of type 33 accepted)", at: "2026-11-27T13:31:05.200Z" },
];

/** The 202 of the POST: stored, nothing signed yet. */
export const invoiceReceivedExample = {
  id: EX.invoice,
  company_id: EX.company,
  invoice_type: "33",
  invoice_type_name: "FACTURA ELECTRÓNICA",
  status: "RECEIVED",
  fiscal_status: null,
  fiscal_message: null,
  folio: null,
  external_reference: "ERP-OV-2026-001042",
  issue_date: "2026-11-27",
  total: "1190000",
  currency: "CLP",
  recipient: { tax_id: EX.buyerRut, legal_name: "DISTRIBUIDORA EL SIMULADOR S.A." },
  track_id: null,
  cancels_invoice_id: null,
  cancelled_by: null,
  last_error: null,
  attempts: 0,
  buyer_response: null,
  buyer_delivery: null,
  buyer_replies: [],
  created_at: "2026-11-27T13:30:00.120Z",
  updated_at: "2026-11-27T13:30:00.120Z",
  history: [RECEIVED],
};

const buyerResponse = {
  state: "PENDING",
  sii_received_at: "2026-11-27T10:30:02-03:00",
  deadline: "2026-12-05T13:30:02.000Z",
  seconds_left: 690537,
  events: [],
  checked_at: "2026-11-27T13:41:05.000Z",
  next_check_at: "2026-11-27T14:11:05.000Z",
};

const buyerDelivery = { state: "SENT", email: "dte@elsimulador.cl", source: "TAXPAYER_DIRECTORY", attempts: 1, sent_at: "2026-11-27T13:31:07.000Z", message: null, delivered_at: "2026-11-27T13:31:09.000Z" };

/** The document once the SII accepted it and it was mailed to its buyer. */
export const invoiceExample = {
  ...invoiceReceivedExample,
  status: "ACCEPTED",
  fiscal_status: "DOK",
  fiscal_message: "DOK: Documento aceptado. / Document accepted. (envelope EPR: 1/1 of type 33 accepted)",
  folio: 1042,
  track_id: "6512345678",
  buyer_response: buyerResponse,
  buyer_delivery: buyerDelivery,
  updated_at: "2026-11-27T13:41:05.000Z",
  history: HISTORY,
};

export const invoicePageExample = examplePage([invoiceExample]);

/** After a read of the SII's register: the buyer accepted the contents (ACD). */
export const invoiceCheckedExample = {
  ...invoiceExample,
  buyer_response: {
    ...buyerResponse,
    state: "ACCEPTED",
    seconds_left: 608402,
    events: [{ code: "ACD", description: "Acepta Contenido del Documento", by_tax_id: EX.buyerRut, at: "2026-11-28T09:12:40-03:00" }],
    checked_at: "2026-11-28T12:30:00.000Z",
    next_check_at: null,
  },
  updated_at: "2026-11-28T12:30:00.000Z",
};

export const buyerDeliveryRequestExample = { email: "dte@elsimulador.cl" };

export const invoiceDeliveredExample = {
  ...invoiceExample,
  buyer_delivery: { ...buyerDelivery, source: "REQUEST", attempts: 2, sent_at: "2026-11-28T12:45:00.000Z", delivered_at: null },
  updated_at: "2026-11-28T12:45:00.000Z",
};

export const pdfBase64Example = {
  file_name: "76086428-5_T33_F1042_A4.pdf",
  content_type: "application/pdf",
  format: "A4",
  size: 48213,
  data: "JVBERi0xLjcKJYGBgYEKCjEgMCBvYmoKPDwKL1R5cGUgL1BhZ2VzCi9LaWRzIFsgNSAwIFIgXQovQ291bnQgMQo+PgplbmRvYmoK",
};

export const buyerReplyUploadExample = { file: "(binary: RespuestaDTE_96790240-3.xml, the buyer's RespuestaDTE or EnvioRecibos)" };

export const buyerReplyIntakeExample = {
  kind: "RespuestaDTE",
  message_id: EX.replyMessage,
  file_sha256: "fe2c894bc123b71537b2d90267207454a522e3158cd70dc6f2f9d7b44068e0a0",
  signature_valid: true,
  entries: [{ reply_id: EX.reply, kind: "RESULT", status: "ACCEPTED", envelope_id: null, document_type: 33, folio: 1042, invoice_id: EX.invoice, outcome: "RECORDED" }],
  envelopes: [],
};
