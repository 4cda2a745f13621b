import { and, count, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { cancellations, invoices, type InvoiceStatus } from "../../db/schema";
import { AppError } from "../../errors";
import { history, type InvoiceRow } from "./state";

export async function getInvoice(db: Db, companyId: string, id: string): Promise<InvoiceRow> {
  const row = await db.query.invoices.findFirst({ where: and(eq(invoices.id, id), eq(invoices.companyId, companyId)) });
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

export async function listInvoices(db: Db, companyId: string, f: InvoiceFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(invoices.companyId, companyId)];
  if (f.invoice_type !== undefined) where.push(eq(invoices.documentType, f.invoice_type));
  if (f.status) where.push(eq(invoices.status, f.status));
  if (f.from_date) where.push(gte(invoices.issueDate, f.from_date));
  if (f.to_date) where.push(lte(invoices.issueDate, f.to_date));
  if (f.external_reference) where.push(eq(invoices.externalReference, f.external_reference));
  if (f.folio !== undefined) where.push(eq(invoices.folio, f.folio));
  const condition = and(...where);
  const [rows, totals] = await db.batch([
    db.select().from(invoices).where(condition).orderBy(desc(invoices.createdAt), desc(invoices.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(invoices).where(condition),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}

export async function invoiceDetail(db: Db, row: InvoiceRow) {
  const [events, cancelledBy] = await Promise.all([
    history(db, row.id),
    db.query.cancellations.findFirst({ where: eq(cancellations.cancelledInvoiceId, row.id) }),
  ]);
  return { events, cancelledBy: cancelledBy?.creditNoteId ?? null };
}


