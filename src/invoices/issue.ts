import type { DirectoryEnv } from "../storage/db/control-directory";
import { eq } from "drizzle-orm";
import { issuingCountry } from "../countries";
import type { Cancellation, DocumentBody, PreparedDocument, StoredTarget } from "../countries/port";
import { uniqueViolation, type Db } from "../storage/db/client";
import { cancellations, invoiceEvents, invoices } from "../storage/db/schema";
import { createdUlid, newId, type IdempotencyClaim } from "../lib/ids";
import type { CompanyRow } from "../accounts/companies/repository";
import { withIssuerProfile } from "./issuer";
import { AppError } from "../lib/errors";
import { allocator } from "../folios/cafs";
import type { ReserveResult } from "../folios/allocator-api";
import { validityOf } from "../accounts/certificates/certificates";
import { resolutionOf } from "../accounts/companies/settings";
import { companyControl, type CompanyControl } from "../accounts/companies/control-cache";
import type { InvoiceRow } from "./state";
import { enqueueInvoice } from "./pipeline/messages";
import { log } from "../lib/log";
import { claimReference, releaseReference } from "./references";
import { findInvoiceByFolio } from "./queries";
import { knownStoreForId, OPEN_PARTITION_CACHE_MS, openStore, partitionedId, partitionsOf, storeFor, type StoreHandle } from "../storage/db/document-store";
import { claimCancellation, releaseCancellationClaim, stillHolds } from "./cancellation-claims";
import { claimCredits, creditTargets, releaseCreditClaims } from "./credit-claims";
import { assertIssueDateInCertificate, refuseBeforeAuthorization } from "./rules";

/**
 * §4.9: a note that cancels one of our own documents is checked: the document may not be cancelled
 * twice, nor be one that was never accepted, and the country's rules on what cancels what apply (on
 * the body as sent, before it is computed, so our own documents get these precise answers).
 * References to documents issued elsewhere pass unchanged to the authority.
 */
async function cancellationTarget(env: Env, companyId: string, cancellation: Cancellation | null, ownUlid: string): Promise<{ row: InvoiceRow; target: StoredTarget } | null> {
  if (!cancellation) return null;
  for (const named of cancellation.targets) {
    const found = await findInvoiceByFolio(env, companyId, named.documentType, named.folio);
    if (!found) continue; // not ours: the authority validates it
    const { row: original, db } = found;
    const { field, documentType: refType } = named;
    const target = { id: original.id, documentType: original.documentType, folio: original.folio, total: original.total, field };
    cancellation.check(target);
    if (original.status === "REJECTED" || original.status === "FAILED") {
      throw new AppError("INVOICE_NOT_CANCELLABLE", `Document ${original.id} (${refType} N° ${original.folio}) was ${original.status.toLowerCase()}: there is nothing to cancel.`, [
        { field, message: `Referenced document is ${original.status}` },
      ]);
    }
    const existing = await db.query.cancellations.findFirst({ where: eq(cancellations.cancelledInvoiceId, original.id) });
    // A retry of this very note (same Idempotency-Key claim: the same id) holds it already.
    if (existing && !existing.creditNoteId.endsWith(`_${ownUlid}`) && (await stillHolds(env, companyId, existing, new Date()))) {
      throw new AppError("INVOICE_ALREADY_CANCELLED", `Document ${original.id} (${refType} N° ${original.folio}) is already cancelled by ${existing.creditNoteId}.`, [
        { field, message: "Already cancelled" },
      ]);
    }
    return { row: original, target };
  }
  return null;
}

/**
 * The D1 side of the POST (the document itself goes to the company's store): the active
 * certificate, whether a CAF is loaded for the type, and the company's SII resolution, from the
 * company's control data (src/accounts/companies/control-cache.ts: its directory object on a miss,
 * shared with the pipeline's steps; at most CONTROL_CACHE_MS old in the isolate, dropped here and in
 * the object by every write to them). A refusal is never decided on a cache: what would refuse is
 * read again from D1 first. The
 * certificate's dates are checked on every POST (`assertIssuable`), and the folio allocator still
 * refuses a type without folios, so a stale entry never numbers a document.
 */
