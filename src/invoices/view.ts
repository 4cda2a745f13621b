/**
 * The public shape of an issued document: what `GET …/invoices/{id}` answers (with its history) and
 * what the `invoice.*` webhook events carry as `data` (without it).
 */
import { z } from "@hono/zod-openapi";
import { BUYER_STATES, INVOICE_STATUSES } from "../storage/db/schema";
import { secondsLeft } from "../lib/time";
import type { BuyerEvent } from "./buyer-response";
import { DELIVERY_STATES, deliveryOf } from "./buyer-delivery";
import { documentTypeName } from "./model";
import type { InvoiceRow } from "./state";
import type { invoiceDetail } from "./queries";

export const StatusSchema = z.enum(INVOICE_STATUSES).openapi({
  description:
    "Processing status (DECISIONS 17): RECEIVED → GENERATED (folio assigned) → SIGNED (stamped and signed) → SENT (at the SII) → ACCEPTED, ACCEPTED_WITH_OBJECTIONS, REJECTED or FAILED (we could not produce or deliver it; fiscal_message says why).",
});

export const EventSchema = z
  .object({
    status: StatusSchema,
    fiscal_status: z.string().nullable(),
    message: z.string().nullable(),
    at: z.string().openapi({ description: "ISO 8601, UTC." }),
  })
  .openapi("InvoiceEvent");

export const BuyerResponseSchema = z
  .object({
    state: z.enum(BUYER_STATES).openapi({
      description:
        "PENDING: within the buyer's 8 days, no answer yet. ACCEPTED: the buyer accepted the contents (ACD) or acknowledged receipt of the goods or services (ERM, Ley 19.983). CLAIMED: the buyer claimed it (RCD contents, RFP/RFT goods partly or wholly missing); a claimed factura cannot be assigned (factoring) and usually calls for a credit note. ACCEPTED_BY_LAW: 8 days passed without a claim.",
    }),
    sii_received_at: z.string().nullable().openapi({ description: "When the SII received the document (ISO 8601, the SII's offset): the buyer's 8 days run from it. Null until first read." }),
    deadline: z.string().nullable().openapi({ description: "End of the buyer's 8 days, ISO 8601 UTC." }),
    seconds_left: z.number().int().nullable().openapi({ description: "Whole seconds until `deadline` when this was answered (0 once passed)." }),
    events: z
      .array(
        z.object({
          code: z.string().openapi({ example: "ACD", description: "The SII's event code: ACD, ERM, RCD, RFP, RFT; also NCA/ENC (a credit note referring to the document)." }),
          description: z.string().openapi({ example: "Acepta Contenido del Documento" }),
          by_tax_id: z.string().openapi({ description: "RUT of whoever recorded it at the SII." }),
          at: z.string().openapi({ description: "ISO 8601 with the SII's offset." }),
        }),
      )
      .openapi({ description: "The SII's register of events on the document, as last read, oldest first." }),
    checked_at: z.string().nullable().openapi({ description: "When the SII's register was last read (ISO 8601 UTC); null before the first read." }),
    next_check_at: z.string().nullable().openapi({ description: "When it is next read: soon after acceptance, then at growing intervals (10 minutes to 6 hours) and once just after the deadline; null when nothing more can change." }),
  })
  .openapi("BuyerResponse");

export const BuyerDeliverySchema = z
  .object({
    state: z.enum(DELIVERY_STATES).openapi({
      description:
        "PENDING: to be mailed (right after the SII's acceptance, or again after a failed attempt: `message` says why); SENT: the EnvioDTE addressed to the buyer was mailed to `email`, with the A4 PDF; NO_ADDRESS: the SII's taxpayer directory has no exchange address for the buyer (send it with an address: `POST …/buyer_delivery`); FAILED: every attempt failed (`message`), or the buyer's server bounced it after it was sent (`sent_at` set; `message` says what the server said, read from its delivery status notification to the company's reception address, the address deliveries are sent from, or from the mail service's Email Sending event; also when the mail service refused it or gave up on it).",
    }),
    email: z.string().nullable().openapi({ description: "Where it was (or is being) sent." }),
    source: z.enum(["TAXPAYER_DIRECTORY", "REQUEST"]).nullable().openapi({ description: "The buyer's exchange address in the SII's taxpayer directory, or the address given on request." }),
    attempts: z.number().int(),
    sent_at: z.string().nullable().openapi({ description: "ISO 8601 UTC." }),
    message: z.string().nullable().openapi({ description: "Why the last attempt failed, or why none was made; on SENT, null, or why the PDF was left out (the mail carries the EnvioDTE and the A4 PDF)." }),
    delivered_at: z.string().nullable().openapi({
      description:
        "When the buyer's mail server accepted the mail SENT (ISO 8601 UTC), as the mail service reported it (Cloudflare Email Service's `message.delivered` Email Sending event), with an `invoice.buyer_delivery` event; null until then, and for a new attempt; a bounce after it (a server may accept a mail and bounce it later) makes the delivery FAILED and leaves it as recorded. It stays null where the mail service reports no deliveries (Email Routing's `send_email`, `wrangler dev`): SENT then means only that the mail service took it.",
    }),
  })
  .openapi("BuyerDelivery");

