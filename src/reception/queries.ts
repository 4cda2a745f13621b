/** Reading received documents of one company (never across companies), from its document stores. */
import { and, asc, count, desc, eq, gte, inArray, isNull, like, lte, not, or, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { pageAcrossPartitions } from "../storage/db/document-store/lists";
import { sumCounters } from "../storage/db/document-store/counters";
import { receivedCounts } from "../storage/db/document-store/tables";
import { receivedDocuments, type ResponseState } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { issuingCountry } from "../countries";
import { partitionDb } from "./stores";
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
  const c = countedFilters(r, companyId, f);
  // The SII's register holding other data fails a document whatever its EstadoRecepDTE (./checks.ts verificationStatus).
  // (A row without checks yet has no failed sii_status: NOT LIKE over NULL would leave it out.)
  if (f.verification === "VERIFIED") c.push(eq(r.receptionStatus, 0), or(isNull(r.checks), not(like(r.checks, SII_STATUS_FAILED)))!);
  if (f.verification === "FAILED") c.push(or(gte(r.receptionStatus, 1), like(r.checks, SII_STATUS_FAILED))!);
  if (f.issuerTaxId) {
    if (!issuingCountry().taxId.isValid(f.issuerTaxId)) throw new AppError("VALIDATION_FAILED", "issuer_tax_id is not a valid RUT.", [{ field: "issuer_tax_id", message: "Not a valid RUT" }]);
    c.push(eq(r.issuerRut, issuingCountry().taxId.normalize(f.issuerTaxId)));
  }
  if (f.folio !== undefined) c.push(eq(r.folio, f.folio));
  if (f.receivedFrom) c.push(gte(r.createdAt, f.receivedFrom));
  if (f.receivedTo) c.push(lte(r.createdAt, f.receivedTo));
  if (f.deadlineBefore) c.push(lte(r.responseDeadline, f.deadlineBefore));
  return and(...c)!;
}

/** One page of the company's received documents, oldest first, across its partitions (the same pages and `total` as one table). */
export async function listReceived(env: StoreEnv, companyId: string, f: ListFilter, page: { offset: number; perPage: number }) {
  const w = where(companyId, f);
  const counters = countersCondition(companyId, f);
  return pageAcrossPartitions(env, companyId, {
    count: async (db) => (counters ? sumCounters(db, receivedCounts, counters) : ((await db.select({ n: count() }).from(receivedDocuments).where(w))[0]?.n ?? 0)),
    rows: (db, limit, offset) => pageRows(db, w, [asc(receivedDocuments.createdAt), asc(receivedDocuments.id)], limit, offset),
    rowsFromEnd: (db, limit, offset) => pageRows(db, w, [desc(receivedDocuments.createdAt), desc(receivedDocuments.id)], limit, offset),
  }, page, { oldestFirst: true });
}

/** A page's ids from the filter's index alone (OFFSET skips index entries, never documents), then their rows, in `order`. */
function pageRows(db: Db, w: SQL, order: SQL[], limit: number, offset: number) {
  const ids = db.select({ id: receivedDocuments.id }).from(receivedDocuments).where(w).orderBy(...order).limit(limit).offset(offset);
  return db.select().from(receivedDocuments).where(inArray(receivedDocuments.id, ids)).orderBy(...order);
}

/** A document's checks as stored (JSON.stringify of ./checks.ts Check objects) when its `sii_status` FAILED. */
const SII_STATUS_FAILED = '%"name":"sii_status","result":"FAILED"%';

/**
 * The filter over a store's counters (src/storage/db/document-store/counters.ts) when every filter is on a
 * counted column (type, response state, issue date, verification PENDING); null otherwise (VERIFIED
 * and FAILED also depend on the `sii_status` check, which the counters do not count).
 */
function countersCondition(companyId: string, f: ListFilter): SQL | null {
  if (f.issuerTaxId || f.folio !== undefined || f.receivedFrom || f.receivedTo || f.deadlineBefore) return null;
  if (f.verification === "VERIFIED" || f.verification === "FAILED") return null;
  return and(...countedFilters(receivedCounts, companyId, f))!;
}

/** The filters on counted columns, over the documents or over their counters (the same column names); VERIFIED and FAILED are added by `where`. */
function countedFilters(t: typeof receivedDocuments | typeof receivedCounts, companyId: string, f: ListFilter): SQL[] {
  const c: SQL[] = [eq(t.companyId, companyId)];
  if (f.documentType !== undefined) c.push(eq(t.documentType, f.documentType));
  if (f.issueDateFrom) c.push(gte(t.issueDate, f.issueDateFrom));
  if (f.issueDateTo) c.push(lte(t.issueDate, f.issueDateTo));
  if (f.verification === "PENDING") c.push(isNull(t.receptionStatus));
  if (f.responseState) c.push(eq(t.responseState, f.responseState));
  return c;
}

/** One received document, from the partition its id names. */
export async function getReceived(env: StoreEnv, companyId: string, id: string): Promise<ReceivedRow> {
  const db = await partitionDb(env, companyId, id);
  const row = db && (await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.id, id))).get());
  if (!row) throw new AppError("RECEIVED_DOCUMENT_NOT_FOUND", `No received document ${id} for this company.`);
  return row;
}