export async function issueContext(env: DirectoryEnv, companyId: string, type: number, now: Date) {
  const at = now.getTime();
  const contextOf = (control: CompanyControl | null) => ({ cert: control?.certificate, hasCaf: !!control?.cafTypes.includes(type), resolution: resolutionOf(control?.settings) });
  const ctx = contextOf(await companyControl(env, companyId, at));
  if (ctx.hasCaf && ctx.cert && validityOf(ctx.cert, now) === "VALID") return ctx;
  // What would refuse may come from the isolate's cache or the directory object's: D1 decides.
  return contextOf(await companyControl(env, companyId, at, true));
}

export type IssueContext = Awaited<ReturnType<typeof issueContext>>;

/** No document is stored without an active, current certificate and a CAF loaded for its type. */
export function assertIssuable(ctx: IssueContext, type: number, now: Date) {
  const row = ctx.cert;
  if (!row) throw new AppError("CERTIFICATE_REQUIRED", "The company has no active signing certificate: upload a .pfx to /certificates first. No folio was used.");
  const validity = validityOf(row, now);
  if (validity !== "VALID") {
    throw new AppError("CERTIFICATE_REQUIRED", validity === "EXPIRED" ? `The active certificate expired on ${row.validTo}: upload a current one. No folio was used.` : `The active certificate is valid only from ${row.validFrom}.`);
  }
  if (!ctx.hasCaf) {
    throw new AppError("INVOICE_NO_FOLIOS", `No CAF is loaded for document type ${type}: upload one (/enumeration/upload) or request one (/enumeration/refetch).`);
  }
}

/**
 * Why the allocator refused the document its folio reservation: it keeps at most as
 * many reservations as folios left, so exhaustion is refused at POST, synchronously, instead of a
 * document accepted now and FAILED later; it also checks the issue date against the CAF's
 * authorisation date. (The pipeline's allocation turns a reservation into the folio.)
 */
export function refuseReservation(ctx: IssueContext, doc: PreparedDocument, reservation: Extract<ReserveResult, { ok: false }>, now: Date): never {
  if (reservation.reason === "BEFORE_AUTHORIZATION") refuseBeforeAuthorization(doc.issueDate, reservation.authorizedAt!);
  // A missing certificate or CAF is the more useful answer than "every folio is used".
  assertIssuable(ctx, doc.documentType, now);
  throw new AppError("INVOICE_NO_FOLIOS", `No folio of document type ${doc.documentType} is left for this document: ${reservation.message}. Load a new CAF.`);
}

/**
 * An issue date after tomorrow in every time zone (UTC today + 1 day) is refused: a document dated in
 * the future cannot be issued now. A day of slack covers every company time zone.
 */
export function assertNotFuture(issueDate: string, now: Date) {
  const latest = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);
  if (issueDate > latest) {
    const message = `invoice_date ${issueDate} is in the future (latest accepted: ${latest})`;
    throw new AppError("INVOICE_INVALID_DATE", message, [{ field: "invoice_date", message }]);
  }
}

/** A body the company may issue, as it will be stored, with what it computes to and the document of ours it cancels. */
export interface CheckedBody {
  body: DocumentBody;
  doc: PreparedDocument;
  target: InvoiceRow | null;
}

/**
 * The checks of a body on its own (the issuer block and the company's profile, what it cancels, its
 * amounts and the country's rules, its date, its issuer): the single POST's and every batch row's.
 * `ulid`: the document's own (a retry of the same note holds its cancellation already).
 */
export async function checkBody(env: Env, company: CompanyRow, sent: DocumentBody, ulid: string, now: Date): Promise<CheckedBody> {
  const body = withIssuerProfile(sent, company);
  const country = issuingCountry();
  const { documents } = country;
  const cancellation = documents.cancellation(body);
  const cancelled = await cancellationTarget(env, company.id, cancellation, ulid);
  const doc = documents.prepare(body);
  if (cancellation && cancelled) cancellation.checkAmount(cancelled.target, doc.total);
  assertNotFuture(doc.issueDate, now);
  if (company.country !== country.alpha3 || doc.issuerTaxId !== company.taxId) {
    throw new AppError("INVOICE_ISSUER_MISMATCH", `issuer.document_number (${doc.issuerTaxId}) is not this company's tax id (${company.taxId}).`, [
      { field: "issuer.document_number", message: `Expected ${company.taxId}` },
    ]);
  }
  return { body, doc, target: cancelled?.row ?? null };
}

export const RECEIVED_MESSAGE = "Received; queued for folio assignment, signature and sending";

