/**
 * A batch through the issuance queue as groups, not documents: one `invoice.group` message names up
 * to GROUP_SIZE documents of a batch, and the consumer takes it apart into per-document work that
 * settles the one message (acked when every document's work is; retried, whole, when one asks to
 * be: each step is idempotent, so the documents already done do nothing twice). GROUP_SIZE keeps a
 * consumer batch (50 messages) within the allocator's 1,000 documents per call. The documents the
 * consumer prepares together are signed into envelopes of at most ENVELOPE_LIMIT documents.
 */
import { chunked } from "../../lib/chunked";
import { invoiceBody, type InvoiceGroupMessage, type InvoiceMessage } from "../pipeline/messages";

export const GROUP_SIZE = 20;

/**
 * Documents per envelope, per kind: the boleta service's EnvioBOLETA takes 1 to 500 DTEs; EnvioDTE's
 * schema allows 2,000, and 500 keeps a refused upload (which rejects every document in it) bounded.
 * Whatever the count, an envelope stays under the upload's file size limit (2 MiB at the simulated
 * SII, less room for the envelope's own header and signature). Documents whose size is not known
 * here (signed by an earlier delivery) go at most UNSIZED_LIMIT to an envelope, as one queue batch
 * of single messages would.
 */
export const ENVELOPE_LIMIT: Record<string, number> = { EnvioBOLETA: 500, EnvioDTE: 500 };
const DEFAULT_ENVELOPE_LIMIT = 500;
export const ENVELOPE_MAX_BYTES = 2 * 1024 * 1024 - 32 * 1024;
const UNSIZED_LIMIT = 50;

/** One `invoice.group` message per GROUP_SIZE documents, in as few queue calls as the queue allows (100 messages each). */
export async function enqueueGroups(env: Pick<Env, "ISSUANCE_QUEUE">, companyId: string, invoiceIds: string[], requestId?: string): Promise<number> {
  const messages = chunked(invoiceIds, GROUP_SIZE).map((ids) => ({ body: { v: 1, type: "invoice.group", company_id: companyId, invoice_ids: ids, request_id: requestId } satisfies InvoiceGroupMessage }));
  for (const chunk of chunked(messages, 100)) await env.ISSUANCE_QUEUE.sendBatch(chunk);
  return messages.length;
}

/** The documents of a group message as one `invoice` work item each, settling the group message together. */
export function expandGroup(msg: Message<unknown>, group: InvoiceGroupMessage): { msg: Message<unknown>; body: InvoiceMessage }[] {
  const ids = [...new Set(group.invoice_ids)];
  let pending = ids.length;
  let retry: { delaySeconds: number } | null = null;
  const settled = (asked: QueueRetryOptions | null) => {
    if (asked) retry = { delaySeconds: Math.max(retry?.delaySeconds ?? 0, asked.delaySeconds ?? 0) };
    if (--pending > 0) return;
    if (retry) msg.retry(retry);
    else msg.ack();
  };
  return ids.map((id) => {
    let done = false;
    const once = (asked: QueueRetryOptions | null) => {
      if (done) return;
      done = true;
      settled(asked);
    };
    const body = invoiceBody(id, group.company_id, group.request_id);
    const view: Message<unknown> = { id: `${msg.id}:${id}`, timestamp: msg.timestamp, body, attempts: msg.attempts, ack: () => once(null), retry: (o?: QueueRetryOptions) => once(o ?? {}) };
    return { msg: view, body };
  });
}

/**
 * Each group of documents prepared together, cut into envelopes of at most its kind's limit (`kindOf`
 * its key) and ENVELOPE_MAX_BYTES of signed documents (`bytesOf` an item's size, or null when unknown).
 */
export function envelopeSized<T>(groups: Map<string, T[]>, kindOf: (key: string) => string, bytesOf: (item: T) => number | null): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const [key, items] of groups) {
    const limit = ENVELOPE_LIMIT[kindOf(key)] ?? DEFAULT_ENVELOPE_LIMIT;
    let part: T[] = [];
    let bytes = 0;
    const close = () => {
      if (part.length > 0) out.set(out.has(key) ? `${key}#${out.size}` : key, part);
      part = [];
      bytes = 0;
    };
    for (const item of items) {
      const size = bytesOf(item);
      const full = part.length >= (size === null ? Math.min(limit, UNSIZED_LIMIT) : limit) || (size !== null && part.length > 0 && bytes + size > ENVELOPE_MAX_BYTES);
      if (full) close();
      part.push(item);
      bytes += size ?? 0;
    }
    close();
  }
  return out;
}
