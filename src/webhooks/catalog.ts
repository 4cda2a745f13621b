/**
 * The event catalogue: every event type a webhook endpoint can subscribe to, with its description,
 * the schema of its `data` and an example. The OpenAPI document's `webhooks` section, the validation
 * of an endpoint's `events` filter and the rendering of each delivery all read this one table; a new
 * event type is one entry here (plus the writer that records it in event_outbox).
 */
import { z } from "@hono/zod-openapi";
import { InvoiceSummarySchema } from "../invoices/view";
import { CESSION_EVENTS } from "../invoices/cessions/events";
import { BatchCompletedDataSchema } from "../invoices/batches/view";
import { InboundMessageSchema, ReceivedDocumentSchema } from "../reception/schema";
import { describeSchedule } from "./schedule";

export const API_VERSION = "1.0.0";

const EnuData = z
  .object({
    reason: z.enum(["LOW_AVAILABILITY", "EXHAUSTED", "EXPIRING"]).openapi({ description: "Folios below the alert threshold, none left, or a CAF range that expires within 30 days." }),
    document_type: z.string().openapi({ example: "33" }),
    available: z.number().int().openapi({ description: "Folios left for the document type." }),
    threshold: z.number().int().openapi({ description: "The alert threshold in force." }),
    caf_id: z.string().optional().openapi({ description: "The CAF range concerned (EXPIRING)." }),
    expires_at: z.string().optional().openapi({ description: "When that range expires (EXPIRING), ISO 8601." }),
    range_available: z.number().int().optional().openapi({ description: "Folios left in that range (EXPIRING)." }),
    detected_at: z.string().openapi({ description: "ISO 8601, UTC." }),
  })
  .openapi("EnuEventData");

const CertificateExpiringData = z
  .object({
    certificate_id: z.string(),
    valid_to: z.string().openapi({ description: "ISO 8601, UTC." }),
    days_left: z.number().int(),
    threshold_days: z.union([z.literal(30), z.literal(15), z.literal(7)]),
  })
  .openapi("CertificateExpiringEventData");

const EndpointDisabledData = z
  .object({
    endpoint_id: z.string(),
    url: z.string(),
    failing_since: z.string().openapi({ description: "First failure of the run that disabled it, ISO 8601." }),
    reason: z.string(),
  })
  .openapi("WebhookEndpointDisabledEventData");

const TestData = z.object({ message: z.string() }).openapi("TestEventData");

export interface EventDefinition {
  description: string;
  data: z.ZodTypeAny;
  example: Record<string, unknown>;
}

const invoiceExample = (status: string, fiscal: string | null) => ({
  id: "inv_8ZK2M4Q7TXW1B5N9C3D6F0HJ",
  company_id: "cmp_4Q7TXW1B5N9C3D6F0HJ8ZK2M",
  invoice_type: "33",
  invoice_type_name: "FACTURA ELECTRÓNICA",
  status,
  fiscal_status: fiscal,
  fiscal_message: null,
  folio: 1042,
  external_reference: "ERP-1001",
  issue_date: "2026-11-23",
  total: "35700",
  currency: "CLP",
  recipient: { tax_id: "77879240-0", legal_name: "Cliente Ltda" },
  track_id: "4509812",
  cancels_invoice_id: null,
  cancelled_by: null,
  last_error: null,
  attempts: 0,
  // A factura the SII accepted awaits its buyer's answer from then on.
  buyer_response: (["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS"].includes(status)
    ? { state: "PENDING", sii_received_at: null, deadline: null, seconds_left: null, events: [], checked_at: null, next_check_at: "2026-11-23T13:00:04.000Z" }
    : null) as Record<string, unknown> | null,
  buyer_delivery: (["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS"].includes(status)
    ? { state: "PENDING", email: null, source: null, attempts: 0, sent_at: null, message: null, delivered_at: null }
    : null) as Record<string, unknown> | null,
  buyer_replies: [] as Record<string, unknown>[],
  created_at: "2026-11-23T13:00:00.000Z",
  updated_at: "2026-11-23T13:00:04.000Z",
});

const invoiceEvent = (what: string, status: string, fiscal: string | null): EventDefinition => ({
  description: `A document ${what}. \`data\` is the document as \`GET …/invoices/{id}\` answers it, without \`history\`.`,
  data: InvoiceSummarySchema,
  example: invoiceExample(status, fiscal),
});

