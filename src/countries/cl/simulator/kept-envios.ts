/**
 * The signed EnvioDTEs the simulated SII accepted, kept as they came (one R2 object per envelope,
 * under a key built from the track id only), so the register can hand out each document's signed
 * DTE to its recipient (GET /simulator/sii/reception/document). The real SII keeps them too but
 * hands them to nobody: there the XML reaches the recipient only by the issuer's e-mail (see
 * src/countries/cl/sii/reception.ts).
 */
import { verifyInbound, xmlDocumentBytes } from "..";

export const keptEnvioKey = (trackId: number) => `simulator/envios/${trackId}.xml`;

export async function keepEnvio(files: R2Bucket, trackId: number, bytes: Uint8Array): Promise<void> {
  await files.put(keptEnvioKey(trackId), bytes, { httpMetadata: { contentType: "application/xml" } });
}

/**
 * The signed DTE of type/folio of an envelope, as the one parse of the envelope verified it (its
 * canonical form with its own namespace declarations, behind an XML declaration): never a slice
 * found by searching the text.
 */
export async function dteOfEnvelope(envelope: Uint8Array, type: number, folio: number): Promise<Uint8Array | null> {
  const report = await verifyInbound(envelope, { mode: "simulator" });
  const dte = report.documents.find((d) => d.documentType === type && d.folio === folio);
  return dte ? xmlDocumentBytes(dte.xml).bytes : null;
}
