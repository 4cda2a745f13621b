/**
 * The public shape of an issued document: what `GET …/invoices/{id}` answers (with its history) and
 * what the `invoice.*` webhook events carry as `data` (without it).
 */
import { z } from "@hono/zod-openapi";
import { BUYER_STATES, INVOICE_STATUSES } from "../../db/schema";
import { secondsLeft } from "../../countries/cl";
import type { BuyerEvent } from "./buyer-response";
import { DOCUMENT_TYPES } from "./model";
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
    invoice_type_name: DOCUMENT_TYPES[row.documentType as keyof typeof DOCUMENT_TYPES]?.name ?? String(row.documentType),
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
