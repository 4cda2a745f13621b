/**
 * A batch in the company's document store: the batch row, its documents (RECEIVED, each with its
 * first history row) and every row's result, in ONE atomic store batch, in the partition open at
 * intake (the batch's id names it, as its documents' ids do). Completion is kept by the store's
 * trigger (src/storage/db/document-store/batch-triggers.ts); a batch whose every row was refused is complete
 * at once and records its `batch.completed` event here.
 */
import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../storage/db/client";
import { batchCompletedEvent, batchCompletion } from "../../storage/db/document-store/batch-triggers";
import { companyStores, OPEN_PARTITION_CACHE_MS, partitionedId, partitionsOf, storeFor, storeForId, type StoreHandle } from "../../storage/db/document-store";
import { invoiceBatches, invoiceBatchRows, invoiceEvents, invoices, type InvoiceStatus } from "../../storage/db/schema";
import { AppError } from "../../lib/errors";
import { chunked } from "../../lib/chunked";
import { newId } from "../../lib/ids";
import type { CompanyRow } from "../../accounts/companies/repository";
import { RECEIVED_MESSAGE, receivedRow } from "../issue";
import type { Candidate } from "./check";
import type { RowError, RowOrigin } from "./rows";

export type BatchRow = typeof invoiceBatches.$inferSelect;
export type BatchRowResult = typeof invoiceBatchRows.$inferSelect;

export interface NewBatch {
  id: string;
  source: BatchRow["source"];
  fileName: string | null;
  layout: string | null;
  rows: RowOrigin[];
}

type Statement = BatchItem<"sqlite">;

/** The statements that store the batch, its documents and its rows' results. */
function writes(db: Db, company: CompanyRow, batch: NewBatch, stored: Candidate[], refused: Map<number, RowError>, requestId: string, at: string): Statement[] {
  const out: Statement[] = [
    db.insert(invoiceBatches).values({
      id: batch.id, companyId: company.id, source: batch.source, status: "PROCESSING", rows: batch.rows.length,
      refused: refused.size, documents: stored.length, finalDocuments: 0, fileName: batch.fileName, layout: batch.layout, requestId, createdAt: at, updatedAt: at, completedAt: null,
    }),
  ];
  for (const c of stored) {
    const eventId = newId("evt");
    out.push(db.insert(invoices).values(receivedRow(company, c.body, c.doc, c.target, c.id, requestId, eventId, at, batch.id)));
    out.push(db.insert(invoiceEvents).values({ id: eventId, invoiceId: c.id, status: "RECEIVED", fiscalStatus: null, message: RECEIVED_MESSAGE, createdAt: at }));
  }
  const byRow = new Map(stored.map((c) => [c.i, c]));
  const results = batch.rows.map((origin, i) => {
    const c = byRow.get(i);
    const error = refused.get(i);
    const lines = origin.lines ? { lines: origin.lines } : {};
    return { batchId: batch.id, row: i, invoiceId: c?.id ?? null, externalReference: c?.body.external_reference ?? null, error: error ? JSON.stringify({ ...error, ...lines }) : c && origin.lines ? JSON.stringify(lines) : null };
  });
  for (const chunk of chunked(results, 19)) out.push(db.insert(invoiceBatchRows).values(chunk));
  // Every row refused: complete now, as the trigger completes a batch whose last document ends.
  if (stored.length === 0) out.push(db.run(sql.raw(batchCompletedEvent(`'${batch.id}'`, `'${at}'`))), db.run(sql.raw(batchCompletion(`'${batch.id}'`, `'${at}'`))));
  return out;
}

/** Stores the batch in `store`; a batch of this id already there (an earlier attempt of the same Idempotency-Key claim) is left as it is. */
export async function storeBatch(store: StoreHandle, company: CompanyRow, batch: NewBatch, stored: Candidate[], refused: Map<number, RowError>, requestId: string, now: Date): Promise<void> {
  const statements = writes(store.db, company, batch, stored, refused, requestId, now.toISOString());
  try {
    await store.db.batch(statements as [Statement, ...Statement[]]);
  } catch (e) {
    if (await readBatch(store.db, batch.id)) return;
    throw e;
  }
}

export async function readBatch(db: Db, id: string): Promise<BatchRow | null> {
  const [row] = await db.select().from(invoiceBatches).where(eq(invoiceBatches.id, id));
  return row ?? null;
}

