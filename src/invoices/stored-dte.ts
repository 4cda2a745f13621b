import type { SignedDocument } from "../countries/port";
import { issuingCountry } from "../countries";
import type { InvoiceRow } from "./state";

/** A signed document as envelopes take it, from the document's stored XML (its own bytes, pasted verbatim). */
export function storedDte(inv: InvoiceRow, xmlBytes: Uint8Array, issuerRut: string): SignedDocument {
  return issuingCountry().documents.stored({
    documentType: inv.documentType,
    folio: inv.folio!,
    issuerRut,
    receiverRut: inv.recipientRut,
    issueDate: inv.issueDate,
    total: inv.total,
    xml: xmlBytes,
  });
}
