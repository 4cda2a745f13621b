import { z } from "zod";
import { cessionMessage } from "../cessions/messages";

/**
 * Messages of the issuance queue (producers: the issuance POST, the consumer itself, the stuck-work sweeps of the document stores' alarms and of the cron). Bodies carry ids only (artifacts live in R2 and D1); `v` is the
 * schema version. A message that does not parse goes to the dead-letter path.
 */
export const invoiceMessage = z.object({
  v: z.literal(1),
  type: z.literal("invoice"),
  invoice_id: z.string(),
  company_id: z.string(),
  request_id: z.string().optional(),
});

/** The documents of one group of a batch (src/invoices/batches/groups.ts): one message instead of one per document. */
export const invoiceGroupMessage = z.object({
  v: z.literal(1),
  type: z.literal("invoice.group"),
  company_id: z.string(),
  invoice_ids: z.array(z.string()).min(1).max(100),
  request_id: z.string().optional(),
});

export const envelopePollMessage = z.object({
  v: z.literal(1),
  type: z.literal("envelope.poll"),
  envelope_id: z.string(),
  company_id: z.string(),
});

/** A read of the SII's register of events for an accepted factura: its buyer's answer (src/invoices/pipeline/buyer-checks.ts). */
export const buyerCheckMessage = z.object({
  v: z.literal(1),
  type: z.literal("invoice.buyer_check"),
  invoice_id: z.string(),
  company_id: z.string(),
});

/** An attempt to mail an accepted document to its buyer (src/invoices/pipeline/buyer-deliveries.ts). */
export const buyerDeliveryMessage = z.object({
  v: z.literal(1),
  type: z.literal("invoice.buyer_delivery"),
  invoice_id: z.string(),
  company_id: z.string(),
  /** The document's buyer_delivery_at as the attempt was taken (takeDueDeliveries): the message makes the attempt only while it is still that (absent on messages from before it was sent). */
  lease: z.string().optional(),
});

/** An attempt to mail a reply to a supplier: a received file's acknowledgment or a response's replies (src/reception/reply-mail.ts). */
export const replyMailMessage = z.object({
  v: z.literal(1),
  type: z.literal("reception.reply_mail"),
  company_id: z.string(),
  received_id: z.string(),
  reply: z.enum(["acknowledgment", "ACD", "ERM", "RCD", "RFP", "RFT"]),
  attempt: z.number().int().min(1),
  partitions: z.array(z.number().int().min(0)).max(100).optional(),
});

/**
 * A read of the SII's status of a received document, its `sii_status` check (src/reception/sii-status.ts):
 * `attempt` counts the reads, `since` is when the first was queued (reads stop 48 hours after it).
 */
export const siiStatusMessage = z.object({
  v: z.literal(1),
  type: z.literal("reception.sii_status"),
  company_id: z.string(),
  received_id: z.string(),
  attempt: z.number().int().min(1),
  since: z.iso.datetime(),
});

export const pipelineMessage = z.discriminatedUnion("type", [invoiceMessage, envelopePollMessage, buyerCheckMessage, buyerDeliveryMessage, replyMailMessage, siiStatusMessage, cessionMessage, invoiceGroupMessage]);
export type SiiStatusMessage = z.infer<typeof siiStatusMessage>;
export type ReplyMailMessage = z.infer<typeof replyMailMessage>;
export type BuyerDeliveryMessage = z.infer<typeof buyerDeliveryMessage>;
export type PipelineMessage = z.infer<typeof pipelineMessage>;
export type BuyerCheckMessage = z.infer<typeof buyerCheckMessage>;
export type InvoiceMessage = z.infer<typeof invoiceMessage>;
export type InvoiceGroupMessage = z.infer<typeof invoiceGroupMessage>;
export type EnvelopePollMessage = z.infer<typeof envelopePollMessage>;

/**
 * How long a document in a non-final state, or an envelope SENT, may sit untouched before its message
 * is taken as lost and sent again (the store's alarm, src/operations/objects/document-store/stuck-documents.ts).
 */
export const STUCK_AFTER_MS = 10 * 60_000;

export function invoiceBody(invoiceId: string, companyId: string, requestId?: string): InvoiceMessage {
  return { v: 1, type: "invoice", invoice_id: invoiceId, company_id: companyId, request_id: requestId };
}

export function envelopePollBody(envelopeId: string, companyId: string): EnvelopePollMessage {
  return { v: 1, type: "envelope.poll", envelope_id: envelopeId, company_id: companyId };
}

export function buyerCheckBody(invoiceId: string, companyId: string): BuyerCheckMessage {
  return { v: 1, type: "invoice.buyer_check", invoice_id: invoiceId, company_id: companyId };
}

/** One `invoice.buyer_check` message per check taken (at most 100: takeDueBuyerChecks takes at most 90). */
export async function enqueueBuyerChecks(env: Pick<Env, "ISSUANCE_QUEUE">, due: readonly { id: string; companyId: string }[]): Promise<void> {
  if (due.length > 0) await env.ISSUANCE_QUEUE.sendBatch(due.map((d) => ({ body: buyerCheckBody(d.id, d.companyId) })));
}

/** One `invoice.buyer_delivery` message per attempt taken (at most 90 per call, see takeDueDeliveries). */
export async function enqueueBuyerDeliveries(env: Pick<Env, "ISSUANCE_QUEUE">, due: readonly { id: string; companyId: string; lease?: string }[]): Promise<void> {
  if (due.length > 0) await env.ISSUANCE_QUEUE.sendBatch(due.map((d) => ({ body: { v: 1, type: "invoice.buyer_delivery", invoice_id: d.id, company_id: d.companyId, ...(d.lease ? { lease: d.lease } : {}) } satisfies BuyerDeliveryMessage })));
}

export function enqueueInvoice(env: Env, m: { invoiceId: string; companyId: string; requestId?: string }, delaySeconds?: number) {
  return env.ISSUANCE_QUEUE.send(invoiceBody(m.invoiceId, m.companyId, m.requestId), delaySeconds ? { delaySeconds } : undefined);
}

/** Status polls of envelopes, in one queue call. */
export function enqueueEnvelopePolls(env: Env, polls: { envelopeId: string; companyId: string; delaySeconds: number }[]) {
  return env.ISSUANCE_QUEUE.sendBatch(polls.map((p) => ({ body: envelopePollBody(p.envelopeId, p.companyId), ...(p.delaySeconds > 0 ? { delaySeconds: p.delaySeconds } : {}) })));
}