/**
 * The store in which an earlier attempt of this Idempotency-Key claim stored its batch (ulid), or
 * null: every partition that could take writes since the claim is asked (see issue.ts
 * storedByEarlierAttempt, the same reasoning for one document).
 */
export async function batchOfEarlierAttempt(env: Env, companyId: string, ulid: string, claimedAt: string): Promise<StoreHandle | null> {
  const since = Date.parse(claimedAt) - OPEN_PARTITION_CACHE_MS;
  const candidates = (await partitionsOf(env, companyId)).filter((p) => p.ordinal > 0 && (p.closedAt === null || Date.parse(p.closedAt) >= since));
  for (const p of candidates) {
    const store = storeFor(env, companyId, p.ordinal);
    if (await readBatch(store.db, partitionedId("bat", p.ordinal, ulid))) return store;
  }
  return null;
}

/** The batch of this company named by `id`, and its store; 404 otherwise. */
export async function getBatch(env: Env, companyId: string, id: string): Promise<{ batch: BatchRow; store: StoreHandle }> {
  const store = id.startsWith("bat_") ? storeForId(env, companyId, id) : null;
  const batch = store ? await readBatch(store.db, id).catch(() => null) : null;
  if (!store || !batch || batch.companyId !== companyId) throw new AppError("BATCH_NOT_FOUND", `No batch ${id} for this company.`);
  return { batch, store };
}

/** How many of the batch's documents are in each status. */
export async function statusCounts(db: Db, batchId: string): Promise<Partial<Record<InvoiceStatus, number>>> {
  const rows = await db.select({ status: invoices.status, n: count() }).from(invoices).where(eq(invoices.batchId, batchId)).groupBy(invoices.status);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export interface RowPage {
  rows: (BatchRowResult & { status: InvoiceStatus | null })[];
  total: number;
}

/** A page of the batch's rows in row order, each with its document's current status; `refusedOnly`: the refused rows only. */
export async function rowPage(db: Db, batchId: string, page: { perPage: number; offset: number }, refusedOnly = false): Promise<RowPage> {
  const where = and(eq(invoiceBatchRows.batchId, batchId), refusedOnly ? sql`${invoiceBatchRows.invoiceId} IS NULL` : undefined);
  const [rows, [total]] = await db.batch([
    db.select().from(invoiceBatchRows).where(where).orderBy(invoiceBatchRows.row).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(invoiceBatchRows).where(where),
  ]);
  const ids = rows.map((r) => r.invoiceId).filter((id): id is string => id !== null);
  const statuses = new Map<string, InvoiceStatus>();
  for (const chunk of chunked(ids, 90)) for (const r of await db.select({ id: invoices.id, status: invoices.status }).from(invoices).where(inArray(invoices.id, chunk))) statuses.set(r.id, r.status);
  return { rows: rows.map((r) => ({ ...r, status: r.invoiceId ? (statuses.get(r.invoiceId) ?? null) : null })), total: total?.n ?? 0 };
}

/** The company's batches, newest first, across its partitions. */
export async function listBatches(env: Env, companyId: string, page: { perPage: number; offset: number }): Promise<{ rows: { batch: BatchRow; store: StoreHandle }[]; total: number }> {
  const stores = await companyStores(env, companyId);
  const found = await Promise.all(
    stores.map(async (store) => {
      const [rows, [total]] = await store.db.batch([
        store.db.select().from(invoiceBatches).where(eq(invoiceBatches.companyId, companyId)).orderBy(desc(invoiceBatches.createdAt), desc(invoiceBatches.id)).limit(page.offset + page.perPage),
        store.db.select({ n: count() }).from(invoiceBatches).where(eq(invoiceBatches.companyId, companyId)),
      ]);
      return { rows: rows.map((batch) => ({ batch, store })), total: total?.n ?? 0 };
    }),
  );
  const all = found.flatMap((f) => f.rows).sort((a, b) => (a.batch.createdAt === b.batch.createdAt ? b.batch.id.localeCompare(a.batch.id) : b.batch.createdAt.localeCompare(a.batch.createdAt)));
  return { rows: all.slice(page.offset, page.offset + page.perPage), total: found.reduce((n, f) => n + f.total, 0) };
}
