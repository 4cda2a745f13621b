/**
 * The buyer's answer to a factura the company issued (33, 34, 43; Ley 19.983, sii-formats.md §5):
 * the buyer accepts it (ACD, contents; ERM, receipt of the goods or services), claims it (RCD,
 * contents; RFP/RFT, goods partly or wholly missing) at the SII within 8 calendar days of the SII's
 * reception, or says nothing and it is accepted by law. The SII's register of events
 * (listarEventosHistDoc) is the legal record, so that is what is read: once the SII accepts the
 * document, then at growing intervals until the deadline, and once after it. The document store's
 * alarm finds the checks due (src/operations/objects/document-store/due-documents.ts) and the issuance
 * queue's consumer reads the SII (src/invoices/pipeline/buyer-checks.ts).
 */
import { and, asc, eq, inArray, isNotNull, isNull, lte, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { invoices, type BuyerState } from "../storage/db/schema";
import { issuingCountry } from "../countries";
import { documentEvent, type InvoiceRow } from "./state";

/** One event of the SII's register on the document, as the API shows it. */
export interface BuyerEvent {
  /** The SII's code: ACD, ERM, RCD, RFP, RFT; also NCA/ENC (a credit note referring to it). */
  code: string;
  description: string;
  /** Who recorded it (the buyer's person or company). */
  by_tax_id: string;
  /** ISO 8601 with the SII's offset. */
  at: string;
}

const CLAIMS = new Set(["RCD", "RFP", "RFT"]);
const ACCEPTANCES = new Set(["ACD", "ERM"]);

/** Checks after the first come at a quarter of the document's age at the SII, within these bounds. */
export const MIN_CHECK_INTERVAL_MS = 10 * 60_000;
export const MAX_CHECK_INTERVAL_MS = 6 * 3_600_000;
/** The last check, this long after the deadline: what the register holds then is final. */
export const FINAL_CHECK_AFTER_MS = 60_000;
/** When the SII has no reception time for the document yet, or its certificate is missing: ask again after this. */
export const RETRY_CHECK_MS = 3_600_000;
/**
 * Retries an hour apart (the SII gives no reception time for the document, the company has no usable
 * certificate, the SII refuses the query) go on for at most this long after the document was
 * stamped (the 8 days plus two): past it the answer is final anyway, and a cause that lasted that
 * long is not passing (the document keeps its state; `POST …/buyer_response/check` still reads it).
 */
export const RETRIES_FOR_MS = 10 * 86_400_000;

/** The next hourly retry after `now`, or null once RETRIES_FOR_MS after `stampedAt` has passed. */
export function retryAt(now: number, stampedAt: string | null): number | null {
  const giveUp = stampedAt === null ? Infinity : Date.parse(stampedAt) + RETRIES_FOR_MS;
  return now >= giveUp ? null : now + RETRY_CHECK_MS;
}
/** At most this many checks are sent per alarm or cron run (the rest at the next); at most 90, see takeDueBuyerChecks. */
export const BUYER_CHECKS_PER_RUN = 90;
/** A check sent to the queue is not sent again before this (its message is being handled, or was lost). */
export const CHECK_LEASE_MS = 15 * 60_000;

/**
 * The UPDATE that starts the checks of the documents `where` picks that the SII has just accepted
 * (in the verdict's batch): facturas only, once.
 */
export function startBuyerChecks(db: Db, where: SQL | undefined, now: string) {
  return db
    .update(invoices)
    .set({ buyerState: "PENDING", buyerEvents: "[]", buyerCheckAt: now })
    .where(and(where, inArray(invoices.status, ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS"]), inArray(invoices.documentType, [...issuingCountry().responseWindow.types]), isNull(invoices.buyerState)));
}

/** The state the events give at `now`: a claim wins (the SII refuses a claim after an acceptance and vice versa), then an acceptance, then the deadline. */
export function buyerStateOf(events: readonly BuyerEvent[], deadline: string | null, now: number): BuyerState {
  if (events.some((e) => CLAIMS.has(e.code))) return "CLAIMED";
  if (events.some((e) => ACCEPTANCES.has(e.code))) return "ACCEPTED";
  return deadline !== null && now >= Date.parse(deadline) ? "ACCEPTED_BY_LAW" : "PENDING";
}

/**
 * When the register is next read (null: never again): not after a claim or after both acceptances
 * (nothing can change), nor once the deadline has passed (this read was the final one); otherwise
 * at a quarter of the document's age at the SII (10 minutes to 6 hours), and once just after the
 * deadline. Without a reception time: hourly (retryAt).
 */
export function nextBuyerCheck(events: readonly BuyerEvent[], siiReceivedAt: string | null, now: number, stampedAt: string | null = null): number | null {
  if (events.some((e) => CLAIMS.has(e.code))) return null;
  if ([...ACCEPTANCES].every((a) => events.some((e) => e.code === a))) return null;
  if (siiReceivedAt === null) return retryAt(now, stampedAt);
  const deadline = Date.parse(issuingCountry().responseWindow.deadlineOf(siiReceivedAt));
  if (now >= deadline) return null;
  const interval = Math.min(MAX_CHECK_INTERVAL_MS, Math.max(MIN_CHECK_INTERVAL_MS, (now - Date.parse(siiReceivedAt)) / 4));
  return Math.min(now + interval, deadline + FINAL_CHECK_AFTER_MS);
}

/**
 * The statements of one read of the register: the document's new state, events, deadline and next
 * check, and an `invoice.buyer_response` event when the state or the events changed (one per state
 * and number of events, so a repeated read records none).
 */
export function buyerCheckStatements(db: Db, row: InvoiceRow, read: { siiReceivedAt: string | null; events: BuyerEvent[] }, at: Date) {
  const now = at.getTime();
  const iso = at.toISOString();
  const deadline = read.siiReceivedAt === null ? null : issuingCountry().responseWindow.deadlineOf(read.siiReceivedAt);
  const state = buyerStateOf(read.events, deadline, now);
  const next = nextBuyerCheck(read.events, read.siiReceivedAt, now, row.stampedAt ?? row.createdAt);
  const events = JSON.stringify(read.events);
  const changed = state !== row.buyerState || events !== (row.buyerEvents ?? "[]");
  const update = db
    .update(invoices)
    .set({ buyerState: state, buyerEvents: events, siiReceivedAt: read.siiReceivedAt, buyerDeadline: deadline, buyerCheckedAt: iso, buyerCheckAt: next === null ? null : new Date(next).toISOString(), ...(changed ? { updatedAt: iso } : {}) })
    .where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id), isNotNull(invoices.buyerState)));
  if (!changed) return [update] as const;
  return [update, documentEvent(db, row.companyId, row.id, "invoice.buyer_response", `buyer:${row.id}:${state}:${read.events.length}`, iso)] as const;
}

/** A document whose checks stop without a read (its company is gone): no further check, the state as it was. */
export function stopBuyerChecks(db: Db, row: Pick<InvoiceRow, "companyId" | "id">) {
  return db.update(invoices).set({ buyerCheckAt: null }).where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id)));
}

