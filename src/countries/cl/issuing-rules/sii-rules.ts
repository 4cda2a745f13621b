/**
 * The SII's rules checked at POST, before a folio is reserved, so that a document the SII would
 * reject is refused with a precise error instead of consuming a folio and failing later. Each rule
 * names its entry in docs/simulator-fidelity.md (the `[rule id]` in the message), where the SII code
 * it mirrors and the test that proves it are listed. The amount engine (../documents) already
 * enforces the schema-level rules (lengths, dates, RUTs, amounts, totals); these are the ones it does not.
 */
import type { ErrorCode, ErrorDetail } from "../../../lib/errors";
import { DocumentRefusal, type Resolution, type StoredTarget } from "../../port";
import type { ComputedDocument, InvoiceInput } from "../documents/invoice";

function refuse(code: ErrorCode, message: string, details: ErrorDetail[]): never {
  throw new DocumentRefusal(code, message, details);
}

/**
 * [REF-FOLIO-0] A reference with FolioRef 0 is only valid with IndGlobal 1 (a note covering more
 * than 20 documents, AO Formato v2.2 §E): folio 0 without `global` would be rejected.
 */
function referenceFolios(doc: ComputedDocument) {
  doc.references.forEach((r, i) => {
    if (/^0+$/.test(r.folio) && !r.global) {
      const field = `billing_reference[${i}].number`;
      refuse("INVOICE_REFERENCE_INVALID", `${field} is 0: the SII accepts folio 0 only on a global reference (IndGlobal); send global: true or name the referenced document's folio [REF-FOLIO-0]`, [
        { field, message: "Folio 0 without a global indicator" },
      ]);
    }
  });
}

/**
 * [GUIA-ZERO-SALE] A guía de despacho (52) declared as a sale (transfer_kind / IndTraslado 1, the
 * default) of nothing is rejected by the SII; a transfer that is not a sale (IndTraslado 2–9, e.g. a
 * move between own premises) may total 0.
 */
function despatchAmount(doc: ComputedDocument) {
  if (doc.type.code === 52 && (doc.transferKind ?? 1) === 1 && doc.totals.total === 0n) {
    refuse("INVOICE_ZERO_TOTAL", "A guía de despacho declared as a sale (transfer_kind 1, IndTraslado 1) cannot total 0; give the goods their prices, or declare the transfer kind it is (GET /api/catalogs/CL/transfer-kinds) [GUIA-ZERO-SALE]", [
      { field: "items", message: "Total is 0 on a sale" },
    ]);
  }
}

/**
 * [NOTE-TARGET] An export note (111, 112) modifies an export document: among its coded references
 * (reason_code on the note or on a reference) one is to a 110, 111 or 112 (AO; ref §1.2). The engine
 * codes only such references from the note's reason_code, but a reference's own reason_code may
 * name any type.
 */
function exportNoteTarget(doc: ComputedDocument) {
  if (doc.type.code !== 111 && doc.type.code !== 112) return;
  const coded = doc.references.filter((r) => r.codRef !== undefined);
  if (coded.length === 0 || coded.some((r) => ["110", "111", "112"].includes(r.type))) return;
  const i = doc.references.indexOf(coded[0]!);
  const field = `billing_reference[${i}].invoice_type`;
  refuse("INVOICE_REFERENCE_INVALID", `An export note (${doc.type.code}) modifies an export document (110, 111 or 112), not a ${coded[0]!.type}; reference the export invoice it corrects [NOTE-TARGET]`, [{ field, message: "Not an export document" }]);
}

/** The document-level SII rules the engine does not enforce by construction (see the fidelity table). */
export function checkSiiRules(doc: ComputedDocument) {
  referenceFolios(doc);
  despatchAmount(doc);
  exportNoteTarget(doc);
}

/**
 * [ANU-AMOUNT] A note that cancels (CodRef 1) one of our own documents carries that document's
 * total exactly: a partial or inflated cancellation is a correction of amounts (COM), not an ANU.
 */
export function checkCancellationAmount(target: StoredTarget, total: string) {
  if (target.total === total) return;
  const message = `A cancelling note (ANU) must total exactly what ${target.id} (${target.documentType} N° ${target.folio}) totals: ${target.total}, not ${total}; to correct part of the amount use reason_code COM [ANU-AMOUNT]`;
  refuse("INVOICE_CANCELLATION_AMOUNT_MISMATCH", message, [{ field: "items", message: `Expected total ${target.total}` }]);
}

/**
 * [RESOLUTION] The SII resolution printed in the envelope and the PDF is the company's (settings).
 * A body may still name it (issuer.tax_information.resolution_*), but only the same one.
 */
export function checkResolution(body: InvoiceInput, resolution: Resolution | null) {
  const tax = body.issuer?.tax_information;
  if (!resolution || !tax) return;
  const details: ErrorDetail[] = [];
  if (tax.resolution_number !== undefined && Number(tax.resolution_number) !== resolution.number) {
    details.push({ field: "issuer.tax_information.resolution_number", message: `The company's SII resolution is number ${resolution.number}` });
  }
  if (tax.resolution_date !== undefined && tax.resolution_date !== resolution.date) {
    details.push({ field: "issuer.tax_information.resolution_date", message: `The company's SII resolution is dated ${resolution.date}` });
  }
  if (details.length) {
    refuse("INVOICE_RESOLUTION_MISMATCH", `The document names another SII resolution than the company's settings (N° ${resolution.number} of ${resolution.date}); omit it or change the settings [RESOLUTION]`, details);
  }
}
