import { and, eq, inArray, isNull } from "drizzle-orm";
import { parseCaf, type Caf } from "../countries/cl/caf";
import { findDocumentType } from "../countries/cl/document-types";
import { buildSignedDte, type SignedDte } from "../countries/cl/dte";
import { buildEnvioBoleta, buildEnvioDte } from "../countries/cl/envelopes";
import { isEngineError } from "../countries/cl/errors";
import { computeDocument, type InvoiceInput } from "../countries/cl/invoice";
import type { SigningCredentials } from "../countries/cl/certificate";
import { decodeLatin1 } from "../countries/cl/xml";
import type { Db } from "../db/client";
import { cafs, cancellations, certificates, companies, companySettings, envelopes, invoices } from "../db/schema";
import { requireSigningCredentials } from "../domain/certificates/certificates";
import { DomainError } from "../domain/errors";
import { allocator } from "../domain/folios/cafs";
import { transition, transitionMany, type InvoiceRow } from "../domain/invoices/state";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { toLocalDateTime } from "../lib/time";
import { documentKeys } from "../storage/keys";
import type { DocumentKey, TaxAuthority } from "../countries/port";

export interface StepDeps {
  db: Db;
  env: Env;
  authority: TaxAuthority;
  now: () => Date;
}

/** A problem that will not go away by retrying: the document ends FAILED with the reason. */
export class TerminalStepError extends Error {}
/** A problem worth waiting for (tax authority down, certificate being replaced...). */
export class RetryableStepError extends Error {}

// ---------------------------------------------------------------------------------------------
// Per-isolate caches of the expensive parses (the .pfx opening and the CAF key import).

const credentialCache = new Map<string, Promise<SigningCredentials & { certificateId: string }>>();

/**
 * The company's signing credentials. Opening a .pfx is slow, so credentials are cached per isolate
 * by certificate id; the active certificate is looked up each time, so a newly uploaded or
 * activated certificate is used at once.
 */
export async function signerFor(deps: StepDeps, companyId: string): Promise<SigningCredentials & { certificateId: string }> {
  const active = await deps.db.query.certificates.findFirst({
    columns: { id: true },
    where: and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED")),
  });
  const cached = active ? credentialCache.get(active.id) : undefined;
  if (cached) {
    const creds = await cached;
    if (creds.notAfter.getTime() > deps.now().getTime()) return creds;
  }
  const pending = requireSigningCredentials(deps.db, deps.env, companyId, deps.now());
  try {
    const creds = await pending;
    credentialCache.set(creds.certificateId, pending);
    return creds;
  } catch (e) {
    if (e instanceof DomainError) throw new RetryableStepError(e.message);
    throw e;
  }
}

const cafCache = new Map<string, Promise<Caf>>();
async function cafFor(deps: StepDeps, cafId: string): Promise<Caf> {
  let p = cafCache.get(cafId);
  if (!p) {
    p = (async () => {
      const row = await deps.db.query.cafs.findFirst({ where: eq(cafs.id, cafId) });
      if (!row) throw new TerminalStepError(`CAF ${cafId} is not on record`);
      const object = await deps.env.FILES.get(row.fileKey);
      if (!object) throw new TerminalStepError(`CAF file of ${cafId} is missing`);
      return parseCaf(new Uint8Array(await object.arrayBuffer()), { mode: deps.env.SII_MODE === "simulator" ? "simulator" : "sii" });
    })();
    cafCache.set(cafId, p);
    p.catch(() => cafCache.delete(cafId));
  }
  return p;
}

const contexts = new WeakMap<StepDeps, Map<string, ReturnType<typeof loadCompanyContext>>>();

/** Company and time zone, read once per consumer batch. */
function companyContext(deps: StepDeps, companyId: string) {
  let perBatch = contexts.get(deps);
  if (!perBatch) contexts.set(deps, (perBatch = new Map()));
  let ctx = perBatch.get(companyId);
  if (!ctx) perBatch.set(companyId, (ctx = loadCompanyContext(deps, companyId)));
  return ctx;
}

async function loadCompanyContext(deps: StepDeps, companyId: string) {
  const company = await deps.db.query.companies.findFirst({ where: eq(companies.id, companyId) });
  const settings = await deps.db.query.companySettings.findFirst({ where: eq(companySettings.companyId, companyId) });
  if (!company) throw new TerminalStepError(`company ${companyId} not found`);
  return { company, timeZone: settings?.timeZone ?? "America/Santiago" };
}