/** A check put off until `at` (no usable certificate, a refusal by the SII), or stopped (null: retries are over, see retryAt). */
export function postponeBuyerCheck(db: Db, row: Pick<InvoiceRow, "companyId" | "id">, at: number | null) {
  return db.update(invoices).set({ buyerCheckAt: at === null ? null : new Date(at).toISOString() }).where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id), isNotNull(invoices.buyerCheckAt)));
}

/**
 * The checks due at `at` in one database (oldest first, at most `limit`), each leased for
 * CHECK_LEASE_MS so that the next alarm or cron run does not send it again while its message waits
 * (a message lost or dead-lettered: the check is due again when the lease ends). `limit` at most 90
 * (the lease's UPDATE binds every id; D1 takes 100 parameters).
 */
export async function takeDueBuyerChecks(db: Db, at: Date, limit: number): Promise<{ id: string; companyId: string }[]> {
  const iso = at.toISOString();
  const due = await db
    .select({ id: invoices.id, companyId: invoices.companyId })
    .from(invoices)
    .where(and(isNotNull(invoices.buyerCheckAt), lte(invoices.buyerCheckAt, iso)))
    .orderBy(asc(invoices.buyerCheckAt))
    .limit(limit);
  if (due.length > 0) {
    await db
      .update(invoices)
      .set({ buyerCheckAt: new Date(at.getTime() + CHECK_LEASE_MS).toISOString() })
      .where(and(inArray(invoices.id, due.map((d) => d.id)), lte(invoices.buyerCheckAt, iso)));
  }
  return due;
}
