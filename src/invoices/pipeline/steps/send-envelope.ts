import { and, eq, inArray, isNull } from "drizzle-orm";
import type { EnvelopeKind, SignedDocument } from "../../../countries/port";
import { issuingCountry } from "../../../countries";
import { envelopes, invoices } from "../../../storage/db/schema";
import { MOVES, envelopeTransition } from "../../state";
import { storedDte } from "../../stored-dte";
import { toLocalDateTime } from "../../../lib/time";
import { documentKeys } from "../../../storage/keys";
import { readDocumentXml } from "../../stored-xml";
import { type StepDeps, newEnvelopeId, authorityOf, TerminalStepError, signerFor, type CompanyContext, type Signer, companyContext } from "./context";
import type { Prepared, StoredEnvelope } from "./sign";
import { chunked } from "../../../lib/chunked";
import { effectiveResolution } from "../../../accounts/companies/settings";

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

/** Groups this company's SIGNED, unclaimed documents of one envelope family under a new envelope. */
export async function claimEnvelope(deps: StepDeps, companyId: string, invoiceIds: string[]): Promise<string | null> {
  if (invoiceIds.length === 0) return null;
  const envelopeId = newEnvelopeId(deps);
  const claimed: { id: string }[] = [];
  for (const chunk of chunked(invoiceIds, 90)) {
    claimed.push(
      ...(await deps.store
        .update(invoices)
        .set({ envelopeId, updatedAt: deps.now().toISOString() })
        .where(and(inArray(invoices.id, chunk), eq(invoices.companyId, companyId), eq(invoices.status, "SIGNED"), isNull(invoices.envelopeId)))
        .returning({ id: invoices.id })),
    );
  }
  return claimed.length > 0 ? envelopeId : null;
}


/** Builds and signs the envelope of `dtes`, stores it in R2 (tagged with the certificate) and returns its bytes. */
export async function buildAndStoreEnvelope(
  deps: StepDeps,
  p: { company: CompanyContext["company"]; timeZone: string; signer: Signer; kind: EnvelopeKind; envelopeId: string; dtes: SignedDocument[]; firstBody: string },
): Promise<Uint8Array> {
  const body = JSON.parse(p.firstBody) as { issuer?: { tax_information?: { resolution_number?: string; resolution_date?: string } } };
  const tax = body.issuer?.tax_information;
  // The company's resolution (settings), read once per batch; the same in every envelope and PDF.
  const { settings } = await companyContext(deps, p.company.id);
  const xml = await issuingCountry().documents.envelope({
    documents: p.dtes,
    issuerRut: p.company.taxId,
    resolution: effectiveResolution(settings, tax, p.company.startActivitiesDate),
    timestamp: toLocalDateTime(deps.now(), p.timeZone),
    signer: p.signer,
  });
  await deps.env.FILES.put(documentKeys.envelopeXml(p.company.id, p.envelopeId), xml, {
    httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" },
    customMetadata: { certificateId: p.signer.certificateId },
  });
  return xml;
}

/** Uploads the envelope, then records its track id and moves its SIGNED documents to SENT, in one batch. */
async function uploadAndRecord(
  deps: StepDeps,
  p: { company: CompanyContext["company"]; signer: Signer; kind: EnvelopeKind; envelopeId: string; xml: Uint8Array; documents: number },
): Promise<{ trackId: string; documents: number }> {
  const result = await authorityOf(deps, p.company).upload({ kind: p.kind, xml: p.xml, companyRut: p.company.taxId, signer: p.signer, fileName: `${p.envelopeId}.xml` });
  const note = `Sent to the SII in envelope ${p.envelopeId}, track id ${result.trackId}${result.duplicate ? " (the SII already had this file)" : ""}`;
  await deps.store.batch([
    deps.store.update(envelopes).set({ status: "SENT", trackId: result.trackId, updatedAt: deps.now().toISOString() }).where(eq(envelopes.id, p.envelopeId)),
    ...envelopeTransition(deps.store, and(eq(invoices.envelopeId, p.envelopeId), eq(invoices.companyId, p.company.id)), MOVES.send, { trackId: result.trackId, lastError: null }, note),
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
  const [members, [existing]] = await deps.store.batch([
    deps.store.select().from(invoices).where(and(eq(invoices.envelopeId, envelopeId), eq(invoices.companyId, companyId))),
    deps.store.select().from(envelopes).where(eq(envelopes.id, envelopeId)).limit(1),
  ]);
  const pending = members.filter((m) => m.status === "SIGNED");
  if (pending.length === 0) return null;
  const { company, timeZone } = await companyContext(deps, companyId);
  const signer = await signerFor(deps, companyId);
  const kind = issuingCountry().documents.envelopeOf(pending[0]!.documentType);
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
    await deps.store
      .insert(envelopes)
      .values({ id: envelopeId, companyId, kind, xmlKey: documentKeys.envelopeXml(companyId, envelopeId), documentCount: pending.length, status: "PREPARED", createdAt: deps.now().toISOString(), updatedAt: deps.now().toISOString() })
      .onConflictDoNothing();
  }
  return uploadAndRecord(deps, { company, signer, kind, envelopeId, xml, documents: pending.length });
}
