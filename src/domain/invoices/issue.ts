import { and, eq, exists, getTableColumns, gte, lte, ne, sql, type SQL } from "drizzle-orm";
import { DOCUMENT_TYPES, assertDocumentSchema, findDocumentType, invoiceSchema, isEngineError, computeDocument, formatAmount, type ComputedDocument, type InvoiceInput } from "../../countries/cl";
import { checkInvoiceCodes } from "../catalogs/cl/checks";
import { uniqueViolation, type Db } from "../../db/client";
import { cafs, cancellations, certificates, companySettings, invoiceEvents, invoices } from "../../db/schema";
import { newId } from "../../lib/ids";
import type { CompanyRow } from "../companies/repository";
import { AppError, isInvoiceInputCode } from "../../errors";
import { allocator } from "../folios/cafs";
import type { ReserveResult } from "../folios/allocator-api";
import { validityOf } from "../certificates/certificates";
import { resolutionOf } from "../companies/settings";
import type { InvoiceRow } from "./state";
import { enqueueInvoice } from "../../queues/issuance";
import { log } from "../../lib/log";
import { claimReference, releaseReference } from "./references";
import { partitionsWithLegacy } from "../../db/document-store/legacy";
import { assertCancellationAmount, assertIssueDateInCertificate, assertResolution, checkSiiRules, refuseBeforeAuthorization } from "./rules";

/** Engine failures on the request body become `INVOICE_<code>` errors naming the field. */
export function computeOrThrow(body: InvoiceInput): ComputedDocument {
  try {
    // Coded fields against the country's catalogs first (the error names the listing endpoint);
    // a body that does not even match the schema is left to the engine's own message.
    const parsed = invoiceSchema.safeParse(body);
    const type = parsed.success ? findDocumentType(parsed.data.invoice_type) : undefined;
    if (parsed.success && type) checkInvoiceCodes(parsed.data, type);
    const doc = computeDocument(body);
    assertDocumentSchema(doc);
    return doc;
  } catch (e) {
    if (isEngineError(e) && isInvoiceInputCode(e.code)) {
      const message = e.expected !== undefined ? `${e.message} (expected ${e.expected})` : e.message;
      throw new AppError(`INVOICE_${e.code}`, message, [{ field: e.field ?? "(body)", message }]);
    }
    throw e;
  }
}

/**
 * §4.9: a note that cancels (ANU, CodRef 1) one of our own documents is checked: the document may
 * not be cancelled twice, its type must be cancellable and the note must be the type that cancels
 * it. References to documents issued elsewhere pass unchanged to the SII. Runs on the raw body,
 * before the engine's general reference rules, so our own documents get these precise answers.
 */
async function cancellationTarget(env: Env, companyId: string, body: InvoiceInput): Promise<InvoiceRow | null> {
  const type = findDocumentType(body.invoice_type);
  if (!type?.note || body.reason_code?.trim().toUpperCase() !== "ANU") return null;
  for (const [i, ref] of (body.billing_reference ?? []).entries()) {
    const refType = findDocumentType(ref.invoice_type)?.code;
    const folio = String(ref.number);
    if (!refType || !/^\d+$/.test(folio)) continue;
    const found = await findByFolio(env, companyId, refType, Number(folio));
    if (!found) continue; // not ours: the SII validates it
    const { row: original, db } = found;
    const field = `billing_reference[${i}]`;
    if (refType === 52) {
      throw new AppError("INVOICE_NOT_CANCELLABLE", `Document ${original.id} is a guía de despacho (52), which is not cancelled with a note.`, [{ field, message: "Type 52 is not cancellable" }]);
    }
    if (!type.mayModify.includes(refType)) {
      const right = Object.values(DOCUMENT_TYPES).filter((t) => t.note === type.note && t.mayModify.includes(refType)).map((t) => `${t.code} (${t.mnemonic})`);
      throw new AppError(
        "INVOICE_CANCELLATION_TYPE_MISMATCH",
        `A ${type.code} (${type.mnemonic}) cannot cancel a ${refType}${right.length ? `; use ${right.join(" or ")}` : ""}.`,
        [{ field: "invoice_type", message: `Cannot cancel type ${refType}` }],
      );
    }
    if (original.status === "REJECTED" || original.status === "FAILED") {
      throw new AppError("INVOICE_NOT_CANCELLABLE", `Document ${original.id} (${refType} N° ${original.folio}) was ${original.status.toLowerCase()}: there is nothing to cancel.`, [
        { field, message: `Referenced document is ${original.status}` },
      ]);
    }
    const existing = await db.query.cancellations.findFirst({ where: eq(cancellations.cancelledInvoiceId, original.id) });
    if (existing) {
      throw new AppError("INVOICE_ALREADY_CANCELLED", `Document ${original.id} (${refType} N° ${original.folio}) is already cancelled by ${existing.creditNoteId}.`, [
        { field, message: "Already cancelled" },
      ]);
    }
    return original;
  }
  return null;
}

