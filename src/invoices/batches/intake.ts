/**
 * POST …/invoice-batches: every row through the single POST's checks, the valid rows' folios
 * reserved in one allocator call per document type and their references claimed in one index-store
 * batch, the batch with its documents and every row's result stored in one atomic store batch, and
 * the documents queued as groups (./groups.ts). Rows are independent: a refused row never stops the
 * others, and gives back whatever it took, so no folio is held for a row whose document is not stored.
 */
import { eq, and } from "drizzle-orm";
import { openStore, partitionedId, type StoreHandle } from "../../storage/db/document-store";
import { invoices } from "../../storage/db/schema";
import { AppError, type ErrorDetail } from "../../lib/errors";
import { createdUlid, randomUlid, seededUlid, type IdempotencyClaim } from "../../lib/ids";
import { describeError, log } from "../../lib/log";
import type { CompanyRow } from "../../accounts/companies/repository";
import { checkRows, type Candidate } from "./check";
import { claimRows } from "./claims";
import { enqueueGroups } from "./groups";
import { MAX_BATCH_ROWS, type RowError, type RowInput } from "./rows";
import { batchOfEarlierAttempt, getBatch, rowPage, statusCounts, storeBatch, type NewBatch } from "./store";
import { batchView } from "./view";

export interface BatchInput {
  source: NewBatch["source"];
  rows: RowInput[];
  fileName?: string | null;
  layout?: string | null;
  /** Says more in a refused row's details (a CSV row: the line and column of each field). */
  annotate?: (row: number, detail: ErrorDetail) => ErrorDetail;
}

export type BatchAnswer = ReturnType<typeof batchView>;

export async function issueBatch(env: Env, company: CompanyRow, input: BatchInput, requestId: string, now = new Date(), idempotency?: IdempotencyClaim): Promise<BatchAnswer> {
  if (input.rows.length === 0) throw new AppError("VALIDATION_FAILED", "The batch holds no document.", [{ field: "rows", message: "At least 1 item." }]);
  if (input.rows.length > MAX_BATCH_ROWS) throw new AppError("BATCH_TOO_MANY_ROWS", `The batch holds ${input.rows.length} documents; at most ${MAX_BATCH_ROWS} go in one batch: split it.`);
  const ulid = await createdUlid(env.API_KEY_PEPPER, idempotency, now.getTime());
  // A retry that took the claim over answers what an earlier attempt stored (its documents queued again).
  const earlier = idempotency?.takenOver ? await batchOfEarlierAttempt(env, company.id, ulid, idempotency.createdAt) : null;
  if (earlier) return answerStored(env, earlier, company.id, partitionedId("bat", earlier.ordinal, ulid), requestId);
  const store = await openStore(env, company.id, now);
  const batch: NewBatch = { id: partitionedId("bat", store.ordinal, ulid), source: input.source, fileName: input.fileName ?? null, layout: input.layout ?? null, rows: input.rows.map((r) => (r.lines ? { lines: r.lines } : {})) };
  const ids = await documentIds(env, store.ordinal, input.rows.length, now, idempotency);
  const refused = new Map<number, RowError>();
  const checked = await checkRows(env, company, input.rows, ids, refused, now);
  const { held, release } = await claimRows(env, company.id, checked, refused, now);
  const annotate = input.annotate;
  if (annotate) for (const [i, e] of refused) refused.set(i, { ...e, details: e.details.map((d) => annotate(i, d)) });
  try {
    await storeBatch(store, company, batch, held, refused, requestId, now);
  } catch (e) {
    // Nothing stored for certain only when refused; any other failure may have stored it (its answer
    // lost): what the rows hold stays, as after a crash (reservations lapse, references are taken over).
    if (e instanceof AppError) await release();
    throw e;
  }
  await enqueue(env, company.id, held.map((c) => c.id), requestId);
  return answerNew(batch, company.id, held, refused, now);
}

/**
 * The ids of the rows' documents: under an Idempotency-Key claim each derived from it and the row's
 * position (every attempt of the claim names the same documents), otherwise fresh.
 */
async function documentIds(env: Env, ordinal: number, n: number, now: Date, claim?: IdempotencyClaim): Promise<string[]> {
  const at = claim ? Date.parse(claim.createdAt) : now.getTime();
  const ulids = await Promise.all(Array.from({ length: n }, (_, i) => (claim ? seededUlid(env.API_KEY_PEPPER, `${claim.seed}\nrow ${i}`, at) : Promise.resolve(randomUlid(at)))));
  return ulids.map((u) => partitionedId("inv", ordinal, u));
}

async function enqueue(env: Env, companyId: string, ids: string[], requestId: string): Promise<void> {
  if (ids.length === 0) return;
  try {
    await enqueueGroups(env, companyId, ids, requestId);
  } catch (e) {
    // The documents are stored; the stores' sweep re-drives RECEIVED documents that were never queued.
    log("error", "enqueue of a batch failed; the sweep will re-drive", { request_id: requestId, documents: ids.length, error: describeError(e) });
  }
}

/** The answer of a batch just stored, from memory: every row, the documents RECEIVED. */
function answerNew(batch: NewBatch, companyId: string, held: Candidate[], refused: Map<number, RowError>, now: Date): BatchAnswer {
  const at = now.toISOString();
  const byRow = new Map(held.map((c) => [c.i, c]));
  const rows = batch.rows.map((origin, i) => {
    const c = byRow.get(i);
    const error = refused.get(i);
    const stored = error || origin.lines ? JSON.stringify({ ...(error ?? {}), ...(origin.lines ? { lines: origin.lines } : {}) }) : null;
    return { batchId: batch.id, row: i, invoiceId: c?.id ?? null, externalReference: c?.body.external_reference ?? null, error: stored, status: c ? ("RECEIVED" as const) : null };
  });
  const row = {
    id: batch.id, companyId, source: batch.source, status: held.length === 0 ? ("COMPLETED" as const) : ("PROCESSING" as const), rows: rows.length, refused: refused.size, documents: held.length,
    finalDocuments: 0, fileName: batch.fileName, layout: batch.layout, requestId: null, createdAt: at, updatedAt: at, completedAt: held.length === 0 ? at : null,
  };
  return batchView(row, { RECEIVED: held.length }, { rows, total: rows.length }, { page: 1, perPage: Math.max(1, rows.length) });
}

/** The answer of a batch an earlier attempt stored: every row as it is now; its RECEIVED documents queued again. */
async function answerStored(env: Env, store: StoreHandle, companyId: string, id: string, requestId: string): Promise<BatchAnswer> {
  const { batch } = await getBatch(env, companyId, id);
  const waiting = await store.db.select({ id: invoices.id }).from(invoices).where(and(eq(invoices.batchId, id), eq(invoices.status, "RECEIVED")));
  await enqueue(env, companyId, waiting.map((w) => w.id), requestId);
  const page = await rowPage(store.db, id, { perPage: MAX_BATCH_ROWS, offset: 0 });
  return batchView(batch, await statusCounts(store.db, id), page, { page: 1, perPage: Math.max(1, page.total) });
}