/**
 * POST /invoices: validates everything that can be known now (body, amounts, the SII's document
 * rules, issuer, certificate, resolution, cancellation rules and what credit notes may still credit),
 * reserves the right to a folio, stores
 * the document as RECEIVED in the company's open document store (its id names the
 * partition) and enqueues it. Nothing is signed and no folio number is taken here: the pipeline does
 * that, exactly once, from the reservation.
 */
export async function issueInvoice(db: Db, env: Env, company: CompanyRow, sent: DocumentBody, requestId: string, now = new Date(), idempotency?: IdempotencyClaim): Promise<InvoiceRow> {
  // Under an Idempotency-Key the id is the claim's (every attempt of it names the same document, so
  // a retry after an unknown outcome finds what the first attempt stored instead of a second one).
  const ulid = await createdUlid(env.API_KEY_PEPPER, idempotency, now.getTime());
  const { body, doc, target } = await checkBody(env, company, sent, ulid, now);
  const { documents } = issuingCountry();
  // The partition is opened only for a body that passed (a refused one leaves no trace). A retry
  // that took the claim over answers what an earlier attempt stored, in the partition it went to.
  const store = (idempotency?.takenOver ? await storedByEarlierAttempt(env, company.id, ulid, idempotency.createdAt) : null) ?? (await openStore(env, company.id, now));
  const id = partitionedId("inv", store.ordinal, ulid);
  const folios = allocator(env, company.id, doc.documentType);
  // The D1 reads and the reservation at once (one round trip's latency); a refusal gives it back.
  const [ctx, reservation, credited] = await Promise.all([issueContext(env, company.id, doc.documentType, now), folios.reserve(id, { issueDate: doc.issueDate }), creditTargets(env, company.id, doc, target)]);
  let claimed = false;
  let cancelling = false;
  let crediting = false;
  try {
    assertIssueDateInCertificate(ctx.cert, doc.issueDate);
    documents.checkResolution(body, ctx.resolution);
    if (!reservation.ok) refuseReservation(ctx, doc, reservation, now);
    assertIssuable(ctx, doc.documentType, now);
    if (body.external_reference) claimed = await claimExternalReference(env, company.id, body.external_reference, id);
    if (target) cancelling = await claimCancellation(env, target, id, now);
    if (credited.length > 0) crediting = await claimCredits(env, credited, id, now);
    return await storeAndEnqueue(store, env, company, body, doc, target, id, requestId, now);
  } catch (e) {
    // Refused (an AppError: nothing stored): the reservation, the reference, the cancellation and
    // the credits go back. Any other failure may have come after the document was stored (the
    // store's answer lost), so they stay, as after a crash: an unstored holder's reservation lapses
    // after a day and its reference, cancellation and credits are taken over; a stored one keeps
    // them (a retry with the same Idempotency-Key finds it under the same id).
    if (!(e instanceof AppError)) throw e;
    if (reservation.ok) await folios.release(id).catch(() => undefined);
    if (claimed) await releaseReference(env, company.id, body.external_reference!, id).catch(() => undefined);
    if (cancelling) await releaseCancellationClaim(env, target!, id).catch(() => undefined);
    if (crediting) await releaseCreditClaims(env, credited, id).catch(() => undefined);
    throw e;
  }
}

/**
 * The store in which an earlier attempt of this Idempotency-Key claim stored its document (id
 * `inv_p<ordinal>_<ulid>`), or null when none did. The partition open then may have closed since (a
 * month's first instant, or its size limit): a retry that named its document in the partition open
 * now would store it a second time. Every partition that could take new documents since the claim
 * is asked (an isolate keeps writing to the open partition it cached for up to
 * OPEN_PARTITION_CACHE_MS after it closed); only a retry that took a claim over pays for this.
 */
async function storedByEarlierAttempt(env: Env, companyId: string, ulid: string, claimedAt: string): Promise<StoreHandle | null> {
  const since = Date.parse(claimedAt) - OPEN_PARTITION_CACHE_MS;
  const candidates = (await partitionsOf(env, companyId)).filter((p) => p.ordinal > 0 && (p.closedAt === null || Date.parse(p.closedAt) >= since));
  const found = await Promise.all(
    candidates.map(async (p) => {
      const store = storeFor(env, companyId, p.ordinal);
      const [row] = await store.db.select({ id: invoices.id }).from(invoices).where(eq(invoices.id, partitionedId("inv", p.ordinal, ulid)));
      return row ? store : null;
    }),
  );
  return found.find((s) => s !== null) ?? null;
}

