/**
 * An invoice body made a DTE the product can store and check (the port's `documents.prepare`):
 * its coded fields against Chile's catalogs, its amounts computed, the result against the SII's
 * schema and the SII's document rules. Engine failures on the body become the API's
 * `INVOICE_<code>` refusals naming the field.
 */
import { isInvoiceInputCode } from "../../../lib/errors";
import { DocumentRefusal, type Credits, type PreparedDocument } from "../../port";
import { checkInvoiceCodes } from "../catalogs/checks";
import { formatScaled, parseScaled } from "../documents/decimal";
import { assertDocumentSchema } from "../documents/document-schema";
import { findDocumentType } from "../documents/document-types";
import { computeDocument, formatAmount, invoiceSchema, type ComputedDocument } from "../documents/invoice";
import { isEngineError } from "../errors";
import { checkSiiRules } from "./sii-rules";

/** The computed document of a body, or a refusal naming the field. */
function compute(body: unknown): ComputedDocument {
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
      throw new DocumentRefusal(`INVOICE_${e.code}`, message, [{ field: e.field ?? "(body)", message }]);
    }
    throw e;
  }
}

/**
 * What a credit note (61, 112) credits: each document a coded reference (CodRef 1, 2 or 3) names by
 * type and folio, not global and not another issuer's, is credited the note's whole total (a note
 * that corrects several documents at once cannot say how it splits). Debit notes, and notes
 * totalling 0, credit nothing.
 */
function creditsOf(doc: ComputedDocument): Credits | null {
  if (doc.type.note !== "credit" || doc.totals.total <= 0n) return null;
  const documents = doc.references
    .filter((r) => r.codRef !== undefined && !r.global && (r.otherIssuer === undefined || r.otherIssuer === doc.issuer.rut) && /^\d+$/.test(r.folio) && findDocumentType(r.type))
    .map((r) => ({ documentType: Number(r.type), folio: Number(r.folio) }));
  if (documents.length === 0) return null;
  const { scale } = doc.currency;
  return { documents, units: doc.totals.total, toUnits: (amount) => parseScaled(amount, scale, "total"), toAmount: (units) => formatScaled(units, scale) };
}

export function prepare(body: unknown): PreparedDocument {
  const doc = compute(body);
  checkSiiRules(doc);
  return {
    documentType: doc.type.code,
    issueDate: doc.issueDate,
    total: formatAmount(doc, doc.totals.total),
    currency: doc.currency.code,
    issuerTaxId: doc.issuer.rut,
    receiver: { taxId: doc.receiver.rut, name: doc.receiver.legalName },
    credits: creditsOf(doc),
  };
}