export const BUYER_REPLY_STATUSES = ["RECEIVED", "NOT_RECEIVED", "ACCEPTED", "ACCEPTED_WITH_DISCREPANCIES", "REJECTED", "GOODS_RECEIVED", "UNKNOWN"] as const;

export const BuyerReplySchema = z
  .object({
    id: z.string().openapi({ description: "Stable id of this entry (the same file again records nothing new)." }),
    kind: z.enum(["RECEPTION", "RESULT", "RECEIPT"]).openapi({
      description:
        "RECEPTION: the buyer's system received the document (RespuestaDTE, RecepcionEnvio). RESULT: the buyer accepts or rejects its contents (RespuestaDTE, ResultadoDTE). RECEIPT: the buyer acknowledges receipt of the goods or services under Ley 19.983 (EnvioRecibos).",
    }),
    status: z.enum(BUYER_REPLY_STATUSES).openapi({
      description:
        "RECEIVED / NOT_RECEIVED (RECEPTION: EstadoRecepDTE 0 or another code; for a verdict on the whole envelope, EstadoRecepEnv); ACCEPTED, ACCEPTED_WITH_DISCREPANCIES, REJECTED (RESULT: EstadoDTE 0, 1, 2); GOODS_RECEIVED (RECEIPT); UNKNOWN: a code the SII's tables do not have.",
    }),
    envelope_id: z.string().nullable().openapi({
      description: "For a RECEPTION that names no document (the buyer's verdict on the whole envelope the service mailed it, `buyer_delivery`): the envelope's SetDTE ID (EnvioDTEID), and `code` is its EstadoRecepEnv. Null for an entry about the document itself.",
    }),
    code: z.number().int().nullable().openapi({ description: "The code as the buyer wrote it (EstadoRecepDTE, EstadoRecepEnv, EstadoDTE); null for a RECEIPT." }),
    code_text: z.string().nullable().openapi({ description: "What the code means in the SII's tables." }),
    message: z.string().nullable().openapi({ description: "The buyer's own words (RecepDTEGlosa, EstadoDTEGlosa)." }),
    rejection_code: z.number().int().nullable().openapi({ description: "CodRchDsc of a RESULT: the buyer's rejection or discrepancy code." }),
    from_tax_id: z.string().nullable().openapi({ description: "Who answers (RutResponde of the reply)." }),
    signature: z
      .object({
        valid: z.boolean().openapi({ description: "The signature that covers this entry verifies (the Resultado's, or the Recibo's own). An entry with an invalid signature is shown, never trusted." }),
        message: z.string().nullable(),
        signer_tax_id: z.string().nullable().openapi({ description: "The RUT in the signer's certificate." }),
        signer_name: z.string().nullable(),
      })
      .openapi("BuyerReplySignature"),
    discrepancies: z
      .array(z.object({ field: z.enum(["recipient_tax_id", "total", "issue_date", "responder_tax_id"]), reply: z.string().nullable(), document: z.string() }))
      .openapi({ description: "Where the reply's copy of the document differs from the document: a reply about another buyer's copy, or a forged one." }),
    receipt: z
      .object({ place: z.string().nullable(), signer_tax_id: z.string().nullable(), signed_at: z.string().nullable() })
      .nullable()
      .openapi({ description: "A RECEIPT's Recinto, RutFirma and TmstFirmaRecibo; null for the other kinds." }),
    replied_at: z.string().nullable().openapi({ description: "The reply's own time stamp (TmstFirmaResp, TmstFirmaEnv), the buyer's local time as written." }),
    received_at: z.string().openapi({ description: "When the service read it, ISO 8601 UTC." }),
    channel: z.enum(["EMAIL", "UPLOAD"]),
    message_id: z.string().nullable().openapi({ description: "The inbound message (GET /api/reception/messages/{id}) that brought it." }),
    file_sha256: z.string().openapi({ description: "SHA-256 of the reply file as received (download it from `…/buyer_replies/{reply_id}/xml`)." }),
  })
  .openapi("BuyerReply");

export type BuyerReplyRecord = z.infer<typeof BuyerReplySchema>;

