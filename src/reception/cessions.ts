/**
 * The buyer's side of cessions (factoring): a supplier's factura the company received may have been
 * ceded to a third party, and then the company must pay that party, not the supplier. The register of
 * cessions is asked about each received document of the types it takes (the country's
 * `cessions.types`) issued within CESSION_WINDOW_DAYS (a factura is paid within that, so it is the
 * span in which paying the wrong party can happen): by the reception cron, a few per company and run,
 * each at most once an hour; and on request. A new holder is written on the document (`cession`) with
 * a `received_document.ceded` event, once per holder and annotation.
 */
import { and, asc, eq, gte, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { envForCompany } from "../config";
import { issuingCountry } from "../countries/index";
import { AuthorityError, type Credentials } from "../countries/port";
import { companyStores, ordinalOfId } from "../storage/db/document-store";
import { receivedDocuments } from "../storage/db/schema";
import { createDb } from "../storage/db/client";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { AppError } from "../lib/errors";
import { log, describeError } from "../lib/log";
import type { ReceivedCession } from "./cessions-view";
import { getReceived } from "./queries";
import { receptionEventIf, writeIn } from "./stores";
import type { ReceivedRow } from "./view";

export const CESSION_WINDOW_DAYS = 120;
export const CESSION_CHECKS_PER_COMPANY = 10;
export const CESSION_RECHECK_MS = 3_600_000;

type Company = { id: string; taxId: string; livemode: boolean; clientId: string };

/** Asks the register about one received document and records what changed; the document as it is after. */
export async function checkReceivedCession(env: Env, company: Company, signer: Credentials, row: ReceivedRow, at: Date): Promise<ReceivedRow> {
  const port = issuingCountry().cessions;
  if (!port || !port.types.has(row.documentType)) return row;
  const found = await port.authority(envForCompany(env, company)).current({ companyRut: company.taxId, signer, issuerRut: row.issuerRut, documentType: row.documentType, folio: row.folio });
  const checkedAt = at.toISOString();
  const before = row.cession ? (JSON.parse(row.cession) as ReceivedCession) : null;
  const document = and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id));
  const isNew = found && (!before || before.holder_tax_id !== found.holderTaxId || before.annotated_at !== found.annotatedAt);
  if (!isNew) {
    const cession = before ? JSON.stringify({ ...before, checked_at: checkedAt }) : null;
    await writeIn(env, row.companyId, ordinalOfId(row.id)!, (db) => db.update(receivedDocuments).set({ cessionCheckedAt: checkedAt, cession }).where(document));
    return { ...row, cessionCheckedAt: checkedAt, cession };
  }
  const value: ReceivedCession = { holder_tax_id: found.holderTaxId, annotated_at: found.annotatedAt, collection_tax_id: found.collectionTaxId, amount: found.amount, first_seen_at: checkedAt, checked_at: checkedAt };
  const cession = JSON.stringify(value);
  const next = { ...row, cession, cessionCheckedAt: checkedAt, updatedAt: checkedAt };
  const event = { row: next, type: "received_document.ceded", key: `ceded:${row.id}:${found.holderTaxId}:${found.annotatedAt}` };
  await writeIn(env, row.companyId, ordinalOfId(row.id)!, async (db) => {
    const same = row.cession === null ? isNull(receivedDocuments.cession) : eq(receivedDocuments.cession, row.cession);
    const update = db.update(receivedDocuments).set({ cession, cessionCheckedAt: checkedAt, updatedAt: checkedAt }).where(and(document, same));
    await db.batch([update, receptionEventIf(db, event, eq(receivedDocuments.cession, cession))]);
  });
  return next;
}

/** The cron's share: the received documents due for a question, a few per company and run. */
export async function checkReceivedCessions(env: Env, company: Company, signer: Credentials, at: Date): Promise<void> {
  const port = issuingCountry().cessions;
  if (!port) return;
  const since = new Date(at.getTime() - CESSION_WINDOW_DAYS * 86_400_000).toISOString().slice(0, 10);
  const stale = new Date(at.getTime() - CESSION_RECHECK_MS).toISOString();
  const due: ReceivedRow[] = [];
  for (const store of await companyStores(env, company.id)) {
    if (due.length >= CESSION_CHECKS_PER_COMPANY) break;
    const rows = await store.db
      .select()
      .from(receivedDocuments)
      .where(and(eq(receivedDocuments.companyId, company.id), inArray(receivedDocuments.documentType, [...port.types]), gte(receivedDocuments.issueDate, since), eq(receivedDocuments.duplicate, false), or(isNull(receivedDocuments.cessionCheckedAt), lt(receivedDocuments.cessionCheckedAt, stale))))
      .orderBy(sql`${receivedDocuments.cessionCheckedAt} IS NOT NULL`, asc(receivedDocuments.cessionCheckedAt))
      .limit(CESSION_CHECKS_PER_COMPANY - due.length);
    due.push(...rows);
  }
  for (const row of due) {
    try {
      await checkReceivedCession(env, company, signer, row, at);
    } catch (e) {
      log("warn", "received document's cession not checked", { company: company.id, document: row.id, error: describeError(e) });
      if (e instanceof AuthorityError && e.retryable) return;
    }
  }
}

/** On request (POST /api/reception/invoices/{id}/cession/check): the register asked now. */
export async function checkReceivedCessionNow(env: Env, company: Company, id: string): Promise<ReceivedRow> {
  const row = await getReceived(env, company.id, id);
  const port = issuingCountry().cessions;
  if (!port || !port.types.has(row.documentType)) {
    throw new AppError("RECEIVED_CESSION_NOT_APPLICABLE", `Document type ${row.documentType} is not ceded through the register of cessions: only 33, 34, 43 and 46 are.`);
  }
  const signer = await requireSigningCredentials(createDb(env.DB), env, company.id);
  try {
    return await checkReceivedCession(env, company, signer, row, new Date());
  } catch (e) {
    if (e instanceof AuthorityError) throw new AppError("RECEIVED_CESSION_CHECK_UNAVAILABLE", `The SII's register of cessions did not answer (${e.message}); the document is unchanged. Retry later (the service also asks by itself).`);
    throw e;
  }
}