async function releaseCancellation(deps: StepDeps, inv: InvoiceRow) {
  if (inv.cancelsInvoiceId) {
    await deps.db.delete(cancellations).where(and(eq(cancellations.cancelledInvoiceId, inv.cancelsInvoiceId), eq(cancellations.creditNoteId, inv.id)));
  }
}

/** Ends a document FAILED (terminal); a cancellation it held is released. */
export async function fail(deps: StepDeps, inv: InvoiceRow, reason: string): Promise<InvoiceRow | null> {
  const done = await transition(deps.db, inv.id, ["RECEIVED", "GENERATED", "SIGNED"], { status: "FAILED", fiscalMessage: reason, lastError: reason }, reason);
  if (done) await releaseCancellation(deps, inv);
  return done;
}

// ---------------------------------------------------------------------------------------------
// Step 1: RECEIVED -> GENERATED. The folio comes from the allocator keyed by the document id, so a
// repeated or concurrent delivery gets the same folio and no folio is ever taken twice.

export type Allocation = Awaited<ReturnType<ReturnType<typeof allocator>["allocate"]>>;

/**
 * Folios for several RECEIVED documents of one company and type in one call to their allocator
 * (one critical section there; the same keyed-by-document semantics as `allocate`).
 */
export async function allocateFolios(deps: StepDeps, companyId: string, documentType: number, invoiceIds: string[]): Promise<Map<string, Allocation>> {
  const results = await allocator(deps.env, companyId, documentType).allocateMany(invoiceIds);
  return new Map(invoiceIds.map((id, i) => [id, results[i]! as Allocation]));
}

export async function assignFolio(deps: StepDeps, inv: InvoiceRow, preallocated?: Allocation): Promise<InvoiceRow> {
  if (inv.status !== "RECEIVED") return inv;
  const result = preallocated ?? (await allocator(deps.env, inv.companyId, inv.documentType).allocate(inv.id));
  if (!result.ok) {
    const why =
      result.reason === "EXHAUSTED" || result.reason === "NO_RANGES"
        ? `No folio left for document type ${inv.documentType}: load a new CAF and issue the document again.`
        : result.reason === "EXPIRED"
          ? `The CAF folios of document type ${inv.documentType} expired: load a new CAF and issue the document again.`
          : result.message;
    await fail(deps, inv, why);
    throw new TerminalStepError(why);
  }
  const { timeZone } = await companyContext(deps, inv.companyId);
  const stampedAt = toLocalDateTime(deps.now(), timeZone);
  const moved = await transition(
    deps.db,
    inv.id,
    ["RECEIVED"],
    { status: "GENERATED", folio: result.folio, cafId: result.cafId, stampedAt },
    `Folio ${result.folio} assigned`,
  );
  return moved ?? (await reload(deps, inv.id));
}

// ---------------------------------------------------------------------------------------------
// Step 2: GENERATED -> SIGNED. Build, stamp (TED) and sign; the XML goes to R2 before the state
// changes. Rebuilding gives the same bytes (fixed stamp time, deterministic RSA), so a retry after
// a crash rewrites an identical object.

