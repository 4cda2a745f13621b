import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { parseCaf, type Caf, findDocumentType, buildSignedDte, type SignedDte, buildEnvioBoleta, buildEnvioDte, isEngineError, computeDocument, type InvoiceInput, decodeLatin1 } from "../countries/cl";
import type { SigningCredentials } from "../countries/cl";
import type { Db } from "../db/client";
import { cafs, cancellations, certificates, companies, companySettings, envelopes, invoices } from "../db/schema";
import { requireSigningCredentials } from "../domain/certificates/certificates";
import { AppError } from "../errors";
import { allocator } from "../domain/folios/cafs";
import { envelopeTransition, signedTransitions, transition, type InvoiceRow } from "../domain/invoices/state";
import { newId } from "../lib/ids";
import { toLocalDateTime } from "../lib/time";
import { documentKeys } from "../storage/keys";
import { inEnvelope, readDocumentXml } from "../storage/documents";
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
  const active = await perBatch(deps, `certificate|${companyId}`, () =>
    deps.db.query.certificates.findFirst({
      columns: { id: true },
      where: and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED")),
    }),
  );
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
    if (e instanceof AppError) throw new RetryableStepError(e.message);
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

const batchMemo = new WeakMap<StepDeps, Map<string, Promise<unknown>>>();

/** A read done once per consumer batch (one StepDeps): company context, active certificate. */
function perBatch<T>(deps: StepDeps, key: string, load: () => Promise<T>): Promise<T> {
  let memo = batchMemo.get(deps);
  if (!memo) batchMemo.set(deps, (memo = new Map()));
  let p = memo.get(key) as Promise<T> | undefined;
  if (!p) {
    memo.set(key, (p = load()));
    p.catch(() => memo.delete(key));
  }
  return p;
}

/** Company and time zone, read once per consumer batch. */
function companyContext(deps: StepDeps, companyId: string) {
  return perBatch(deps, `company|${companyId}`, () => loadCompanyContext(deps, companyId));
}

async function loadCompanyContext(deps: StepDeps, companyId: string) {
  const [[company], [settings]] = await deps.db.batch([
    deps.db.select().from(companies).where(eq(companies.id, companyId)).limit(1),
    deps.db.select({ timeZone: companySettings.timeZone }).from(companySettings).where(eq(companySettings.companyId, companyId)).limit(1),
  ]);
  if (!company) throw new TerminalStepError(`company ${companyId} not found`);
  return { company, timeZone: settings?.timeZone ?? "America/Santiago" };
}

/**
 * Notes that ended FAILED or REJECTED no longer hold the documents they meant to cancel (a note
 * holds at most one, keyed by the note's id), so those can be cancelled again.
 */
export async function releaseCancellations(deps: StepDeps, creditNoteIds: string[]) {
  for (let i = 0; i < creditNoteIds.length; i += 90) {
    await deps.db.delete(cancellations).where(inArray(cancellations.creditNoteId, creditNoteIds.slice(i, i + 90)));
  }
}