const receivedExample = {
  id: "rcv_01JD3Q4M6YV8T1N5B2K7C9XW3E", id_company: "cmp_4Q7TXW1B5N9C3D6F0HJ8ZK2M",
  issuer: { tax_id: "76086428-5", legal_name: "Proveedor SpA", activity: "Venta de software" }, recipient: { tax_id: "77879240-0", legal_name: "Cliente Ltda" },
  document_type: "33", folio: 1042, issue_date: "2026-11-23", totals: { net: "30000", exempt: null, vat: "5700", total: "35700" },
  lines: [{ line: 1, name: "Servicio", quantity: "1", unit_price: "30000", amount: "30000" }], channel: "EMAIL",
  received_file: { name: "EnvioDTE_76086428-5_T33_F1042.xml", envelope_id: "SetDoc", message_id: "inm_p1_01JD3Q4M3ZR2V8T1N5B2K7C9XW", received_at: "2026-11-23T13:00:05.000Z", acknowledgment: null, superseded: [] }, xml_status: "RECEIVED",
  verification: { status: "VERIFIED", reception_status: 0, reception_status_text: "DTE Recibido OK", duplicate: false, checks: [{ name: "dte_signature", result: "PASSED", message: null }] },
  sii_received_at: "2026-11-23T10:00:00-03:00", response_deadline: "2026-12-01T13:00:00.000Z", seconds_left: 691200, response_state: "PENDING", responses: [], cession: null as Record<string, unknown> | null,
  downloads: ["xml", "recepcion_envio"], received_at: "2026-11-23T13:00:05.000Z", updated_at: "2026-11-23T13:00:05.000Z",
};
const receivedEvent = (description: string): EventDefinition => ({ description: `${description} \`data\` is the received document as \`GET /api/reception/invoices/{id}\` answers it.`, data: ReceivedDocumentSchema, example: receivedExample });