export async function signDocument(deps: StepDeps, inv: InvoiceRow): Promise<InvoiceRow> {
  if (inv.status !== "GENERATED") return inv;
  const signer = await signerFor(deps, inv.companyId);
  const caf = await cafFor(deps, inv.cafId!);
  let dte: SignedDte;
  try {
    const doc = computeDocument(JSON.parse(inv.body) as InvoiceInput);
    dte = await buildSignedDte({ document: doc, folio: inv.folio!, caf, signer, timestamp: inv.stampedAt! });
  } catch (e) {
    if (isEngineError(e)) {
      // The folio was assigned: record it as annulled so the range's accounting stays exact.
      await allocator(deps.env, inv.companyId, inv.documentType).annul(inv.folio!, { reason: `document ${inv.id} could not be generated` });
      const why = `The document could not be generated: ${e.message}. Folio ${inv.folio} was annulled.`;
      await fail(deps, inv, why);
      throw new TerminalStepError(why);
    }
    throw e;
  }
  const key = documentKeys.invoiceXml(inv.companyId, inv.id);
  await deps.env.FILES.put(key, dte.xml, { httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" } });
  const moved = await transition(deps.db, inv.id, ["GENERATED"], { status: "SIGNED", xmlKey: key }, `Stamped and signed as ${dte.id}`);
  return moved ?? (await reload(deps, inv.id));
}

// ---------------------------------------------------------------------------------------------
// Step 3: SIGNED -> SENT, in envelopes. Documents are first claimed by an envelope id (conditional
// update), the envelope XML is stored, then uploaded. A retry re-uploads the same stored bytes; the
// tax authority answers a repeated file with its original track id.

function storedDte(inv: InvoiceRow, xmlBytes: Uint8Array, issuerRut: string): SignedDte {
  const xmlString = decodeLatin1(xmlBytes);
  const element = xmlString.replace(/^<\?xml[^>]*\?>\s*/, "");
  const type = findDocumentType(inv.documentType)!;
  return {
    id: /<(?:Documento|Exportaciones|Liquidacion) ID="([^"]+)"/.exec(element)?.[1] ?? `F${inv.folio}T${inv.documentType}`,
    documentType: inv.documentType,
    folio: inv.folio!,
    issuerRut,
    receiverRut: inv.recipientRut,
    issueDate: inv.issueDate,
    total: inv.total,
    element,
    xmlString,
    xml: xmlBytes,
    envelope: type.envelope,
  } as unknown as SignedDte;
}

/** Groups this company's SIGNED, unclaimed documents of one envelope family under a new envelope. */
export async function claimEnvelope(deps: StepDeps, companyId: string, invoiceIds: string[]): Promise<string | null> {
  if (invoiceIds.length === 0) return null;
  const envelopeId = newId("env");
  const claimed: { id: string }[] = [];
  for (let i = 0; i < invoiceIds.length; i += 90) {
    const chunk = invoiceIds.slice(i, i + 90);
    claimed.push(
      ...(await deps.db
        .update(invoices)
        .set({ envelopeId, updatedAt: deps.now().toISOString() })
        .where(and(inArray(invoices.id, chunk), eq(invoices.companyId, companyId), eq(invoices.status, "SIGNED"), isNull(invoices.envelopeId)))
        .returning({ id: invoices.id })),
    );
  }
  return claimed.length > 0 ? envelopeId : null;
}

export async function sendEnvelope(deps: StepDeps, companyId: string, envelopeId: string): Promise<{ trackId: string; documents: number } | null> {
  const members = await deps.db.select().from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.companyId, companyId)));
  const pending = members.filter((m) => m.status === "SIGNED");
  if (pending.length === 0) return null;
  const { company, timeZone } = await companyContext(deps, companyId);
  const signer = await signerFor(deps, companyId);
  const existing = await deps.db.query.envelopes.findFirst({ where: eq(envelopes.id, envelopeId) });
  const kind = findDocumentType(pending[0]!.documentType)!.envelope;
  let xml: Uint8Array | null = null;
  if (existing) {
    // Re-upload the stored bytes (the SII answers a repeated file with its track id), unless the
    // certificate changed since it was signed: RutEnvia and the signature must be the new holder's.
    const object = await deps.env.FILES.get(existing.xmlKey);
    if (object && object.customMetadata?.certificateId === signer.certificateId) xml = new Uint8Array(await object.arrayBuffer());
  }
  if (!xml) {
    const dtes: SignedDte[] = [];
    for (const m of pending) {
      const object = await deps.env.FILES.get(m.xmlKey!);
      if (!object) throw new TerminalStepError(`signed XML of ${m.id} missing`);
      dtes.push(storedDte(m, new Uint8Array(await object.arrayBuffer()), company.taxId));
    }
    const body = JSON.parse(pending[0]!.body) as InvoiceInput;
    const tax = body.issuer.tax_information;
    const resolution = {
      date: tax?.resolution_date ?? company.startActivitiesDate ?? "2014-01-01",
      number: tax?.resolution_number ?? 0,
    };
    const params = {
      dtes,
      issuerRut: company.taxId,
      senderRut: signer.rut ?? company.taxId,
      resolution,
      timestamp: toLocalDateTime(deps.now(), timeZone),
      signer,
      setId: `SetDoc`,
    };
    const built = kind === "EnvioBOLETA" ? await buildEnvioBoleta(params) : await buildEnvioDte(params);
    xml = built.xml;
    const xmlKey = documentKeys.envelopeXml(companyId, envelopeId);
    await deps.env.FILES.put(xmlKey, xml, {
      httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" },
      customMetadata: { certificateId: signer.certificateId },
    });
    await deps.db
      .insert(envelopes)
      .values({ id: envelopeId, companyId, kind, xmlKey, documentCount: pending.length, status: "PREPARED", createdAt: deps.now().toISOString(), updatedAt: deps.now().toISOString() })
      .onConflictDoNothing();
  }
  const result = await deps.authority.upload({ kind, xml, companyRut: company.taxId, signer, fileName: `${envelopeId}.xml` });
  await deps.db.update(envelopes).set({ status: "SENT", trackId: result.trackId, updatedAt: deps.now().toISOString() }).where(eq(envelopes.id, envelopeId));
  const note = `Sent to the SII in envelope ${envelopeId}, track id ${result.trackId}${result.duplicate ? " (the SII already had this file)" : ""}`;
  await transitionMany(deps.db, pending.map((m) => m.id), ["SIGNED"], { status: "SENT", trackId: result.trackId, lastError: null }, note);
  return { trackId: result.trackId, documents: pending.length };
}