async function releaseCancellation(deps: StepDeps, inv: InvoiceRow) {
  if (inv.cancelsInvoiceId) await releaseCancellations(deps, [inv.id]);
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

/** The allocator had no folio for the document: it ends FAILED with the reason. */
async function refuseFolio(deps: StepDeps, inv: InvoiceRow, result: Extract<Allocation, { ok: false }>): Promise<never> {
  const why =
    result.reason === "EXHAUSTED" || result.reason === "NO_RANGES"
      ? `No folio left for document type ${inv.documentType}: load a new CAF and issue the document again.`
      : result.reason === "EXPIRED"
        ? `The CAF folios of document type ${inv.documentType} expired: load a new CAF and issue the document again.`
        : result.message;
  await fail(deps, inv, why);
  throw new TerminalStepError(why);
}

export async function assignFolio(deps: StepDeps, inv: InvoiceRow, preallocated?: Allocation): Promise<InvoiceRow> {
  if (inv.status !== "RECEIVED") return inv;
  const result = preallocated ?? (await allocator(deps.env, inv.companyId, inv.documentType).allocate(inv.id));
  if (!result.ok) return refuseFolio(deps, inv, result);
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
  const { dte, xmlKey } = await buildAndStore(deps, inv, inv.folio!, inv.cafId!, inv.stampedAt!);
  const moved = await transition(deps.db, inv.id, ["GENERATED"], { status: "SIGNED", xmlKey }, `Stamped and signed as ${dte.id}`);
  return moved ?? (await reload(deps, inv.id));
}

/**
 * Builds, stamps and signs the document with its folio and stores the XML in R2. An engine failure
 * is final: the folio is annulled (the range's accounting stays exact) and the document ends FAILED.
 */
async function buildAndStore(deps: StepDeps, inv: InvoiceRow, folio: number, cafId: string, stampedAt: string): Promise<{ dte: SignedDte; xmlKey: string }> {
  const dte = await build(deps, inv, folio, cafId, stampedAt);
  const xmlKey = documentKeys.invoiceXml(inv.companyId, inv.id);
  await deps.env.FILES.put(xmlKey, dte.xml, { httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" } });
  return { dte, xmlKey };
}

async function build(deps: StepDeps, inv: InvoiceRow, folio: number, cafId: string, stampedAt: string): Promise<SignedDte> {
  const signer = await signerFor(deps, inv.companyId);
  const caf = await cafFor(deps, cafId);
  let dte: SignedDte;
  try {
    const doc = computeDocument(JSON.parse(inv.body) as InvoiceInput);
    dte = await buildSignedDte({ document: doc, folio, caf, signer, timestamp: stampedAt });
  } catch (e) {
    if (isEngineError(e)) {
      await allocator(deps.env, inv.companyId, inv.documentType).annul(folio, { reason: `document ${inv.id} could not be generated` });
      const why = `The document could not be generated: ${e.message}. Folio ${folio} was annulled.`;
      const done = await transition(deps.db, inv.id, ["RECEIVED", "GENERATED"], { status: "FAILED", folio, cafId, fiscalMessage: why, lastError: why }, why);
      if (done) await releaseCancellation(deps, inv);
      throw new TerminalStepError(why);
    }
    throw e;
  }
  return dte;
}

/** A document built, stamped and signed in memory, not yet stored nor recorded. */
export interface Prepared {
  inv: InvoiceRow;
  dte: SignedDte;
  folio: number;
  cafId: string;
  stampedAt: string;
}

/**
 * Steps 1 and 2 without a write: the folio (from the allocator, keyed by the document id, so a
 * retry after a crash gets the same one), the stamp and the signature. `sendPrepared` then stores
 * the documents of a batch inside their envelope and records them SIGNED together.
 */
export async function prepareDocument(deps: StepDeps, inv: InvoiceRow, preallocated?: Allocation): Promise<Prepared> {
  let folio: number, cafId: string, stampedAt: string;
  if (inv.status === "GENERATED") {
    [folio, cafId, stampedAt] = [inv.folio!, inv.cafId!, inv.stampedAt!];
  } else {
    const result = preallocated ?? (await allocator(deps.env, inv.companyId, inv.documentType).allocate(inv.id));
    if (!result.ok) return refuseFolio(deps, inv, result);
    const { timeZone } = await companyContext(deps, inv.companyId);
    [folio, cafId, stampedAt] = [result.folio, result.cafId, toLocalDateTime(deps.now(), timeZone)];
  }
  return { inv, dte: await build(deps, inv, folio, cafId, stampedAt), folio, cafId, stampedAt };
}

/**
 * Prepared documents of one company and envelope family, once their envelope is stored, move to
 * SIGNED in one D1 batch: their rows (folio, CAF, stamp time, XML key inside the envelope, envelope
 * id), the history of both steps and the envelope row. Returns the documents that moved (a
 * concurrent duplicate delivery may have moved some already; those are left to it).
 */
export async function recordSigned(deps: StepDeps, companyId: string, envelopeId: string, prepared: Prepared[]): Promise<Prepared[]> {
  const envelopeKey = documentKeys.envelopeXml(companyId, envelopeId);
  const kind = findDocumentType(prepared[0]!.inv.documentType)!.envelope;
  const at = deps.now().toISOString();
  const statements: BatchItem<"sqlite">[] = [
    ...signedTransitions(
      deps.db,
      envelopeId,
      prepared.map((p) => ({ id: p.inv.id, folio: p.folio, cafId: p.cafId, stampedAt: p.stampedAt, xmlKey: inEnvelope(envelopeKey, p.dte.id) })),
    ),
    deps.db.insert(envelopes).select(
      deps.db
        .select({
          id: sql<string>`${envelopeId}`.as("id"),
          companyId: sql<string>`${companyId}`.as("company_id"),
          kind: sql<string>`${kind}`.as("kind"),
          xmlKey: sql<string>`${envelopeKey}`.as("xml_key"),
          documentCount: sql<number>`count(*)`.as("document_count"),
          status: sql<string>`'PREPARED'`.as("status"),
          trackId: sql<null>`null`.as("track_id"),
          siiStatus: sql<null>`null`.as("sii_status"),
          polls: sql<number>`0`.as("polls"),
          createdAt: sql<string>`${at}`.as("created_at"),
          updatedAt: sql<string>`${at}`.as("updated_at"),
        })
        .from(invoices)
        .where(eq(invoices.envelopeId, envelopeId))
        .having(sql`count(*) > 0`),
    ),
  ];
  const results = await deps.db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return prepared.filter((_, i) => (results[i] as unknown as { id: string }[]).length > 0);
}

/** An envelope built and stored for documents prepared in this batch, before they are recorded. */
export interface StoredEnvelope {
  envelopeId: string;
  company: CompanyContext["company"];
  timeZone: string;
  signer: Signer;
  kind: "EnvioDTE" | "EnvioBOLETA";
  xml: Uint8Array;
}

/**
 * Builds, signs and stores (R2) the envelope of documents prepared in this batch. It is also where
 * their signed XML lives, so it is written before they are recorded SIGNED.
 */
export async function storeEnvelope(deps: StepDeps, companyId: string, envelopeId: string, prepared: Prepared[]): Promise<StoredEnvelope> {
  const { company, timeZone } = await companyContext(deps, companyId);
  const signer = await signerFor(deps, companyId);
  const kind = findDocumentType(prepared[0]!.inv.documentType)!.envelope;
  const xml = await buildAndStoreEnvelope(deps, { company, timeZone, signer, kind, envelopeId, dtes: prepared.map((p) => p.dte), firstBody: prepared[0]!.inv.body });
  return { envelopeId, company, timeZone, signer, kind, xml };
}

/**
 * Uploads a stored envelope. When a concurrent delivery took some of its documents, it is first
 * rebuilt with only the documents recorded in it (theirs stay in their own envelope).
 */
export async function sendPrepared(deps: StepDeps, stored: StoredEnvelope, prepared: Prepared[], moved: Prepared[]): Promise<{ trackId: string; documents: number }> {
  let xml = stored.xml;
  if (moved.length < prepared.length) {
    xml = await buildAndStoreEnvelope(deps, { ...stored, dtes: moved.map((p) => p.dte), firstBody: moved[0]!.inv.body });
  }
  return uploadAndRecord(deps, { company: stored.company, signer: stored.signer, kind: stored.kind, envelopeId: stored.envelopeId, xml, documents: moved.length });
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

type CompanyContext = Awaited<ReturnType<typeof loadCompanyContext>>;
type Signer = Awaited<ReturnType<typeof signerFor>>;

/** Builds and signs the envelope of `dtes`, stores it in R2 (tagged with the certificate) and returns its bytes. */
async function buildAndStoreEnvelope(
  deps: StepDeps,
  p: { company: CompanyContext["company"]; timeZone: string; signer: Signer; kind: "EnvioDTE" | "EnvioBOLETA"; envelopeId: string; dtes: SignedDte[]; firstBody: string },
): Promise<Uint8Array> {
  const body = JSON.parse(p.firstBody) as InvoiceInput;
  const tax = body.issuer.tax_information;
  const params = {
    dtes: p.dtes,
    issuerRut: p.company.taxId,
    senderRut: p.signer.rut ?? p.company.taxId,
    resolution: { date: tax?.resolution_date ?? p.company.startActivitiesDate ?? "2014-01-01", number: tax?.resolution_number ?? 0 },
    timestamp: toLocalDateTime(deps.now(), p.timeZone),
    signer: p.signer,
    setId: `SetDoc`,
  };
  const built = p.kind === "EnvioBOLETA" ? await buildEnvioBoleta(params) : await buildEnvioDte(params);
  await deps.env.FILES.put(documentKeys.envelopeXml(p.company.id, p.envelopeId), built.xml, {
    httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" },
    customMetadata: { certificateId: p.signer.certificateId },
  });
  return built.xml;
}

/** Uploads the envelope, then records its track id and moves its SIGNED documents to SENT, in one batch. */
async function uploadAndRecord(
  deps: StepDeps,
  p: { company: CompanyContext["company"]; signer: Signer; kind: "EnvioDTE" | "EnvioBOLETA"; envelopeId: string; xml: Uint8Array; documents: number },
): Promise<{ trackId: string; documents: number }> {
  const result = await deps.authority.upload({ kind: p.kind, xml: p.xml, companyRut: p.company.taxId, signer: p.signer, fileName: `${p.envelopeId}.xml` });
  const note = `Sent to the SII in envelope ${p.envelopeId}, track id ${result.trackId}${result.duplicate ? " (the SII already had this file)" : ""}`;
  await deps.db.batch([
    deps.db.update(envelopes).set({ status: "SENT", trackId: result.trackId, updatedAt: deps.now().toISOString() }).where(eq(envelopes.id, p.envelopeId)),
    ...envelopeTransition(deps.db, and(eq(invoices.envelopeId, p.envelopeId), eq(invoices.companyId, p.company.id)), ["SIGNED"], { status: "SENT", trackId: result.trackId, lastError: null }, note),
  ]);
  return { trackId: result.trackId, documents: p.documents };
}

/**
 * Sends (or re-sends) an envelope whose documents are recorded SIGNED: the retry path, and
 * documents signed by an earlier delivery. The stored envelope is re-uploaded as is (the SII
 * answers a repeated file with its track id) unless it is missing or the certificate changed
 * since it was signed (RutEnvia and the signature must be the new holder's); then it is rebuilt
 * from the documents' stored XML.
 */
export async function sendEnvelope(deps: StepDeps, companyId: string, envelopeId: string): Promise<{ trackId: string; documents: number } | null> {
  const [members, [existing]] = await deps.db.batch([
    deps.db.select().from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.companyId, companyId))),
    deps.db.select().from(envelopes).where(eq(envelopes.id, envelopeId)).limit(1),
  ]);
  const pending = members.filter((m) => m.status === "SIGNED");
  if (pending.length === 0) return null;
  const { company, timeZone } = await companyContext(deps, companyId);
  const signer = await signerFor(deps, companyId);
  const kind = findDocumentType(pending[0]!.documentType)!.envelope;
  let xml: Uint8Array | null = null;
  if (existing) {
    const object = await deps.env.FILES.get(existing.xmlKey);
    if (object && object.customMetadata?.certificateId === signer.certificateId) xml = new Uint8Array(await object.arrayBuffer());
  }
  if (!xml) {
    // Documents stored inside this very envelope are read from it once, before it is rewritten.
    const objects = new Map<string, Promise<Uint8Array | null>>();
    const dtes = await Promise.all(
      pending.map(async (m) => {
        const xml = await readDocumentXml(deps.env.FILES, m.xmlKey, objects);
        if (!xml) throw new TerminalStepError(`signed XML of ${m.id} missing`);
        return storedDte(m, xml, company.taxId);
      }),
    );
    xml = await buildAndStoreEnvelope(deps, { company, timeZone, signer, kind, envelopeId, dtes, firstBody: pending[0]!.body });
    await deps.db
      .insert(envelopes)
      .values({ id: envelopeId, companyId, kind, xmlKey: documentKeys.envelopeXml(companyId, envelopeId), documentCount: pending.length, status: "PREPARED", createdAt: deps.now().toISOString(), updatedAt: deps.now().toISOString() })
      .onConflictDoNothing();
  }
  return uploadAndRecord(deps, { company, signer, kind, envelopeId, xml, documents: pending.length });
}

// ---------------------------------------------------------------------------------------------
// Step 4: SENT -> final. Polls the envelope; a final verdict moves every document.

/** Polls an envelope once; `polls` is the number of polls made so far, to space the next one. */
export async function pollEnvelope(deps: StepDeps, envelopeId: string): Promise<{ state: "PENDING" | "DONE" | "GONE"; polls: number }> {
  const { db } = deps;
  // The envelope and its documents still SENT.
  const [[envelope], open] = await db.batch([
    db.select().from(envelopes).where(eq(envelopes.id, envelopeId)).limit(1),
    db.select().from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.status, "SENT"))),
  ]);
  if (!envelope || envelope.status === "DONE") return { state: "GONE", polls: envelope?.polls ?? 0 };
  if (!envelope.trackId) return { state: "GONE", polls: envelope?.polls ?? 0 };
  const at = () => deps.now().toISOString();
  if (open.length === 0) {
    await db.update(envelopes).set({ status: "DONE", updatedAt: at() }).where(eq(envelopes.id, envelopeId));
    return { state: "DONE", polls: envelope.polls + 1 };
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
  const mine = eq(invoices.envelopeId, envelopeId);
  if (!verdict.final) {
    // The envelope's progress (REC, SOK, FOK…) and, when it changed, its documents' fiscal status.
    await db.batch([
      db.update(envelopes).set({ siiStatus: verdict.fiscalStatus, polls: envelope.polls + 1, updatedAt: at() }).where(eq(envelopes.id, envelopeId)),
      ...envelopeTransition(db, mine, ["SENT"], { fiscalStatus: verdict.fiscalStatus, fiscalMessage: verdict.message }, verdict.message, sql`${invoices.fiscalStatus} IS NOT ${verdict.fiscalStatus}`),
    ]);
    return { state: "PENDING", polls: envelope.polls + 1 };
  }
  // Documents with the same verdict move together, in one batch with the envelope's end.
  const groups = new Map<string, { v: { outcome: InvoiceRow["status"]; fiscalStatus: string; message: string }; rows: InvoiceRow[] }>();
  for (const m of open) {
    const v = verdict.documents.get(m.id) ?? { outcome: "REJECTED" as const, fiscalStatus: verdict.fiscalStatus, message: verdict.message };
    const k = `${v.outcome}|${v.fiscalStatus}|${v.message}`;
    groups.set(k, { v, rows: [...(groups.get(k)?.rows ?? []), m] });
  }
  const verdicts = [...groups.values()];
  const single = verdicts.length === 1;
  const statements: BatchItem<"sqlite">[] = [
    db.update(envelopes).set({ siiStatus: verdict.fiscalStatus, polls: envelope.polls + 1, status: "DONE", updatedAt: at() }).where(eq(envelopes.id, envelopeId)),
  ];
  for (const { v, rows } of verdicts) {
    // One verdict for all (the usual case): select by envelope; otherwise by id, in chunks.
    const chunks = single ? [undefined] : Array.from({ length: Math.ceil(rows.length / 80) }, (_, i) => rows.slice(i * 80, i * 80 + 80).map((r) => r.id));
    for (const ids of chunks) {
      statements.push(...envelopeTransition(db, ids ? and(mine, inArray(invoices.id, ids)) : mine, ["SENT"], { status: v.outcome, fiscalStatus: v.fiscalStatus, fiscalMessage: v.message, lastError: null }, v.message));
    }
  }
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  // A rejected cancelling note no longer holds the document it meant to cancel.
  const moved = new Set(results.flatMap((r) => (Array.isArray(r) ? (r as { id?: string }[]).map((x) => x.id) : [])));
  const rejectedNotes = verdicts.filter((g) => g.v.outcome === "REJECTED").flatMap((g) => g.rows.filter((r) => r.cancelsInvoiceId && moved.has(r.id)).map((r) => r.id));
  await releaseCancellations(deps, rejectedNotes);
  return { state: "DONE", polls: envelope.polls + 1 };
}

export async function reload(deps: StepDeps, id: string): Promise<InvoiceRow> {
  const row = await deps.db.query.invoices.findFirst({ where: eq(invoices.id, id) });
  if (!row) throw new TerminalStepError(`invoice ${id} not found`);
  return row;
}

