import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { invoiceEvents, invoices, type InvoiceStatus } from "../../db/schema";
import { newId } from "../../lib/ids";

export const FINAL_STATUSES: readonly InvoiceStatus[] = ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"];
export const isFinal = (s: InvoiceStatus) => FINAL_STATUSES.includes(s);

export type InvoiceRow = typeof invoices.$inferSelect;
export type InvoicePatch = Partial<Omit<InvoiceRow, "id" | "companyId" | "createdAt" | "lastEventId">>;

/**
 * Moves a document from one of `from` to `patch.status` (or keeps the status and changes other
 * fields) with one conditional UPDATE, and appends the history row in the same batch only when the
 * UPDATE matched: a duplicate delivery or a concurrent step finds the state already moved and does
 * nothing. Returns the updated row, or null when the document was not in an expected state.
 */
/**
 * INSERT … SELECT of the history row of every document whose last_event_id is `marker` (set by the
 * UPDATE in the same batch, so only documents that really moved get a row). With one document the
 * marker is the event id; with many, each row's id is `marker:invoiceId`.
 */
function historyFor(db: Db, where: SQL | undefined, marker: string, many: boolean, message: string | null, now: string) {
  return db.insert(invoiceEvents).select(
    db
      .select({
        id: (many ? sql<string>`${marker} || ':' || ${invoices.id}` : sql<string>`${marker}`).as("id"),
        invoiceId: invoices.id,
        status: invoices.status,
        fiscalStatus: invoices.fiscalStatus,
        message: sql<string | null>`${message}`.as("message"),
        createdAt: sql<string>`${now}`.as("created_at"),
      })
      .from(invoices)
      .where(and(where, eq(invoices.lastEventId, marker))),
  );
}

export async function transition(db: Db, invoiceId: string, from: readonly InvoiceStatus[], patch: InvoicePatch, message?: string | null): Promise<InvoiceRow | null> {
  const eventId = newId("evt");
  const now = new Date().toISOString();
  const [updated] = await db.batch([
    db
      .update(invoices)
      .set({ ...patch, updatedAt: now, lastEventId: eventId })
      .where(and(eq(invoices.id, invoiceId), inArray(invoices.status, [...from])))
      .returning(),
    historyFor(db, eq(invoices.id, invoiceId), eventId, false, message ?? patch.fiscalMessage ?? null, now),
  ]);
  return updated[0] ?? null;
}

/**
 * The same transition for many documents at once (all the documents of an envelope): one UPDATE and
 * one INSERT … SELECT of their history rows, tied together by a shared marker in last_event_id.
 * Returns the ids that moved; documents not in an expected state are left alone.
 */
export async function transitionMany(db: Db, invoiceIds: string[], from: readonly InvoiceStatus[], patch: InvoicePatch, message?: string | null): Promise<string[]> {
  const moved: string[] = [];
  for (let i = 0; i < invoiceIds.length; i += 80) {
    const chunk = invoiceIds.slice(i, i + 80);
    const marker = newId("evt");
    const now = new Date().toISOString();
    const [updated] = await db.batch([
      db
        .update(invoices)
        .set({ ...patch, updatedAt: now, lastEventId: marker })
        .where(and(inArray(invoices.id, chunk), inArray(invoices.status, [...from])))
        .returning({ id: invoices.id }),
      historyFor(db, inArray(invoices.id, chunk), marker, true, message ?? patch.fiscalMessage ?? null, now),
    ]);
    moved.push(...updated.map((r) => r.id));
  }
  return moved;
}

/** Records a problem without changing the state (the document waits and retries). */
export async function noteProblem(db: Db, invoiceId: string, error: string): Promise<void> {
  await db
    .update(invoices)
    .set({ lastError: error.slice(0, 1000), attempts: sql`${invoices.attempts} + 1`, updatedAt: new Date().toISOString() })
    .where(eq(invoices.id, invoiceId));
}

export async function history(db: Db, invoiceId: string) {
  return db.select().from(invoiceEvents).where(eq(invoiceEvents.invoiceId, invoiceId)).orderBy(invoiceEvents.createdAt, invoiceEvents.id);
}
