import { and, asc, count, desc, eq, gte, inArray, lte, or, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { companyStores, knownStoreForId, ordinalOfId } from "../storage/db/document-store";
import { pageAcrossPartitions, type PartitionAt } from "../storage/db/document-store/lists";
import { sumCounters } from "../storage/db/document-store/counters";
import { invoiceCounts } from "../storage/db/document-store/tables";
import { cancellations, invoiceEvents, invoices, type BuyerState, type InvoiceStatus } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { chunked } from "../lib/chunked";
import { dayByDayIds, dayByDayPays, issueDaysOf, type IssueDays } from "./day-pages";
import { history, type InvoiceRow } from "./state";

/**
 * Reads of issued documents: a document is read from the partition its id names; lists walk the
 * company's partitions newest first with the same pages and `total` as one table.
 */
type StoreEnv = Parameters<typeof knownStoreForId>[0];

export async function getInvoice(env: StoreEnv, companyId: string, id: string): Promise<InvoiceRow> {
  const found = await findInvoiceById(env, companyId, id);
  if (!found) throw new AppError("INVOICE_NOT_FOUND", `Document ${id} does not exist for this company.`);
  return found.row;
}

/** The company's document `id` and the database of its partition; null when it has none (any id, even not one of ours). */
export async function findInvoiceById(env: StoreEnv, companyId: string, id: string): Promise<FoundInvoice | null> {
  const partition = await knownStoreForId(env, companyId, id);
  const row = partition ? await partition.db.query.invoices.findFirst({ where: and(eq(invoices.id, id), eq(invoices.companyId, companyId)) }) : undefined;
  return row ? { row, db: partition!.db } : null;
}

/**
 * Our document of a type and folio, and the database of its partition (where its cancellation is
 * kept): the company's partitions are asked newest first (a folio is unique per company and type).
 */
export async function findInvoiceByFolio(env: StoreEnv, companyId: string, type: number, folio: number): Promise<FoundInvoice | null> {
  return (await findInvoicesByFolio(env, companyId, [{ type, folio }])).get(`${type}:${folio}`) ?? null;
}

export interface FoundInvoice {
  row: InvoiceRow;
  db: Db;
}

/** Pairs of type and folio per query (two bound parameters each, and the company: under D1's 100). */
const FOLIOS_PER_QUERY = 40;

/**
 * Our documents of several types and folios, keyed `type:folio` (those found): one pass over the
 * company's partitions, newest first, each asked only for what the newer ones did not hold.
 */
export async function findInvoicesByFolio(env: StoreEnv, companyId: string, wanted: { type: number; folio: number }[]): Promise<Map<string, FoundInvoice>> {
  const found = new Map<string, FoundInvoice>();
  let left = [...new Map(wanted.map((w) => [`${w.type}:${w.folio}`, w])).values()];
  for (const p of left.length ? await companyStores(env, companyId) : []) {
    for (const part of chunked(left, FOLIOS_PER_QUERY)) {
      const pairs = part.map((w) => and(eq(invoices.documentType, w.type), eq(invoices.folio, w.folio)));
      const rows = await p.db.select().from(invoices).where(and(eq(invoices.companyId, companyId), or(...pairs)));
      for (const row of rows) found.set(`${row.documentType}:${row.folio}`, { row, db: p.db });
    }
    left = left.filter((w) => !found.has(`${w.type}:${w.folio}`));
    if (left.length === 0) break;
  }
  return found;
}

export interface InvoiceFilters {
  invoice_type?: number;
  status?: InvoiceStatus;
  from_date?: string;
  to_date?: string;
  external_reference?: string;
  folio?: number;
  buyer_state?: BuyerState;
}

export async function listInvoices(env: StoreEnv, companyId: string, f: InvoiceFilters, page: { perPage: number; offset: number }) {
  const where = countedFilters(invoices, companyId, f);
  if (f.external_reference) where.push(eq(invoices.externalReference, f.external_reference));
  if (f.folio !== undefined) where.push(eq(invoices.folio, f.folio));
  if (f.buyer_state) where.push(eq(invoices.buyerState, f.buyer_state));
  const condition = and(...where);
  const counters = countersCondition(companyId, f);
  const days = issueDaysOf(f);
  return pageAcrossPartitions(
    env,
    companyId,
    {
      count: async (db: Db) => (counters ? sumCounters(db, invoiceCounts, counters) : ((await db.select({ n: count() }).from(invoices).where(condition))[0]?.n ?? 0)),
      rows: pageReader(condition, companyId, f.invoice_type, days, "DESC"),
      rowsFromEnd: pageReader(condition, companyId, f.invoice_type, days, "ASC"),
    },
    page,
  );
}

/**
 * Reads a page in `direction` of created_at, id: its ids from the filter's index alone (OFFSET skips
 * index entries, never documents) or, for an issue-date range where it pays, day by day
 * (day-pages.ts); then their rows.
 */
function pageReader(condition: SQL | undefined, companyId: string, type: number | undefined, days: IssueDays | null, direction: "ASC" | "DESC") {
  const by = direction === "DESC" ? desc : asc;
  const order = [by(invoices.createdAt), by(invoices.id)];
  return (db: Db, limit: number, offset: number, at: PartitionAt) => {
    const ids = dayByDayPays(days, limit, offset, at) ? dayByDayIds(companyId, type, days, direction, limit, offset) : db.select({ id: invoices.id }).from(invoices).where(condition).orderBy(...order).limit(limit).offset(offset);
    return db.select().from(invoices).where(inArray(invoices.id, ids)).orderBy(...order);
  };
}

/**
 * The same filter over a store's counters (src/storage/db/document-store/counters.ts) when every filter is on
 * a counted column (type, status, issue date); null otherwise (a folio or a reference: its indexed
 * COUNT reads only its few matches; the buyer's answer: its index's entries, facturas only).
 */
function countersCondition(companyId: string, f: InvoiceFilters): SQL | null {
  if (f.external_reference || f.folio !== undefined || f.buyer_state) return null;
  return and(...countedFilters(invoiceCounts, companyId, f))!;
}

/** The filters on counted columns, over the documents or over their counters (the same column names). */
function countedFilters(t: typeof invoices | typeof invoiceCounts, companyId: string, f: InvoiceFilters): SQL[] {
  const where: SQL[] = [eq(t.companyId, companyId)];
  if (f.invoice_type !== undefined) where.push(eq(t.documentType, f.invoice_type));
  if (f.status) where.push(eq(t.status, f.status));
  if (f.from_date) where.push(gte(t.issueDate, f.from_date));
  if (f.to_date) where.push(lte(t.issueDate, f.to_date));
  return where;
}

/** The history and the note cancelling a document, from the partition that holds it. */
export async function invoiceDetail(env: StoreEnv, row: InvoiceRow) {
  const partition = await knownStoreForId(env, row.companyId, row.id);
  if (!partition) return { events: [], cancelledBy: null };
  const db = partition.db;
  const [events, cancelledBy] = await Promise.all([
    history(db, row.id),
    db.query.cancellations.findFirst({ where: eq(cancellations.cancelledInvoiceId, row.id) }),
  ]);
  return { events, cancelledBy: cancelledBy?.creditNoteId ?? null };
}

/**
 * `invoiceDetail` of a page's documents: per partition, one query for their histories and one for
 * the notes cancelling them (instead of two per document), in the page's order.
 */
export async function invoiceDetails(env: StoreEnv, rows: InvoiceRow[]): Promise<{ events: Awaited<ReturnType<typeof history>>; cancelledBy: string | null }[]> {
  const byOrdinal = new Map<number | null, InvoiceRow[]>();
  for (const r of rows) {
    const ordinal = ordinalOfId(r.id);
    byOrdinal.set(ordinal, [...(byOrdinal.get(ordinal) ?? []), r]);
  }
  const events = new Map<string, Awaited<ReturnType<typeof history>>>();
  const cancelled = new Map<string, string>();
  await Promise.all([...byOrdinal.values()].map(async (group) => {
    const partition = await knownStoreForId(env, group[0]!.companyId, group[0]!.id);
    if (!partition) return;
    for (const ids of chunked(group.map((r) => r.id), 90)) {
      const [evs, notes] = await Promise.all([
        partition.db.select().from(invoiceEvents).where(inArray(invoiceEvents.invoiceId, ids)).orderBy(invoiceEvents.invoiceId, invoiceEvents.createdAt, invoiceEvents.id),
        partition.db.select().from(cancellations).where(inArray(cancellations.cancelledInvoiceId, ids)),
      ]);
      for (const e of evs) events.set(e.invoiceId, [...(events.get(e.invoiceId) ?? []), e]);
      for (const n of notes) cancelled.set(n.cancelledInvoiceId, n.creditNoteId);
    }
  }));
  return rows.map((r) => ({ events: events.get(r.id) ?? [], cancelledBy: cancelled.get(r.id) ?? null }));
}
