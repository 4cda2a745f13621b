/** Reading cessions: one by id, those of a document, the company's across its partitions (newest first). */
import { and, count, desc, eq } from "drizzle-orm";
import { ordinalOfId, partitionFor, UnknownPartitionError } from "../../storage/db/document-store";
import { pageAcrossPartitions } from "../../storage/db/document-store/lists";
import { cessions } from "../../storage/db/schema";
import { AppError } from "../../lib/errors";
import { getInvoice } from "../queries";
import type { CessionRow } from "./view";

type StoreEnv = Parameters<typeof partitionFor>[0];

const notFound = (id: string) => new AppError("CESSION_NOT_FOUND", `No cession ${id} in this company.`);

export async function getCession(env: StoreEnv, companyId: string, id: string): Promise<CessionRow> {
  const ordinal = ordinalOfId(id);
  if (ordinal === null || !id.startsWith("ces_")) throw notFound(id);
  let db;
  try {
    db = (await partitionFor(env, companyId, ordinal)).db;
  } catch (e) {
    if (e instanceof UnknownPartitionError) throw notFound(id);
    throw e;
  }
  const [row] = await db.select().from(cessions).where(and(eq(cessions.companyId, companyId), eq(cessions.id, id))).limit(1);
  if (!row) throw notFound(id);
  return row;
}

/** The cessions of one of the company's documents, newest first (404 for a document it does not have). */
export async function cessionsOfInvoice(env: StoreEnv, companyId: string, invoiceId: string): Promise<CessionRow[]> {
  const inv = await getInvoice(env, companyId, invoiceId);
  const { db } = await partitionFor(env, companyId, ordinalOfId(inv.id)!);
  return db.select().from(cessions).where(and(eq(cessions.companyId, companyId), eq(cessions.invoiceId, inv.id))).orderBy(desc(cessions.createdAt), desc(cessions.id)).limit(100);
}

export async function listCessions(env: StoreEnv, companyId: string, page: { perPage: number; offset: number }): Promise<{ rows: CessionRow[]; total: number }> {
  const mine = eq(cessions.companyId, companyId);
  return pageAcrossPartitions(env, companyId, {
    count: async (db) => (await db.select({ n: count() }).from(cessions).where(mine))[0]!.n,
    rows: (db, limit, offset) => db.select().from(cessions).where(mine).orderBy(desc(cessions.createdAt), desc(cessions.id)).limit(limit).offset(offset),
  }, page);
}
