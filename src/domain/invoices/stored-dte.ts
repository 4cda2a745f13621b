import { decodeLatin1, findDocumentType, type SignedDte } from "../../countries/cl";
import type { InvoiceRow } from "./state";

/** A signed DTE as the engine's envelopes take it, from the document's stored XML (its own bytes, pasted verbatim). */
export function storedDte(inv: InvoiceRow, xmlBytes: Uint8Array, issuerRut: string): SignedDte {
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
