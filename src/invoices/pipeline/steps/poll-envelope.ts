import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { envelopes, invoices } from "../../../storage/db/schema";
import { MOVES, envelopeTransition, type InvoiceRow } from "../../state";
import { startBuyerChecks } from "../../buyer-response";
import { startBuyerDelivery } from "../../buyer-delivery";
import type { DocumentKey } from "../../../countries/port";
import { type StepDeps, authorityOf, releaseCancellations, releaseIfEnded, signerFor, companyContext } from "./context";
import { chunked } from "../../../lib/chunked";

// ---------------------------------------------------------------------------------------------
// Step 4: SENT -> final. Polls the envelope; a final verdict moves every document.

/** What a poll reads of each document still SENT: its key for the authority, and what a rejected note releases. */
const POLLED = {
  id: invoices.id,
  companyId: invoices.companyId,
  cancelsInvoiceId: invoices.cancelsInvoiceId,
  documentType: invoices.documentType,
  folio: invoices.folio,
  issueDate: invoices.issueDate,
  total: invoices.total,
  recipientRut: invoices.recipientRut,
};
type Polled = Pick<InvoiceRow, keyof typeof POLLED>;

/** Polls an envelope once; `polls` is the number of polls made so far, to space the next one. */
export async function pollEnvelope(deps: StepDeps, envelopeId: string): Promise<{ state: "PENDING" | "DONE" | "GONE"; polls: number }> {
  const db = deps.store;
  // The envelope and its documents still SENT (the columns a poll uses: not the body, which an
  // envelope's every poll would otherwise carry over the store's RPC and map, up to 8 times).
  const [[envelope], open] = await db.batch([
    db.select().from(envelopes).where(eq(envelopes.id, envelopeId)).limit(1),
    db.select(POLLED).from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.status, "SENT"))),
  ]);
  if (!envelope) return { state: "GONE", polls: 0 };
  if (envelope.status === "DONE") {
    await releaseEndedNotes(deps, envelopeId);
    return { state: "GONE", polls: envelope.polls };
  }
  if (!envelope.trackId) return { state: "GONE", polls: envelope?.polls ?? 0 };
  const at = () => deps.now().toISOString();
  if (open.length === 0) {
    await db.update(envelopes).set({ status: "DONE", updatedAt: at() }).where(eq(envelopes.id, envelopeId));
    return { state: "DONE", polls: envelope.polls + 1 };
  }
  const { company } = await companyContext(deps, envelope.companyId);
  const signer = await signerFor(deps, envelope.companyId);
  const documents: DocumentKey[] = open.map((m) => ({
    invoiceId: m.id,
    documentType: m.documentType,
    folio: m.folio!,
    issueDate: m.issueDate,
    total: m.total,
    receiverRut: m.recipientRut,
  }));
  const verdict = await authorityOf(deps, company).poll({ kind: envelope.kind, trackId: envelope.trackId, companyRut: company.taxId, signer, documents });
  const mine = eq(invoices.envelopeId, envelopeId);
  if (!verdict.final) {
    // The envelope's progress (REC, SOK, FOK…) and, when it changed, its documents' fiscal status.
    await db.batch([
      db.update(envelopes).set({ siiStatus: verdict.fiscalStatus, polls: envelope.polls + 1, updatedAt: at() }).where(eq(envelopes.id, envelopeId)),
      ...envelopeTransition(db, mine, MOVES.pollProgress, { fiscalStatus: verdict.fiscalStatus, fiscalMessage: verdict.message }, verdict.message, sql`${invoices.fiscalStatus} IS NOT ${verdict.fiscalStatus}`),
    ]);
    return { state: "PENDING", polls: envelope.polls + 1 };
  }
  // Documents with the same verdict move together, in one batch with the envelope's end.
  const groups = new Map<string, { v: { outcome: InvoiceRow["status"]; fiscalStatus: string; message: string }; rows: Polled[] }>();
  for (const m of open) {
    const v = verdict.documents.get(m.id) ?? { outcome: "REJECTED" as const, fiscalStatus: verdict.fiscalStatus, message: verdict.message };
    const k = `${v.outcome}|${v.fiscalStatus}|${v.message}`;
    groups.set(k, { v, rows: [...(groups.get(k)?.rows ?? []), m] });
  }
  const verdicts = [...groups.values()];
  const single = verdicts.length === 1;
  const statements: BatchItem<"sqlite">[] = [
    db.update(envelopes).set({ siiStatus: verdict.fiscalStatus, polls: envelope.polls + 1, status: "DONE", updatedAt: at() }).where(eq(envelopes.id, envelopeId)),
  ];
  for (const { v, rows } of verdicts) {
    // One verdict for all (the usual case): select by envelope; otherwise by id, in chunks.
    const chunks = single ? [undefined] : chunked(rows.map((r) => r.id), 80);
    for (const ids of chunks) {
      const which = ids ? and(mine, inArray(invoices.id, ids)) : mine;
      const [update, history, ...events] = envelopeTransition(db, which, MOVES.verdict, { status: v.outcome, fiscalStatus: v.fiscalStatus, fiscalMessage: v.message, lastError: null }, v.message);
      // The facturas it accepted start waiting for their buyer's answer (domain/invoices/buyer-response.ts), and every
      // accepted document but a boleta its delivery to the buyer (domain/invoices/buyer-delivery.ts), before their event's snapshot.
      statements.push(update, history, startBuyerChecks(db, which, at()), startBuyerDelivery(db, which, at()), ...events);
    }
  }
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  // A rejected cancelling note no longer holds the document it meant to cancel.
  const moved = new Set(results.flatMap((r) => (Array.isArray(r) ? (r as { id?: string }[]).map((x) => x.id) : [])));
  const rejectedNotes = verdicts.filter((g) => g.v.outcome === "REJECTED").flatMap((g) => g.rows.filter((r) => r.cancelsInvoiceId && moved.has(r.id)));
  await releaseCancellations(deps, rejectedNotes);
  return { state: "DONE", polls: envelope.polls + 1 };
}

/**
 * A poll of a finished envelope (a retry after the verdict's batch): the notes it rejected release
 * their cancellations again, in case the release after the verdict failed (see `releaseIfEnded`).
 */
async function releaseEndedNotes(deps: StepDeps, envelopeId: string) {
  const notes = await deps.store
    .select({ id: invoices.id, companyId: invoices.companyId, cancelsInvoiceId: invoices.cancelsInvoiceId, status: invoices.status })
    .from(invoices)
    .where(and(eq(invoices.envelopeId, envelopeId), isNotNull(invoices.cancelsInvoiceId), inArray(invoices.status, ["REJECTED", "FAILED"])));
  await releaseIfEnded(deps, notes);
}
