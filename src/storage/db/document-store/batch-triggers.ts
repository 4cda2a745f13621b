/**
 * Batch completion kept by the store itself: when a document of a batch reaches a final status, a
 * trigger counts it on its batch in the same transaction as the move, and the move that makes the
 * last one final marks the batch COMPLETED and records its `batch.completed` event in the store's
 * outbox (whose fan-out notice the final move's own `invoice.*` event arms). No pipeline step has to
 * know about batches, and no count can drift from the documents.
 */

/** The final statuses of a document (src/invoices/state.ts FINAL_STATUSES). */
const FINAL = "('ACCEPTED', 'ACCEPTED_WITH_OBJECTIONS', 'REJECTED', 'FAILED')";

/** How many of batch `b`'s documents are in `status`. */
const count = (status: string) => `(SELECT count(*) FROM invoices WHERE batch_id = b.id AND status = '${status}')`;

/**
 * The `batch.completed` event of the batch aliased `b`, completed at `at` (an SQL expression), as an
 * INSERT … SELECT that records it once (its dedupe key) and only when every document is final.
 */
export function batchCompletedEvent(batchId: string, at: string): string {
  const data = [
    "'batch_id', b.id", "'status', 'COMPLETED'", "'source', b.source", "'rows', b.rows", "'refused', b.refused", "'documents', b.documents",
    `'accepted', ${count("ACCEPTED")}`, `'accepted_with_objections', ${count("ACCEPTED_WITH_OBJECTIONS")}`,
    `'rejected', ${count("REJECTED")}`, `'failed', ${count("FAILED")}`, "'created_at', b.created_at", `'completed_at', ${at}`,
  ].join(", ");
  return `INSERT OR IGNORE INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at, dispatched_at)
    SELECT 'evt_' || lower(hex(randomblob(16))), b.company_id, 'batch.completed', 'batch:' || b.id || ':completed', json_object(${data}), ${at}, NULL
    FROM invoice_batches b WHERE b.id = ${batchId} AND b.final_documents >= b.documents AND b.completed_at IS NULL;`;
}

/** Marks the batch COMPLETED once every document is final (after its event: the event reads completed_at IS NULL). */
export function batchCompletion(batchId: string, at: string): string {
  return `UPDATE invoice_batches SET status = 'COMPLETED', completed_at = ${at}, updated_at = ${at} WHERE id = ${batchId} AND final_documents >= documents AND completed_at IS NULL;`;
}

export const BATCH_TRIGGERS: readonly string[] = [
  `CREATE TRIGGER invoice_batches_final AFTER UPDATE OF status ON invoices WHEN NEW.batch_id IS NOT NULL AND NEW.status IN ${FINAL} AND OLD.status NOT IN ${FINAL} BEGIN ` +
    `UPDATE invoice_batches SET final_documents = final_documents + 1, updated_at = NEW.updated_at WHERE id = NEW.batch_id; ` +
    `${batchCompletedEvent("NEW.batch_id", "NEW.updated_at")} ${batchCompletion("NEW.batch_id", "NEW.updated_at")} END`,
];