/** Every event type, by name. Names are stable: dotted, lower case (ENU as the specification names it). */
export const EVENT_CATALOG = {
  ENU: {
    description: "Folio availability (§6): the folios of a document type fell below the alert threshold, ran out, or a CAF range expires within 30 days.",
    data: EnuData,
    example: { reason: "LOW_AVAILABILITY", document_type: "33", available: 9, threshold: 10, detected_at: "2026-11-23T13:00:00.000Z" },
  },
  "invoice.sent": invoiceEvent("was uploaded to the tax authority (status SENT)", "SENT", "REC"),
  "invoice.accepted": invoiceEvent("was accepted by the tax authority", "ACCEPTED", "EPR"),
  "invoice.accepted_with_objections": invoiceEvent("was accepted with objections (reparos)", "ACCEPTED_WITH_OBJECTIONS", "RLV"),
  "invoice.rejected": invoiceEvent("was rejected by the tax authority; `fiscal_message` says why", "REJECTED", "RCH"),
  "invoice.failed": invoiceEvent("could not be produced or delivered (FAILED); `fiscal_message` says why", "FAILED", null),
  "invoice.buyer_response": {
    ...invoiceEvent("issued as a factura (33, 34, 43) has a new answer from its buyer at the SII: accepted (ACD, ERM), claimed (RCD, RFP, RFT) or, after 8 days without a claim, accepted by law; `buyer_response` has the state and the SII's events", "ACCEPTED", "EPR"),
    example: {
      ...invoiceExample("ACCEPTED", "EPR"),
      buyer_response: {
        state: "CLAIMED", sii_received_at: "2026-11-23T10:00:05-03:00", deadline: "2026-12-01T13:00:05.000Z", seconds_left: 518400,
        events: [{ code: "RCD", description: "Reclamo al Contenido del Documento", by_tax_id: "22222222-2", at: "2026-11-25T09:12:40-03:00" }],
        checked_at: "2026-11-25T12:20:00.000Z", next_check_at: null,
      },
      updated_at: "2026-11-25T12:20:00.000Z",
    },
  },
  "invoice.buyer_reply": {
    ...invoiceEvent("received a reply from its buyer, mailed to the company's reception address or uploaded: the buyer's system received it (RespuestaDTE, RecepcionEnvio), the buyer accepts or rejects its contents (ResultadoDTE), or acknowledges receipt of the goods (EnvioRecibos); the new entries are the last of `buyer_replies`. Check `signature.valid` and `discrepancies` before acting on one; the legal answer is `buyer_response`", "ACCEPTED", "EPR"),
    example: {
      ...invoiceExample("ACCEPTED", "EPR"),
      buyer_replies: [
        {
          id: "rpl_3f1c9a0b7d2e4c6a8b0d1e2f3a", kind: "RESULT", status: "ACCEPTED", envelope_id: null, code: 0, code_text: "DTE Aceptado OK", message: "Conforme", rejection_code: null, from_tax_id: "77879240-0",
          signature: { valid: true, message: null, signer_tax_id: "12345678-5", signer_name: "Ana Pérez" }, discrepancies: [], receipt: null, replied_at: "2026-11-24T09:30:00",
          received_at: "2026-11-24T12:30:04.000Z", channel: "EMAIL", message_id: "inm_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E", file_sha256: "9f2c4e1a7b3d5f6e8a0c2b4d6f8e1a3c5b7d9f0e2a4c6b8d0f1e3a5c7b9d1f2e",
        },
      ],
      updated_at: "2026-11-24T12:30:04.000Z",
    },
  },
  "invoice.buyer_delivery": {
    ...invoiceEvent("accepted by the tax authority was mailed to its buyer as an EnvioDTE addressed to it (`buyer_delivery.state` SENT), could not be because the buyer has no known exchange address (NO_ADDRESS: send it with one, `POST …/invoices/{id}/buyer_delivery`), or failed after its last attempt or was bounced by the buyer's server after it was sent (FAILED: `buyer_delivery.message` says why); and once more when the mail service reports that the buyer's server accepted a SENT mail (`buyer_delivery.delivered_at` set). Attempts that will be tried again send none", "ACCEPTED", "EPR"),
    example: {
      ...invoiceExample("ACCEPTED", "EPR"),
      buyer_delivery: { state: "SENT", email: "dte@cliente.cl", source: "TAXPAYER_DIRECTORY", attempts: 1, sent_at: "2026-11-23T13:05:12.000Z", message: null, delivered_at: null },
      updated_at: "2026-11-23T13:05:12.000Z",
    },
  },
  ...CESSION_EVENTS,
  "received_document.ceded": {
    ...receivedEvent("The SII's register of cessions shows a received factura ceded to a third party (factoring), first seen or with a new holder: pay `cession.holder_tax_id`, not the supplier."),
    example: { ...receivedExample, response_state: "ACCEPTED_BY_LAW", seconds_left: null, cession: { holder_tax_id: "76543210-3", annotated_at: "2026-12-02T10:16:02-03:00", collection_tax_id: null, amount: null, first_seen_at: "2026-12-02T13:20:00.000Z", checked_at: "2026-12-02T13:20:00.000Z" } },
  },
  "batch.completed": {
    description: "Every row of a batch (`POST …/invoice-batches`) is final: each document ACCEPTED, ACCEPTED_WITH_OBJECTIONS, REJECTED or FAILED, the other rows refused at intake. `data` counts them; `GET …/invoice-batches/{batch_id}` lists the rows.",
    data: BatchCompletedDataSchema,
    example: { batch_id: "bat_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E", status: "COMPLETED", source: "JSON", rows: 1000, refused: 3, documents: 997, accepted: 996, accepted_with_objections: 0, rejected: 1, failed: 0, created_at: "2026-11-23T13:00:00.000Z", completed_at: "2026-11-23T13:00:41.000Z" },
  },
  "received_document.received": receivedEvent("A supplier's document arrived (e-mail, upload or the SII's XML) and passed every check."),
  "received_document.verification_failed": receivedEvent("A supplier's document arrived and failed a check (`verification.checks` says which); it is stored, and cannot be accepted."),
  "received_document.deadline_approaching": receivedEvent("Two days or less are left to accept or claim a received factura (8 days from the SII reception time)."),
  "received_document.deadline_passed": receivedEvent("The 8 days passed without a response: the document is accepted by law (`response_state` ACCEPTED_BY_LAW)."),
  "received_document.response_recorded": receivedEvent("An acceptance or claim was recorded at the SII and the signed replies produced."),
  "received_document.response_refused": receivedEvent("The SII refused an acceptance or claim; the document is unchanged."),
  "received_document.reply_mail_failed": {
    ...receivedEvent("A reply to the supplier could not be mailed after its last attempt (about 19 hours of them), or the supplier's server bounced it after it was sent (or the mail service refused it or gave up on it): the file's RecepcionEnvio (`received_file.acknowledgment.mail`) or the replies of a response (`responses[].mail`), whose `message` says why. Send the same response again to start its mailing over, or download the reply and send it to the supplier yourself."),
    example: {
      ...receivedExample,
      received_file: { ...receivedExample.received_file, acknowledgment: { at: "2026-11-23T13:00:05.000Z", reply_to: { email: "dte@proveedor.cl", source: "TAXPAYER_DIRECTORY" }, mail: { state: "FAILED", attempts: 8, sent_at: null, message: "Mailbox unavailable: dte@proveedor.cl", next_attempt_at: null, delivered_at: null } } },
      downloads: ["xml", "pdf", "recepcion_envio"], updated_at: "2026-11-24T08:05:11.000Z",
    },
  },
  "inbound_message.no_documents": {
    description: "An e-mail reached the company's reception address but brought no document: nothing an EnvioDTE or DTE attached (`NO_DTE`), not a readable message (`MALFORMED`), over 20 MiB (`TOO_LARGE`) or a zip attachment refused (`ZIP_REFUSED`); `detail` says why. Ask the supplier to send it again, or upload the file. `data` is the message as `GET /api/reception/messages/{id}` answers it (without `document_ids`).",
    data: InboundMessageSchema,
    example: {
      id: "inm_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E", id_company: "cmp_4Q7TXW1B5N9C3D6F0HJ8ZK2M", channel: "EMAIL", sender: "facturacion@proveedor.cl", recipient: "dte+k3x9q2m7w4z8c1v5@dte.example.com",
      subject: "Factura 1042", size: 48213, sha256: "9f2c4e1a7b3d5f6e8a0c2b4d6f8e1a3c5b7d9f0e2a4c6b8d0f1e3a5c7b9d1f2e", outcome: "NO_DTE", detail: "The message carries no XML or zip attachment.", documents: 0,
      attachments: [{ name: "factura_1042.pdf", content_type: "application/pdf", size: 35120, read_as: "IGNORED" }], received_at: "2026-11-23T13:00:05.000Z",
    },
  },
  "certificate.expiring": {
    description: "The company's active signing certificate expires in 30, 15 or 7 days.",
    data: CertificateExpiringData,
    example: { certificate_id: "cer_2M4Q7TXW1B5N9C3D6F0HJ8ZK", valid_to: "2026-12-23T00:00:00.000Z", days_left: 30, threshold_days: 30 },
  },
  "webhook_endpoint.disabled": {
    description: "Another endpoint of the company failed every delivery for 5 days and was disabled; sent to the company's other endpoints.",
    data: EndpointDisabledData,
    example: { endpoint_id: "whk_9C3D6F0HJ8ZK2M4Q7TXW1B5N", url: "https://erp.example.com/hooks/dte", failing_since: "2026-11-18T09:00:00.000Z", reason: "Every delivery failed for 5 days" },
  },
  "webhook.test": {
    description: "Sent on request (`POST …/webhooks/{id}/test`) to check an endpoint; only to that endpoint.",
    data: TestData,
    example: { message: "Test event from the DTE API" },
  },
} as const satisfies Record<string, EventDefinition>;

