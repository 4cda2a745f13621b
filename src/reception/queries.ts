/** Reading received documents of one company (never across companies), from its document stores. */
import { and, asc, count, eq, gte, isNull, lte, type SQL } from "drizzle-orm";
import { pageAcrossPartitions } from "../db/document-store/lists";
import { receivedDocuments, type ResponseState } from "../db/schema";
import { AppError } from "../errors";
import { isValidRut, normalizeRut } from "../countries/cl";
import { partitionDb, receptionStores } from "./stores";
import type { ReceivedRow } from "./view";

type StoreEnv = Parameters<typeof partitionDb>[0];

export interface ListFilter {
  /** Any usual RUT form. */
  issuerTaxId?: string;
  documentType?: number;
  folio?: number;
  issueDateFrom?: string;
  issueDateTo?: string;
  receivedFrom?: string;
  receivedTo?: string;
  verification?: "VERIFIED" | "FAILED" | "PENDING";
  responseState?: ResponseState;
  deadlineBefore?: string;
}

function where(companyId: string, f: ListFilter): SQL {
  const r = receivedDocuments;
  const c: (SQL | undefined)[] = [eq(r.companyId, companyId)];
  if (f.issuerTaxId) {
    if (!isValidRut(f.issuerTaxId)) throw new AppError("VALIDATION_FAILED", "issuer_tax_id is not a valid RUT.", [{ field: "issuer_tax_id", message: "Not a valid RUT" }]);
    c.push(eq(r.issuerRut, normalizeRut(f.issuerTaxId)));
  }
  if (f.documentType !== undefined) c.push(eq(r.documentType, f.documentType));
  if (f.folio !== undefined) c.push(eq(r.folio, f.folio));
  if (f.issueDateFrom) c.push(gte(r.issueDate, f.issueDateFrom));
  if (f.issueDateTo) c.push(lte(r.issueDate, f.issueDateTo));
  if (f.receivedFrom) c.push(gte(r.createdAt, f.receivedFrom));
  if (f.receivedTo) c.push(lte(r.createdAt, f.receivedTo));
  if (f.verification === "VERIFIED") c.push(eq(r.receptionStatus, 0));
  if (f.verification === "FAILED") c.push(gte(r.receptionStatus, 1));
  if (f.verification === "PENDING") c.push(isNull(r.receptionStatus));
  if (f.responseState) c.push(eq(r.responseState, f.responseState));
  if (f.deadlineBefore) c.push(lte(r.responseDeadline, f.deadlineBefore));
  return and(...c)!;
}

/** One page of the company's received documents, oldest first, across its partitions (the same pages and `total` as one table). */
export async function listReceived(env: StoreEnv, companyId: string, f: ListFilter, page: { offset: number; perPage: number }) {
  const w = where(companyId, f);
  return pageAcrossPartitions(env, companyId, {
    count: async (db) => (await db.select({ n: count() }).from(receivedDocuments).where(w))[0]?.n ?? 0,
    rows: (db, limit, offset) => db.select().from(receivedDocuments).where(w).orderBy(asc(receivedDocuments.createdAt), asc(receivedDocuments.id)).limit(limit).offset(offset),
  }, page, { oldestFirst: true, stores: await receptionStores(env, companyId) });
}

/** One received document, from the partition its id names. */
export async function getReceived(env: StoreEnv, companyId: string, id: string): Promise<ReceivedRow> {
  const db = await partitionDb(env, companyId, id);
  const row = db && (await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.id, id))).get());
  if (!row) throw new AppError("RECEIVED_DOCUMENT_NOT_FOUND", `No received document ${id} for this company.`);
  return row;
}
