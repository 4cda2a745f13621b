/**
 * Examples of the reception operations (checked by test/api/examples.test.ts): a factura of
 * DISTRIBUIDORA EL SIMULADOR S.A. to the company, net 250.000 + IVA 47.500 = 297.500.
 */
import { EX, examplePage } from "../../openapi/example-ids";

const PASSED = (name: string) => ({ name, result: "PASSED", message: null });

const mail = { state: "SENT", attempts: 1, sent_at: "2026-11-27T14:02:11.000Z", message: null, next_attempt_at: null, delivered_at: "2026-11-27T14:02:13.000Z" };
const replyTo = { email: "dte@elsimulador.cl", source: "TAXPAYER_DIRECTORY" };

export const receivedExample = {
  id: EX.received,
  id_company: EX.company,
  issuer: { tax_id: EX.buyerRut, legal_name: "DISTRIBUIDORA EL SIMULADOR S.A.", activity: "Distribución de artículos de oficina" },
  recipient: { tax_id: EX.issuerRut, legal_name: "COMERCIAL LOS ANDES SPA" },
  document_type: "33",
  folio: 88123,
  issue_date: "2026-11-27",
  totals: { net: "250000", exempt: null, vat: "47500", total: "297500" },
  lines: [
    { line: 1, name: "Resma papel carta 500 hojas", quantity: "50", unit_price: "4000", amount: "200000" },
    { line: 2, name: "Despacho a domicilio", quantity: "1", unit_price: "50000", amount: "50000" },
  ],
  channel: "EMAIL",
  received_file: {
    name: "EnvioDTE_96790240-3_T33_F88123.xml",
    envelope_id: "SetDoc",
    message_id: EX.message,
    received_at: "2026-11-27T14:02:10.000Z",
    acknowledgment: { at: "2026-11-27T14:02:11.000Z", reply_to: replyTo, mail },
    superseded: [],
  },
  xml_status: "RECEIVED",
  verification: {
    status: "VERIFIED",
    reception_status: 0,
    reception_status_text: "DTE Recibido OK",
    duplicate: false,
    checks: [
      PASSED("envelope_signature"),
      PASSED("dte_signature"),
      { ...PASSED("signer"), signer: { name: "ANA ROJAS MUÑOZ", tax_id: "15432876-9", issuer: "E-CERTCHILE CA FIRMA ELECTRONICA AVANZADA", kind: "CA_ISSUED", valid_from: "2025-06-01T00:00:00.000Z", valid_to: "2028-06-01T00:00:00.000Z" } },
      PASSED("ted"),
      PASSED("caf"),
      PASSED("recipient_rut"),
      PASSED("issuer_rut"),
      PASSED("schema"),
      PASSED("totals"),
      PASSED("duplicate"),
      PASSED("sii_status"),
    ],
  },
  sii_received_at: "2026-11-27T13:58:40.000Z",
  cession: null,
  response_deadline: "2026-12-05T13:58:40.000Z",
  seconds_left: 690820,
  response_state: "PENDING",
  responses: [],
  downloads: ["xml", "pdf", "recepcion_envio"],
  received_at: "2026-11-27T14:02:10.000Z",
  updated_at: "2026-11-27T14:05:00.000Z",
};

export const receivedPageExample = examplePage([receivedExample]);

export const receptionUploadExample = { file: "(binary: EnvioDTE_96790240-3_T33_F88123.xml, an EnvioDTE or a single DTE)" };

export const uploadResultExample = {
  kind: "EnvioDTE",
  file_sha256: "fafb5171f78f97d5d2ee371b07fc54d914cfb3d7e5ddbbafd1e56bb779986047",
  documents: [{ ...receivedExample, channel: "UPLOAD", received_file: { ...receivedExample.received_file, message_id: EX.replyMessage }, outcome: "NEW" }],
};

export const sendResponseExample = { action: "ACD", reason: "Recibido conforme" };

export const respondedExample = {
  ...receivedExample,
  seconds_left: null,
  response_state: "ACCEPTED",
  responses: [
    {
      action: "ACD",
      reason: "Recibido conforme",
      at: "2026-11-28T11:00:00.000Z",
      sii_code: 0,
      sii_message: "Acción Completada OK",
      files: ["resultado_dte"],
      reply_to: replyTo,
      mail: { ...mail, sent_at: "2026-11-28T11:00:02.000Z", delivered_at: null },
    },
  ],
  downloads: ["xml", "pdf", "recepcion_envio", "resultado_dte"],
  updated_at: "2026-11-28T11:00:02.000Z",
};

export const replyMailExample = { reply: "ACD", email: "facturacion@elsimulador.cl" };

export const replyMailedExample = {
  ...respondedExample,
  responses: [{ ...respondedExample.responses[0]!, reply_to: { email: "facturacion@elsimulador.cl", source: "REQUEST" }, mail: { ...mail, sent_at: "2026-11-28T11:30:00.000Z", delivered_at: null } }],
  updated_at: "2026-11-28T11:30:00.000Z",
};

const message = {
  id: EX.message,
  id_company: EX.company,
  channel: "EMAIL",
  sender: "facturacion@elsimulador.cl",
  recipient: "dte+k3q9x2m8v7c4b1n6@dte.example.cl",
  subject: "Factura electrónica N° 88123 de DISTRIBUIDORA EL SIMULADOR S.A.",
  size: 48210,
  sha256: "3b1f0c9e8d2a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c",
  outcome: "STORED",
  detail: null,
  documents: 1,
  attachments: [
    { name: "EnvioDTE_96790240-3_T33_F88123.xml", content_type: "text/xml", size: 9120, read_as: "XML" },
    { name: "factura_88123.pdf", content_type: "application/pdf", size: 36544, read_as: "IGNORED" },
  ],
  received_at: "2026-11-27T14:02:10.000Z",
};

export const messagePageExample = examplePage([message]);

export const messageDetailExample = { ...message, document_ids: [EX.received] };