export type EventType = keyof typeof EVENT_CATALOG;
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

export function isEventType(t: string): t is EventType {
  return Object.hasOwn(EVENT_CATALOG, t);
}

/** The envelope every delivery carries. */
export function eventEnvelopeSchema(type: EventType) {
  return z
    .object({
      id: z.string().openapi({ description: "The event id; also the `webhook-id` header, the same on every attempt (deduplicate on it)." }),
      type: z.literal(type),
      created_at: z.string().openapi({ description: "When the event happened, ISO 8601 UTC." }),
      company_id: z.string(),
      livemode: z.boolean().openapi({ description: "false: the company belongs to test mode (documents went to the built-in SII simulator); true: live mode." }),
      api_version: z.literal(API_VERSION),
      data: EVENT_CATALOG[type].data,
    })
    .openapi(`Event_${type.replace(/\W/g, "_")}`);
}

/** The `webhooks` section of the OpenAPI 3.1 document (path items keyed by event type). */
export function openApiWebhooks(registry: { registerWebhook: (route: any) => void }) {
  for (const type of EVENT_TYPES) {
    const def: EventDefinition = EVENT_CATALOG[type];
    registry.registerWebhook({
      method: "post",
      path: type,
      tags: ["Webhooks"],
      summary: type,
      description: `${def.description}\n\nSigned as the Standard Webhooks specification says (headers \`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`). Answer 2xx within 10 s.\n\n${describeSchedule()}`,
      request: {
        body: {
          content: {
            "application/json": {
              schema: eventEnvelopeSchema(type),
              example: { id: "evt_5N9C3D6F0HJ8ZK2M4Q7TXW1B", type, created_at: "2026-11-23T13:00:04.000Z", company_id: "cmp_4Q7TXW1B5N9C3D6F0HJ8ZK2M", livemode: false, api_version: API_VERSION, data: def.example },
            },
          },
        },
      },
      responses: { 200: { description: "Any 2xx acknowledges the delivery." } },
    });
  }
}