/**
 * Our document of a type and folio, and the database of its partition (where its cancellation is
 * kept): the company's partitions are asked newest first (a folio is unique per company and type).
 */
async function findByFolio(env: Env, companyId: string, type: number, folio: number): Promise<{ row: InvoiceRow; db: Db } | null> {
  for (const p of await partitionsWithLegacy(env, companyId, "documents")) {
    const row = await p.db.query.invoices.findFirst({ where: and(eq(invoices.companyId, companyId), eq(invoices.documentType, type), eq(invoices.folio, folio)) });
    if (row) return { row, db: p.db };
  }
  return null;
}

/**
 * Why a guarded insert (below) stored nothing, with the precise error: the external reference is
 * taken, no active and current certificate, or no CAF loaded for the type. Runs only on that path.
 */
async function explainRefusal(db: Db, companyId: string, type: number, externalReference: string | undefined, now: Date) {
  const [dup, cert, caf] = await db.batch([
    db.select({ id: invoices.id }).from(invoices).where(and(eq(invoices.companyId, companyId), externalReference ? eq(invoices.externalReference, externalReference) : sql`0`, ne(invoices.status, "FAILED"))).limit(1),
    db.select().from(certificates).where(and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED"))).limit(1),
    db.select({ id: cafs.id }).from(cafs).where(and(eq(cafs.companyId, companyId), eq(cafs.documentType, type), eq(cafs.active, true))).limit(1),
  ]);
  if (externalReference && dup[0]) {
    throw new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${externalReference} is already document ${dup[0].id}.`, [
      { field: "external_reference", message: `Already used by ${dup[0].id}` },
    ]);
  }
  const row = cert[0];
  if (!row) throw new AppError("CERTIFICATE_REQUIRED", "The company has no active signing certificate: upload a .pfx to /certificates first. No folio was used.");
  const validity = validityOf(row, now);
  if (validity !== "VALID") {
    throw new AppError("CERTIFICATE_REQUIRED", validity === "EXPIRED" ? `The active certificate expired on ${row.validTo}: upload a current one. No folio was used.` : `The active certificate is valid only from ${row.validFrom}.`);
  }
  if (!caf[0]) {
    throw new AppError("INVOICE_NO_FOLIOS", `No CAF is loaded for document type ${type}: upload one (/enumeration/upload) or request one (/enumeration/refetch).`);
  }
}

/**
 * Why the allocator refused the document its folio reservation (issue 18): it keeps at most as
 * many reservations as folios left, so exhaustion is refused at POST, synchronously, instead of a
 * document accepted now and FAILED later; it also checks the issue date against the CAF's
 * authorisation date. (The pipeline's allocation turns a reservation into the folio.)
 */
async function refuseReservation(db: Db, companyId: string, doc: ComputedDocument, reservation: Extract<ReserveResult, { ok: false }>, externalReference: string | undefined, now: Date): Promise<never> {
  if (reservation.reason === "BEFORE_AUTHORIZATION") refuseBeforeAuthorization(doc.issueDate, reservation.authorizedAt!);
  // A missing certificate or CAF is the more useful answer than "every folio is used".
  await explainRefusal(db, companyId, doc.type.code, externalReference, now);
  throw new AppError("INVOICE_NO_FOLIOS", `No folio of document type ${doc.type.code} is left for this document: ${reservation.message}. Load a new CAF.`);
}

/** What the POST checks read from D1 besides the document: the active certificate and the company's SII resolution. */
async function issueContext(db: Db, companyId: string) {
  const [[cert], [settings]] = await db.batch([
    db.select({ validFrom: certificates.validFrom, validTo: certificates.validTo }).from(certificates).where(and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED"))).limit(1),
    db.select({ siiResolutionNumber: companySettings.siiResolutionNumber, siiResolutionDate: companySettings.siiResolutionDate }).from(companySettings).where(eq(companySettings.companyId, companyId)).limit(1),
  ]);
  return { cert, resolution: resolutionOf(settings) };
}

/**
 * The document row inserted only when the company has an active, current certificate and a CAF
 * loaded for the type (INSERT … SELECT … WHERE EXISTS): the checks and the write are one statement.
 */
function guardedInsert(db: Db, row: InvoiceRow, now: string) {
  const columns = getTableColumns(invoices);
  const values = Object.fromEntries(Object.keys(columns).map((k) => [k, sql`${row[k as keyof InvoiceRow]}`.as(columns[k as keyof typeof columns].name)]));
  return db
    .insert(invoices)
    .select(
      db
        .select(values as { [K in keyof typeof columns]: SQL.Aliased })
        .from(certificates)
        .where(
          and(
            eq(certificates.companyId, row.companyId),
            eq(certificates.active, true),
            eq(certificates.status, "STORED"),
            lte(certificates.validFrom, now),
            gte(certificates.validTo, now),
            exists(db.select({ one: sql`1` }).from(cafs).where(and(eq(cafs.companyId, row.companyId), eq(cafs.documentType, row.documentType), eq(cafs.active, true)))),
          ),
        )
        .limit(1),
    )
    .returning({ id: invoices.id });
}

/**
 * An issue date after tomorrow in every time zone (UTC today + 1 day) is refused: a document dated in
 * the future cannot be issued now (issue 18). A day of slack covers every company time zone.
 */
function assertNotFuture(issueDate: string, now: Date) {
  const latest = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);
  if (issueDate > latest) {
    const message = `invoice_date ${issueDate} is in the future (latest accepted: ${latest})`;
    throw new AppError("INVOICE_INVALID_DATE", message, [{ field: "invoice_date", message }]);
  }
}

export const RECEIVED_MESSAGE = "Received; queued for folio assignment, signature and sending";

/**
 * POST /invoices: validates everything that can be known now (body, amounts, the SII's document
 * rules, issuer, certificate, resolution, cancellation rules), reserves the right to a folio, stores
 * the document as RECEIVED and enqueues it. Nothing is signed and no folio number is taken here:
 * the pipeline does that, exactly once, from the reservation.
 */
export async function issueInvoice(db: Db, env: Env, company: CompanyRow, body: InvoiceInput, requestId: string, now = new Date()): Promise<InvoiceRow> {
  const target = await cancellationTarget(env, company.id, body);
  const doc = computeOrThrow(body);
  checkSiiRules(doc);
  assertCancellationAmount(target, formatAmount(doc, doc.totals.total));
  assertNotFuture(doc.issueDate, now);
  if (company.country !== "CHL" || doc.issuer.rut !== company.taxId) {
    throw new AppError("INVOICE_ISSUER_MISMATCH", `issuer.document_number (${doc.issuer.rut}) is not this company's tax id (${company.taxId}).`, [
      { field: "issuer.document_number", message: `Expected ${company.taxId}` },
    ]);
  }
  const id = newId("inv");
  const folios = allocator(env, company.id, doc.type.code);
  // The D1 reads and the reservation at once (one round trip's latency); a refusal gives it back.
  const [{ cert, resolution }, reservation] = await Promise.all([issueContext(db, company.id), folios.reserve(id, { issueDate: doc.issueDate })]);
  let claimed = false;
  try {
    assertIssueDateInCertificate(cert, doc.issueDate);
    assertResolution(resolution, body);
    if (!reservation.ok) await refuseReservation(db, company.id, doc, reservation, body.external_reference, now);
    if (body.external_reference) claimed = await claimExternalReference(db, env, company.id, body.external_reference, id);
    return await storeAndEnqueue(db, env, company, body, doc, target, id, requestId, now);
  } catch (e) {
    // Not stored: the reservation and the reference go back (a crash here leaves the reservation to
    // lapse after a day and the reference to be taken over: its holder was never stored).
    if (reservation.ok) await folios.release(id).catch(() => undefined);
    if (claimed) await releaseReference(env, company.id, body.external_reference!, id).catch(() => undefined);
    throw e;
  }
}

