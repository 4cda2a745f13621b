import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { eventOutbox, invoiceEvents, invoices, type InvoiceStatus } from "../storage/db/schema";
import { newId } from "../lib/ids";

export const FINAL_STATUSES: readonly InvoiceStatus[] = ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"];
export const isFinal = (s: InvoiceStatus) => FINAL_STATUSES.includes(s);

/** A move of a document: the statuses it may start from and the ones it may end in. */
export interface Move {
  readonly from: readonly InvoiceStatus[];
  /** Allowed target statuses; the first is the default. `from` itself for an update in place. */
  readonly to: readonly InvoiceStatus[];
  /** Records an `invoice.<status>` event (webhooks) in the same batch as the move. */
  readonly emits?: true;
}

/**
 * Every move a document can make (DECISIONS 17), one entry per pipeline step. Each step names its
 * move; the conditional UPDATE checks `from`, and a target outside `to` is a bug caught at once.
 */
export const MOVES = {
  /** The allocator gave it its folio. */
  assignFolio: { from: ["RECEIVED"], to: ["GENERATED"] },
  /** Stamped and signed after its folio was recorded. */
  sign: { from: ["GENERATED"], to: ["SIGNED"] },
  /** Folio, stamp and signature recorded together for a batch built in memory. */
  signInBatch: { from: ["RECEIVED", "GENERATED"], to: ["SIGNED"] },
  /** The engine could not build it: final, its folio annulled. */
  failBuild: { from: ["RECEIVED", "GENERATED"], to: ["FAILED"], emits: true },
  /** Could not be produced or delivered (no folio, no certificate for good...). */
  fail: { from: ["RECEIVED", "GENERATED", "SIGNED"], to: ["FAILED"], emits: true },
  /** Its envelope was uploaded. */
  send: { from: ["SIGNED"], to: ["SENT"], emits: true },
  /** The authority refused the upload itself. */
  rejectUpload: { from: ["SIGNED"], to: ["REJECTED"], emits: true },
  /** A poll changed the authority's code but gave no verdict yet. */
  pollProgress: { from: ["SENT"], to: ["SENT"] },
  /** The authority's verdict. */
  verdict: { from: ["SENT"], to: ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED"], emits: true },
} as const satisfies Record<string, Move>;

/** Statuses a document waits in between steps (the cron sweep re-drives those left untouched). */
export const IN_PROGRESS_STATUSES: readonly InvoiceStatus[] = ["RECEIVED", "GENERATED", "SIGNED"];

/** The patch of a move: its target status (the first, or the one asked for if the move allows it). */
function movePatch(move: Move, patch: InvoicePatch): InvoicePatch {
  const status = patch.status ?? move.to[0]!;
  if (!move.to.includes(status)) throw new Error(`A move from ${move.from.join("/")} cannot end in ${status}`);
  return { ...patch, status };
}

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
function historyFor(db: Db, where: SQL | undefined, marker: string, many: boolean, message: string | SQL | null, now: string, opts: { status?: InvoiceStatus; suffix?: string } = {}) {
  const id = many ? sql<string>`${marker} || ':' || ${invoices.id}` : sql<string>`${marker}`;
  return db.insert(invoiceEvents).select(
    db
      .select({
        id: (opts.suffix ? sql<string>`${id} || ${opts.suffix}` : id).as("id"),
        invoiceId: invoices.id,
        status: opts.status ? sql<string>`${opts.status}`.as("status") : invoices.status,
        fiscalStatus: invoices.fiscalStatus,
        message: (typeof message === "string" || message === null ? sql<string | null>`${message}` : message).as("message"),
        createdAt: sql<string>`${now}`.as("created_at"),
      })
      .from(invoices)
      .where(and(where, eq(invoices.lastEventId, marker))),
  );
}

/** Columns of the document snapshot an `invoice.*` event carries (every column but the request body). */
const SNAPSHOT = sql.raw(
  [
    "id", "company_id", "document_type", "status", "fiscal_status", "fiscal_message", "folio", "external_reference", "issue_date",
    "recipient_rut", "recipient_name", "currency", "total", "track_id", "cancels_invoice_id", "last_error", "attempts", "created_at", "updated_at",
    "buyer_state", "buyer_events", "sii_received_at", "buyer_deadline", "buyer_checked_at", "buyer_check_at", "buyer_replies", "buyer_delivery",
  ].map((c) => `'${c}', invoices.${c}`).join(", "),
);

/** The columns of an `invoice.*` event row: the document's snapshot as the statement finds it, and the note that cancels it. */
function eventColumns(type: SQL<string>, dedupeKey: SQL<string>, now: string) {
  return {
    id: sql<string>`'evt_' || lower(hex(randomblob(16)))`.as("id"),
    companyId: invoices.companyId,
    type: type.as("type"),
    dedupeKey: dedupeKey.as("dedupe_key"),
    payload: sql<string>`json_object('invoice', json_object(${SNAPSHOT}), 'cancelled_by', (SELECT credit_note_id FROM cancellations WHERE cancelled_invoice_id = ${invoices.id}))`.as("payload"),
    createdAt: sql<string>`${now}`.as("created_at"),
    dispatchedAt: sql<string | null>`NULL`.as("dispatched_at"),
  };
}

/**
 * INSERT … SELECT of one document's `type` event (e.g. `invoice.buyer_response`), its snapshot as an
 * UPDATE earlier in the same batch left it; nothing when the dedupe key is already recorded, or when
 * the document does not meet `only` (e.g. a conditional UPDATE before it did not apply).
 */
export function documentEvent(db: Db, companyId: string, id: string, type: string, dedupeKey: string, now: string, only?: SQL) {
  return db
    .insert(eventOutbox)
    .select(db.select(eventColumns(sql<string>`${type}`, sql<string>`${dedupeKey}`, now)).from(invoices).where(and(eq(invoices.companyId, companyId), eq(invoices.id, id), only)))
    .onConflictDoNothing();
}

/**
 * INSERT … SELECT of the `invoice.<status>` event of every document that really moved (found by the
 * marker, like its history row): a snapshot of the document as it is after the move, and the note
 * that cancels it. One event per document and status (dedupe key), so a replayed move records none.
 */
function eventsFor(db: Db, where: SQL | undefined, marker: string, now: string) {
  return db
    .insert(eventOutbox)
    .select(
      db
        .select(eventColumns(sql<string>`'invoice.' || lower(${invoices.status})`, sql<string>`'invoice:' || ${invoices.id} || ':' || ${invoices.status}`, now))
        .from(invoices)
        .where(and(where, eq(invoices.lastEventId, marker))),
    )
    .onConflictDoNothing();
}

/**
 * The statements of a transition of every document of an envelope (`where` picks them, e.g. by
 * envelope id), to run inside a larger batch: the conditional UPDATE (returning the ids that moved)
 * and the INSERT … SELECT of their history rows. `only` narrows the UPDATE with a condition on the
 * fields it changes (the history rows are found by the marker). Statement results: [moved ids, history].
 */
export function envelopeTransition(db: Db, where: SQL | undefined, move: Move, patch: InvoicePatch, message?: string | null, only?: SQL) {
  const marker = newId("evt");
  const now = new Date().toISOString();
  return [
    db
      .update(invoices)
      .set({ ...movePatch(move, patch), updatedAt: now, lastEventId: marker })
      .where(and(where, only, inArray(invoices.status, [...move.from])))
      .returning({ id: invoices.id, companyId: invoices.companyId, cancelsInvoiceId: invoices.cancelsInvoiceId }),
    historyFor(db, where, marker, true, message ?? patch.fiscalMessage ?? null, now),
    ...(move.emits ? [eventsFor(db, where, marker, now)] : []),
  ] as const;
}

/**
 * RECEIVED/GENERATED documents built, stamped and signed in memory move to SIGNED in one batch:
 * one conditional UPDATE each (folio, CAF, stamp time, XML key and the envelope that will carry
 * them), then the history rows of both steps (folio assigned, stamped and signed) for those that
 * moved (ids `marker:invoice` then `marker:invoice:s`, so they sort in that order). Statement results: one list of moved ids per document, then the two history inserts.
 */
export function signedTransitions(db: Db, envelopeId: string, docs: { id: string; folio: number; cafId: string; stampedAt: string; xmlKey: string }[]) {
  const marker = newId("evt");
  const now = new Date().toISOString();
  const mine = eq(invoices.envelopeId, envelopeId);
  return [
    ...docs.map((d) =>
      db
        .update(invoices)
        .set({ status: "SIGNED", folio: d.folio, cafId: d.cafId, stampedAt: d.stampedAt, xmlKey: d.xmlKey, envelopeId, updatedAt: now, lastEventId: marker })
        .where(and(eq(invoices.id, d.id), inArray(invoices.status, [...MOVES.signInBatch.from])))
        .returning({ id: invoices.id }),
    ),
    historyFor(db, mine, marker, true, sql<string>`'Folio ' || ${invoices.folio} || ' assigned'`, now, { status: "GENERATED" }),
    historyFor(db, mine, marker, true, sql<string>`'Stamped and signed as F' || ${invoices.folio} || 'T' || ${invoices.documentType}`, now, { suffix: ":s" }),
  ] as const;
}

export async function transition(db: Db, invoiceId: string, move: Move, patch: InvoicePatch, message?: string | null): Promise<InvoiceRow | null> {
  const eventId = newId("evt");
  const now = new Date().toISOString();
  const [updated] = await db.batch([
    db
      .update(invoices)
      .set({ ...movePatch(move, patch), updatedAt: now, lastEventId: eventId })
      .where(and(eq(invoices.id, invoiceId), inArray(invoices.status, [...move.from])))
      .returning(),
    historyFor(db, eq(invoices.id, invoiceId), eventId, false, message ?? patch.fiscalMessage ?? null, now),
    ...(move.emits ? [eventsFor(db, eq(invoices.id, invoiceId), eventId, now)] : []),
  ]);
  return updated[0] ?? null;
}

/**
 * Records a problem without changing the state (the document waits and retries): on one document,
 * or on every document of an envelope.
 */
export async function noteProblem(db: Db, target: { invoiceId: string } | { envelopeId: string }, error: string): Promise<void> {
  await db
    .update(invoices)
    .set({ lastError: error.slice(0, 1000), attempts: sql`${invoices.attempts} + 1`, updatedAt: new Date().toISOString() })
    .where("invoiceId" in target ? eq(invoices.id, target.invoiceId) : eq(invoices.envelopeId, target.envelopeId));
}

export async function history(db: Db, invoiceId: string) {
  return db.select().from(invoiceEvents).where(eq(invoiceEvents.invoiceId, invoiceId)).orderBy(invoiceEvents.createdAt, invoiceEvents.id);
}