export const InvoiceFields = z
  .object({
    id: z.string().openapi({ example: "inv_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
    company_id: z.string(),
    invoice_type: z.string().openapi({ example: "33", description: "SII document code." }),
    invoice_type_name: z.string().openapi({ example: "FACTURA ELECTRÓNICA" }),
    status: StatusSchema,
    fiscal_status: z.string().nullable().openapi({ description: "The SII's own code for the document or its envelope (REC, SOK, EPR, RLV, RCH, RSC, ...); null before sending." }),
    fiscal_message: z.string().nullable().openapi({ description: "What fiscal_status means, in words; or why the document FAILED." }),
    folio: z.number().int().nullable().openapi({ description: "Assigned by the pipeline; null until then." }),
    external_reference: z.string().nullable(),
    issue_date: z.string().openapi({ format: "date" }),
    total: z.string().openapi({ example: "119000", description: "MntTotal as a decimal string (CLP integers; foreign currency up to 4 decimals)." }),
    currency: z.string().openapi({ example: "CLP" }),
    recipient: z.object({ tax_id: z.string(), legal_name: z.string() }),
    track_id: z.string().nullable().openapi({ description: "The SII's track id of the envelope that carried the document." }),
    cancels_invoice_id: z.string().nullable().openapi({ description: "For a cancelling note: our document it cancels." }),
    cancelled_by: z.string().nullable().openapi({ description: "The note that cancels this document, if any." }),
    last_error: z.string().nullable().openapi({ description: "The latest problem while the document waits and retries (e.g. SII unreachable)." }),
    attempts: z.number().int(),
    buyer_response: BuyerResponseSchema.nullable().openapi({
      description:
        "The buyer's answer, read from the SII's register of events: for facturas (33, 34, 43) once the SII accepted them; null for other documents. Changes are sent as `invoice.buyer_response` events.",
    }),
    buyer_delivery: BuyerDeliverySchema.nullable().openapi({
      description:
        "The document mailed to its buyer: once the SII accepts it, the service signs an EnvioDTE addressed to the buyer and mails it to the buyer's exchange address (the SII hands the XML to no one: the issuer sends it). Null for boletas (39, 41) and until the SII accepts the document. `GET …/buyer_delivery/xml` gives the envelope sent. An attempt that settles it (SENT, NO_ADDRESS, FAILED) is sent as an `invoice.buyer_delivery` event.",
    }),
    buyer_replies: z.array(BuyerReplySchema).openapi({
      description:
        "The buyer's own replies mailed to the company's reception address or uploaded (`POST …/invoices/buyer_replies`), oldest first, at most 20: reception, acceptance or rejection of the contents, receipt of the goods. What the buyer told the company; the legal acceptance or claim is `buyer_response`, read from the SII. A new one is sent as an `invoice.buyer_reply` event.",
    }),
    created_at: z.string(),
    updated_at: z.string(),
  });

/** A document without its history (webhook events). */
export const InvoiceSummarySchema = InvoiceFields.openapi("InvoiceSummary");

export const InvoiceSchema = InvoiceFields.extend({
  history: z.array(EventSchema).openapi({ description: "Every transition with its time, oldest first." }),
}).openapi("Invoice");

export type InvoiceDetail = Awaited<ReturnType<typeof invoiceDetail>>;

export function invoiceSummary(row: InvoiceRow, cancelledBy: string | null) {
  return {
    id: row.id,
    company_id: row.companyId,
    invoice_type: String(row.documentType),
    invoice_type_name: documentTypeName(row.documentType),
    status: row.status,
    fiscal_status: row.fiscalStatus,
    fiscal_message: row.fiscalMessage,
    folio: row.folio,
    external_reference: row.externalReference,
    issue_date: row.issueDate,
    total: row.total,
    currency: row.currency,
    recipient: { tax_id: row.recipientRut, legal_name: row.recipientName },
    track_id: row.trackId,
    cancels_invoice_id: row.cancelsInvoiceId,
    cancelled_by: cancelledBy,
    last_error: row.lastError,
    attempts: row.attempts,
    buyer_response: buyerResponseOf(row),
    buyer_delivery: deliveryOf(row),
    // Entries recorded before envelope verdicts were read have no envelope_id.
    buyer_replies: row.buyerReplies ? (JSON.parse(row.buyerReplies) as BuyerReplyRecord[]).map((r) => ({ ...r, envelope_id: r.envelope_id ?? null })) : [],
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The buyer's answer of a document (null when it takes none; an event recorded before the field existed has none). */
function buyerResponseOf(row: InvoiceRow, now = Date.now()): z.infer<typeof BuyerResponseSchema> | null {
  if (!row.buyerState) return null;
  return {
    state: row.buyerState,
    sii_received_at: row.siiReceivedAt ?? null,
    deadline: row.buyerDeadline ?? null,
    seconds_left: secondsLeft(row.buyerDeadline ?? null, now),
    events: JSON.parse(row.buyerEvents ?? "[]") as BuyerEvent[],
    checked_at: row.buyerCheckedAt ?? null,
    next_check_at: row.buyerCheckAt ?? null,
  };
}

export function invoiceView(row: InvoiceRow, { events, cancelledBy }: InvoiceDetail) {
  return {
    ...invoiceSummary(row, cancelledBy),
    history: events.map((e) => ({ status: e.status as InvoiceRow["status"], fiscal_status: e.fiscalStatus, message: e.message, at: e.createdAt })),
  };
}