// ---------------------------------------------------------------------------------------------
// Step 4: SENT -> final. Polls the envelope; a final verdict moves every document.

export async function pollEnvelope(deps: StepDeps, envelopeId: string): Promise<"PENDING" | "DONE" | "GONE"> {
  const envelope = await deps.db.query.envelopes.findFirst({ where: eq(envelopes.id, envelopeId) });
  if (!envelope || envelope.status === "DONE") return "GONE";
  if (!envelope.trackId) return "GONE";
  const members = await deps.db.select().from(invoices).where(eq(invoices.envelopeId, envelopeId));
  const open = members.filter((m) => m.status === "SENT");
  if (open.length === 0) {
    await deps.db.update(envelopes).set({ status: "DONE", updatedAt: deps.now().toISOString() }).where(eq(envelopes.id, envelopeId));
    return "DONE";
  }
  const { company } = await companyContext(deps, envelope.companyId);
  const signer = await signerFor(deps, envelope.companyId);
  const documents: DocumentKey[] = open.map((m) => ({
    invoiceId: m.id,
    documentType: m.documentType,
    folio: m.folio!,
    issueDate: m.issueDate,
    total: m.total,
    receiverRut: m.recipientRut,
  }));
  const verdict = await deps.authority.poll({ kind: envelope.kind, trackId: envelope.trackId, companyRut: company.taxId, signer, documents });
  await deps.db
    .update(envelopes)
    .set({ siiStatus: verdict.fiscalStatus, polls: envelope.polls + 1, updatedAt: deps.now().toISOString() })
    .where(eq(envelopes.id, envelopeId));
  if (!verdict.final) {
    const changed = open.filter((m) => m.fiscalStatus !== verdict.fiscalStatus).map((m) => m.id);
    await transitionMany(deps.db, changed, ["SENT"], { fiscalStatus: verdict.fiscalStatus, fiscalMessage: verdict.message }, verdict.message);
    return "PENDING";
  }
  // Documents with the same verdict move together.
  const groups = new Map<string, { v: { outcome: InvoiceRow["status"]; fiscalStatus: string; message: string }; rows: InvoiceRow[] }>();
  for (const m of open) {
    const v = verdict.documents.get(m.id) ?? { outcome: "REJECTED" as const, fiscalStatus: verdict.fiscalStatus, message: verdict.message };
    const k = `${v.outcome}|${v.fiscalStatus}|${v.message}`;
    groups.set(k, { v, rows: [...(groups.get(k)?.rows ?? []), m] });
  }
  for (const { v, rows } of groups.values()) {
    const moved = new Set(await transitionMany(deps.db, rows.map((r) => r.id), ["SENT"], { status: v.outcome, fiscalStatus: v.fiscalStatus, fiscalMessage: v.message, lastError: null }, v.message));
    if (v.outcome === "REJECTED") for (const r of rows) if (moved.has(r.id)) await releaseCancellation(deps, r);
  }
  await deps.db.update(envelopes).set({ status: "DONE", updatedAt: deps.now().toISOString() }).where(eq(envelopes.id, envelopeId));
  return "DONE";
}

export async function reload(deps: StepDeps, id: string): Promise<InvoiceRow> {
  const row = await deps.db.query.invoices.findFirst({ where: eq(invoices.id, id) });
  if (!row) throw new TerminalStepError(`invoice ${id} not found`);
  return row;
}

