import { and, count, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { existingPartitionForId, partitionsWithLegacy } from "../../db/document-store/legacy";
import { pageAcrossPartitions } from "../../db/document-store/lists";
import { cancellations, invoices, type InvoiceStatus } from "../../db/schema";
import { AppError } from "../../errors";
import { history, type InvoiceRow } from "./state";

/**
 * Reads of issued documents (issue 16): a document is read from the partition its id names (ids
 * made before the stores: the legacy partition, D1 until the migration switches it); lists walk the
 * company's partitions newest first with the same pages and `total` as one table.
 */
type StoreEnv = Parameters<typeof existingPartitionForId>[0];

export async function getInvoice(env: StoreEnv, companyId: string, id: string): Promise<InvoiceRow> {
  const partition = await existingPartitionForId(env, companyId, id, "documents");
  const row = partition ? await partition.db.query.invoices.findFirst({ where: and(eq(invoices.id, id), eq(invoices.companyId, companyId)) }) : undefined;
  if (!row) throw new AppError("INVOICE_NOT_FOUND", `Document ${id} does not exist for this company.`);
  return row;
}

export interface InvoiceFilters {
  invoice_type?: number;
  status?: InvoiceStatus;
  from_date?: string;
  to_date?: string;
  external_reference?: string;
  folio?: number;
}

export async function listInvoices(env: StoreEnv, companyId: string, f: InvoiceFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(invoices.companyId, companyId)];
  if (f.invoice_type !== undefined) where.push(eq(invoices.documentType, f.invoice_type));
  if (f.status) where.push(eq(invoices.status, f.status));
  if (f.from_date) where.push(gte(invoices.issueDate, f.from_date));
  if (f.to_date) where.push(lte(invoices.issueDate, f.to_date));
  if (f.external_reference) where.push(eq(invoices.externalReference, f.external_reference));
  if (f.folio !== undefined) where.push(eq(invoices.folio, f.folio));
  const condition = and(...where);
  const partitions = (await partitionsWithLegacy(env, companyId, "documents")).map((p) => p.db);
  return pageAcrossPartitions(
    env,
    companyId,
    {
      count: async (db: Db) => (await db.select({ n: count() }).from(invoices).where(condition))[0]?.n ?? 0,
      rows: (db: Db, limit: number, offset: number) => db.select().from(invoices).where(condition).orderBy(desc(invoices.createdAt), desc(invoices.id)).limit(limit).offset(offset),
    },
    page,
    { stores: partitions },
  );
}

/** The history and the note cancelling a document, from the partition that holds it. */
export async function invoiceDetail(env: StoreEnv, row: InvoiceRow) {
  const partition = await existingPartitionForId(env, row.companyId, row.id, "documents");
  if (!partition) return { events: [], cancelledBy: null };
  const db = partition.db;
  const [events, cancelledBy] = await Promise.all([
    history(db, row.id),
    db.query.cancellations.findFirst({ where: eq(cancellations.cancelledInvoiceId, row.id) }),
  ]);
  return { events, cancelledBy: cancelledBy?.creditNoteId ?? null };
}