/**
 * Claims `external_reference` for the new document in the company's index store (unique across its
 * partitions, issue 16), or refuses it naming the document that holds it. A holder that FAILED or
 * was never stored no longer holds it. The partial unique index on the document rows stays as a
 * second guard (and catches references of documents made before the claims existed).
 */
async function claimExternalReference(db: Db, env: Env, companyId: string, reference: string, id: string): Promise<true> {
  const holds = async (holderId: string) => {
    const [holder] = await db.select({ status: invoices.status }).from(invoices).where(eq(invoices.id, holderId));
    return holder !== undefined && holder.status !== "FAILED";
  };
  const claim = await claimReference(env, companyId, reference, id, holds);
  if (claim.ok) return true;
  throw new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${reference} is already document ${claim.holder}.`, [
    { field: "external_reference", message: `Already used by ${claim.holder}` },
  ]);
}

/** Stores the document (RECEIVED), its first history row and the cancellation it holds, then enqueues it. */
async function storeAndEnqueue(db: Db, env: Env, company: CompanyRow, body: InvoiceInput, doc: ComputedDocument, target: InvoiceRow | null, id: string, requestId: string, now: Date): Promise<InvoiceRow> {
  const eventId = newId("evt");
  const at = now.toISOString();
  const row: InvoiceRow = {
    id,
    companyId: company.id,
    documentType: doc.type.code,
    status: "RECEIVED",
    fiscalStatus: null,
    fiscalMessage: null,
    folio: null,
    cafId: null,
    externalReference: body.external_reference ?? null,
    issueDate: doc.issueDate,
    recipientRut: doc.receiver.rut,
    recipientName: doc.receiver.legalName,
    currency: doc.currency.code,
    total: formatAmount(doc, doc.totals.total),
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
    createdAt: at,
    updatedAt: at,
  };
  for (let attempt = 0; ; attempt++) {
    let stored: { id: string }[];
    try {
      // One round trip: the guarded document row, then its first history row and the cancellation
      // it holds, both written only if the document row was.
      [stored] = await db.batch([
        guardedInsert(db, row, at),
        db.insert(invoiceEvents).select(
          db
            .select({ id: sql<string>`${eventId}`.as("id"), invoiceId: invoices.id, status: invoices.status, fiscalStatus: invoices.fiscalStatus, message: sql<string>`${RECEIVED_MESSAGE}`.as("message"), createdAt: invoices.createdAt })
            .from(invoices)
            .where(eq(invoices.id, id)),
        ),
        ...(target
          ? [db.insert(cancellations).select(db.select({ cancelledInvoiceId: sql<string>`${target.id}`.as("cancelled_invoice_id"), creditNoteId: invoices.id, createdAt: invoices.createdAt }).from(invoices).where(eq(invoices.id, id)))]
          : []),
      ]);
    } catch (e) {
      const columns = uniqueViolation(e) ?? "";
      if (columns.startsWith("cancellations.")) throw new AppError("INVOICE_ALREADY_CANCELLED", `Document ${target!.id} is already being cancelled by another note.`);
      if (columns === "invoices.company_id, invoices.external_reference") {
        await explainRefusal(db, company.id, doc.type.code, body.external_reference, now);
        throw new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${body.external_reference} is already used.`, [{ field: "external_reference", message: "Already used" }]);
      }
      throw e;
    }
    if (stored.length === 1) break;
    await explainRefusal(db, company.id, doc.type.code, body.external_reference, now);
    // The refusal had no cause any more (a certificate or CAF arrived meanwhile): try once more.
    if (attempt === 1) throw new AppError("CERTIFICATE_REQUIRED", "The company's certificate or CAF changed while the document was being stored; send it again. No folio was used.");
  }
  try {
    await enqueueInvoice(env, { invoiceId: id, companyId: company.id, requestId });
  } catch (e) {
    // The document is stored; the cron sweep re-drives RECEIVED documents that were never queued.
    log("error", "enqueue failed; the sweep will re-drive", { request_id: requestId, invoice_id: id, error: String(e) });
  }
  return row;
}
