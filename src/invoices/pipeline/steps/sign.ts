import { eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { EnvelopeKind, SignedDocument } from "../../../countries/port";
import { issuingCountry } from "../../../countries";
import { envelopes, invoices } from "../../../storage/db/schema";
import { allocator } from "../../../folios/cafs";
import { MOVES, signedTransitions, transition, type InvoiceRow } from "../../state";
import { toLocalDateTime } from "../../../lib/time";
import { documentKeys } from "../../../storage/keys";
import { inEnvelope } from "../../stored-xml";
import { type StepDeps, TerminalStepError, reload, signerFor, cafFor, releaseOnFailure, companyContext, type CompanyContext, type Signer } from "./context";
import type { Allocation } from "./assign-folio";
import { refuseFolio } from "./assign-folio";
import { buildAndStoreEnvelope } from "./send-envelope";

// ---------------------------------------------------------------------------------------------
// Step 2: GENERATED -> SIGNED. Build, stamp (TED) and sign; the XML goes to R2 before the state
// changes. Rebuilding gives the same bytes (fixed stamp time, deterministic RSA), so a retry after
// a crash rewrites an identical object.

export async function signDocument(deps: StepDeps, inv: InvoiceRow): Promise<InvoiceRow> {
  if (inv.status !== "GENERATED") return inv;
  const { dte, xmlKey } = await buildAndStore(deps, inv, inv.folio!, inv.cafId!, inv.stampedAt!);
  const moved = await transition(deps.store, inv.id, MOVES.sign, { xmlKey }, `Stamped and signed as ${dte.id}`);
  return moved ?? (await reload(deps, inv.id));
}

/**
 * Builds, stamps and signs the document with its folio and stores the XML in R2. An engine failure
 * is final: the folio is annulled (the range's accounting stays exact) and the document ends FAILED.
 */
async function buildAndStore(deps: StepDeps, inv: InvoiceRow, folio: number, cafId: string, stampedAt: string): Promise<{ dte: SignedDocument; xmlKey: string }> {
  const dte = await build(deps, inv, folio, cafId, stampedAt);
  const xmlKey = documentKeys.invoiceXml(inv.companyId, inv.id);
  await deps.env.FILES.put(xmlKey, dte.xml, { httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" } });
  return { dte, xmlKey };
}

async function build(deps: StepDeps, inv: InvoiceRow, folio: number, cafId: string, stampedAt: string): Promise<SignedDocument> {
  const signer = await signerFor(deps, inv.companyId);
  const caf = await cafFor(deps, inv.companyId, cafId);
  const { documents } = issuingCountry();
  let dte: SignedDocument;
  try {
    dte = await documents.sign({ body: JSON.parse(inv.body), folio, range: caf, signer, timestamp: stampedAt });
  } catch (e) {
    if (documents.isRefusal(e)) {
      await allocator(deps.env, inv.companyId, inv.documentType).annul(folio, { reason: `document ${inv.id} could not be generated` });
      const why = `The document could not be generated: ${e.message}. Folio ${folio} was annulled.`;
      const done = await transition(deps.store, inv.id, MOVES.failBuild, { folio, cafId, fiscalMessage: why, lastError: why }, why);
      if (done) await releaseOnFailure(deps, inv);
      throw new TerminalStepError(why);
    }
    throw e;
  }
  return dte;
}

/** A document built, stamped and signed in memory, not yet stored nor recorded. */
export interface Prepared {
  inv: InvoiceRow;
  dte: SignedDocument;
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
  const kind = issuingCountry().documents.envelopeOf(prepared[0]!.inv.documentType);
  const at = deps.now().toISOString();
  const statements: BatchItem<"sqlite">[] = [
    ...signedTransitions(
      deps.store,
      envelopeId,
      prepared.map((p) => ({ id: p.inv.id, folio: p.folio, cafId: p.cafId, stampedAt: p.stampedAt, xmlKey: inEnvelope(envelopeKey, p.dte.id) })),
    ),
    deps.store.insert(envelopes).select(
      deps.store
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
  const results = await deps.store.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  return prepared.filter((_, i) => (results[i] as unknown as { id: string }[]).length > 0);
}

/** An envelope built and stored for documents prepared in this batch, before they are recorded. */
export interface StoredEnvelope {
  envelopeId: string;
  company: CompanyContext["company"];
  timeZone: string;
  signer: Signer;
  kind: EnvelopeKind;
  xml: Uint8Array;
}

/**
 * Builds, signs and stores (R2) the envelope of documents prepared in this batch. It is also where
 * their signed XML lives, so it is written before they are recorded SIGNED.
 */
export async function storeEnvelope(deps: StepDeps, companyId: string, envelopeId: string, prepared: Prepared[]): Promise<StoredEnvelope> {
  const { company, timeZone } = await companyContext(deps, companyId);
  const signer = await signerFor(deps, companyId);
  const kind = issuingCountry().documents.envelopeOf(prepared[0]!.inv.documentType);
  const xml = await buildAndStoreEnvelope(deps, { company, timeZone, signer, kind, envelopeId, dtes: prepared.map((p) => p.dte), firstBody: prepared[0]!.inv.body });
  return { envelopeId, company, timeZone, signer, kind, xml };
}