/**
 * Claims `external_reference` for the new document in the company's index store (unique across its
 * partitions), or refuses it naming the document that holds it. A holder that FAILED or was never
 * stored no longer holds it. The partial unique index of each partition stays as a second guard.
 */
async function claimExternalReference(env: Env, companyId: string, reference: string, id: string): Promise<true> {
  const claim = await claimReference(env, companyId, reference, id, (holderId) => documentHolds(env, companyId, holderId));
  if (claim.ok) return true;
  throw new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${reference} is already document ${claim.holder}.`, [
    { field: "external_reference", message: `Already used by ${claim.holder}` },
  ]);
}

/** Whether a document still holds its external_reference: it is stored (in the partition its id names) and did not fail. */
export async function documentHolds(env: Env, companyId: string, holderId: string): Promise<boolean> {
  const p = await knownStoreForId(env, companyId, holderId);
  if (!p) return false;
  const [holder] = await p.db.select({ status: invoices.status }).from(invoices).where(eq(invoices.id, holderId));
  return holder !== undefined && holder.status !== "FAILED";
}

/** The row of a document just taken: RECEIVED, with its body as stored and what it computes to (`batchId`: the batch it came in). */
export function receivedRow(company: CompanyRow, body: DocumentBody, doc: PreparedDocument, target: InvoiceRow | null, id: string, requestId: string, eventId: string, at: string, batchId: string | null = null): InvoiceRow {
  return {
    id,
    companyId: company.id,
    documentType: doc.documentType,
    status: "RECEIVED",
    fiscalStatus: null,
    fiscalMessage: null,
    folio: null,
    cafId: null,
    externalReference: body.external_reference ?? null,
    issueDate: doc.issueDate,
    recipientRut: doc.receiver.taxId,
    recipientName: doc.receiver.name,
    currency: doc.currency,
    total: doc.total,
    body: JSON.stringify(body),
    stampedAt: null,
    xmlKey: null,
    envelopeId: null,
    trackId: null,
    cancelsInvoiceId: target?.id ?? null,
    lastError: null,
    attempts: 0,
    lastEventId: eventId,
    requestId,
    buyerState: null,
    buyerEvents: null,
    siiReceivedAt: null,
    buyerDeadline: null,
    buyerCheckedAt: null,
    buyerCheckAt: null,
    buyerReplies: null,
    buyerDelivery: null,
    buyerDeliveryAt: null,
    batchId,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Stores the document (RECEIVED) and its first history row in one batch of the open store, then
 * enqueues it. (No event is recorded at RECEIVED: the first `invoice.*` event is `invoice.sent`.)
 */
async function storeAndEnqueue(store: StoreHandle, env: Env, company: CompanyRow, body: DocumentBody, doc: PreparedDocument, target: InvoiceRow | null, id: string, requestId: string, now: Date): Promise<InvoiceRow> {
  const eventId = newId("evt");
  const at = now.toISOString();
  const row = receivedRow(company, body, doc, target, id, requestId, eventId, at);
  const { db } = store;
  let stored = row;
  try {
    await db.batch([db.insert(invoices).values(row), db.insert(invoiceEvents).values({ id: eventId, invoiceId: id, status: "RECEIVED", fiscalStatus: null, message: RECEIVED_MESSAGE, createdAt: at })]);
  } catch (e) {
    // The same id again: an earlier attempt of this Idempotency-Key claim stored it (its answer was
    // lost), and it is answered and enqueued again. SQLite names whichever constraint it checked
    // first (the id, or the external_reference the earlier attempt stored with it), so any unique
    // violation looks for the id.
    const violated = uniqueViolation(e);
    const earlier = violated !== null ? await db.query.invoices.findFirst({ where: eq(invoices.id, id) }) : undefined;
    if (!earlier && violated === "invoices.company_id, invoices.external_reference") {
      throw new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${body.external_reference} is already used.`, [{ field: "external_reference", message: "Already used" }]);
    }
    if (!earlier) throw e;
    stored = earlier;
  }
  try {
    await enqueueInvoice(env, { invoiceId: id, companyId: company.id, requestId });
  } catch (e) {
    // The document is stored; the cron sweep re-drives RECEIVED documents that were never queued.
    log("error", "enqueue failed; the sweep will re-drive", { request_id: requestId, invoice_id: id, error: String(e) });
  }
  return stored;
}
