/**
 * Dead-letter consumer of the issuance queue: messages that exhausted their retries. The document
 * keeps its state (it is never dropped and its folio is kept); the failure is noted on it and the
 * stuck-documents sweep re-drives it.
 *
 * A message may also die *after* its work was done: a cancelling note ended REJECTED or FAILED, and
 * the release of its cancellation that follows (other writes, one in another store) kept failing.
 * Its redelivery would release it (`releaseIfEnded`), but a dead letter is redelivered only when an
 * operator re-drives it, and until then the cancelled document still shows the ended note as the one
 * cancelling it. So the dead-letter consumer does that release itself, for the note a message names
 * or the notes of the envelope a poll names; if that fails too, the dead letter is retried.
 */
import { and, eq, inArray } from "drizzle-orm";
import { partitionOfId, type StoreHandle } from "../../storage/db/document-store";
import { invoices } from "../../storage/db/schema";
import { noteProblem } from "../state";
import { describeError, log } from "../../lib/log";
import { pipelineMessage } from "./messages";
import { releaseCancellationsIn } from "./steps/context";

const ENDED = ["REJECTED", "FAILED"] as const;

export async function handleDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const msg of batch.messages) {
    try {
      await settle(env, msg);
    } catch (e) {
      log("warn", "dead-lettered pipeline message not settled; retried", { id: msg.id, error: describeError(e) });
      msg.retry();
      continue;
    }
    log("error", "dead-lettered pipeline message", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 500), attempts: msg.attempts });
    msg.ack();
  }
}

async function settle(env: Env, msg: Message<unknown>): Promise<void> {
  const parsed = pipelineMessage.safeParse(msg.body);
  if (!parsed.success) return;
  const body = parsed.data;
  if (body.type === "invoice") {
    const invoiceId = body.invoice_id;
    const note = `Gave up after ${msg.attempts} delivery attempts at ${new Date().toISOString()}; the periodic sweep will try again.`;
    const p = await partitionOfId(env, body.company_id, invoiceId);
    if (p) {
      await noteProblem(p.db, { invoiceId }, note);
      await releaseEnded(env, p, eq(invoices.id, invoiceId));
    }
  } else if (body.type === "invoice.group") {
    // A batch's group: each of its documents, in the partition its id names, as a single one above.
    const note = `Gave up after ${msg.attempts} delivery attempts of its group at ${new Date().toISOString()}; the periodic sweep will try again.`;
    for (const invoiceId of body.invoice_ids) {
      const p = await partitionOfId(env, body.company_id, invoiceId);
      if (p) await noteProblem(p.db, { invoiceId }, note);
    }
  } else if (body.type === "envelope.poll") {
    const p = await partitionOfId(env, body.company_id, body.envelope_id);
    if (p) await releaseEnded(env, p, eq(invoices.envelopeId, body.envelope_id));
  }
  // A buyer-response check given up: its lease ends and the store's alarm sends it again (domain/invoices/buyer-response.ts).
  // A received document's SII status check given up: its `sii_status` stays NOT_CHECKED as last recorded (reception/sii-status.ts).
}

/** Releases the cancellations held by the REJECTED or FAILED cancelling notes `which` selects in partition `p`. */
async function releaseEnded(env: Env, p: StoreHandle, which: ReturnType<typeof eq>): Promise<void> {
  const notes = await p.db
    .select({ id: invoices.id, companyId: invoices.companyId, cancelsInvoiceId: invoices.cancelsInvoiceId })
    .from(invoices)
    .where(and(which, inArray(invoices.status, [...ENDED])));
  const cancelling = notes.filter((n) => n.cancelsInvoiceId);
  if (cancelling.length > 0) await releaseCancellationsIn(env, p, cancelling);
}
