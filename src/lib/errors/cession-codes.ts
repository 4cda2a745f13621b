/**
 * Error codes of cessions (factoring): each rule checked when a cession is asked for, in words a
 * bookkeeper understands. Part of the one error table (./codes.ts).
 */
export const CESSION_ERRORS = {
  CESSION_TYPE_NOT_CEDIBLE: { status: 409, description: "Only facturas (33, 34), liquidaciones-factura (43) and facturas de compra (46) can be ceded through the SII's register; a boleta, a guía, a note or an export invoice cannot." },
  CESSION_DOCUMENT_NOT_ACCEPTED: { status: 409, description: "The SII has not accepted the document (it is still in the pipeline, or was rejected or failed): only a document the SII accepted can be ceded." },
  CESSION_DOCUMENT_CLAIMED: { status: 409, description: "The buyer claimed the document at the SII (RCD, RFP or RFT): a claimed factura cannot be ceded." },
  CESSION_DOCUMENT_CANCELLED: { status: 409, description: "A credit note cancels the document: there is no credit left to cede." },
  CESSION_RECEIPT_MISSING: { status: 409, description: "The buyer has not acknowledged receipt (ERM) or accepted (ACD) the document at the SII and its 8 days have not passed: the law lets a factura be ceded only once its receipt is on record." },
  CESSION_ALREADY_CEDED: { status: 409, description: "The document was already ceded (or a cession of it is on its way to the register): the register takes one cession per holder; the assignee may cede it on." },
  CESSION_AMOUNT_OUT_OF_RANGE: { status: 422, description: "The amount ceded must be a whole amount between 1 and the document's total." },
  CESSION_FIELDS_INVALID: { status: 422, description: "A field of the cession breaks the register's format (an address of 5 to 60 characters, an e-mail of at most 40, a RUT, a date…); the message names each one. Nothing was stored." },
  CESSION_DOCUMENT_XML_MISSING: { status: 409, description: "The signed XML of the document cannot be read, so the cession file cannot carry it. Nothing was stored." },
  CESSION_NOT_AVAILABLE: { status: 501, description: "The country of the company has no register of cessions the service can use." },
  CESSION_NOT_FOUND: { status: 404, description: "No cession with that id for this company (or this document)." },
  RECEIVED_CESSION_NOT_APPLICABLE: { status: 409, description: "Only received facturas (33, 34, 43, 46) are ceded through the SII's register of cessions." },
  RECEIVED_CESSION_CHECK_UNAVAILABLE: { status: 503, description: "The SII's register of cessions did not answer or refused the query; the document is unchanged. Retry later (the service also asks by itself)." },
  CESSION_PDF_NOT_READY: { status: 409, description: "The cession has no registration yet: its summary is printed once the register has answered." },
} as const;
