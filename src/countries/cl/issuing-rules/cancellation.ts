/**
 * §4.9: a note that cancels (ANU, CodRef 1) documents, read from its body as sent. The product looks
 * its references up among the company's documents; one of ours is checked here: its type must be
 * cancellable and the note must be the type that cancels it, and the note must total what it does.
 * References to documents issued elsewhere pass unchanged to the SII. This runs on the raw body,
 * before the engine's general reference rules, so our own documents get these precise answers.
 */
import { DocumentRefusal, type Cancellation, type NamedDocument, type StoredTarget } from "../../port";
import { DOCUMENT_TYPES, findDocumentType, type DocumentTypeInfo } from "../documents/document-types";
import type { InvoiceInput } from "../documents/invoice";
import { checkCancellationAmount } from "./sii-rules";

/** Throws when a note of type `note` may not cancel `target` (a guía, or a type the note does not modify). */
function checkTarget(note: DocumentTypeInfo, target: StoredTarget) {
  const refType = target.documentType;
  if (refType === 52) {
    throw new DocumentRefusal("INVOICE_NOT_CANCELLABLE", `Document ${target.id} is a guía de despacho (52), which is not cancelled with a note.`, [{ field: target.field, message: "Type 52 is not cancellable" }]);
  }
  if (!note.mayModify.includes(refType)) {
    const right = Object.values(DOCUMENT_TYPES).filter((t) => t.note === note.note && t.mayModify.includes(refType)).map((t) => `${t.code} (${t.mnemonic})`);
    throw new DocumentRefusal(
      "INVOICE_CANCELLATION_TYPE_MISMATCH",
      `A ${note.code} (${note.mnemonic}) cannot cancel a ${refType}${right.length ? `; use ${right.join(" or ")}` : ""}.`,
      [{ field: "invoice_type", message: `Cannot cancel type ${refType}` }],
    );
  }
}

/** What a note with reason_code ANU cancels: each reference to one of the SII's DTE types by a plain folio. */
export function cancellationOf(body: InvoiceInput): Cancellation | null {
  const note = findDocumentType(body.invoice_type);
  if (!note?.note || body.reason_code?.trim().toUpperCase() !== "ANU") return null;
  const targets: NamedDocument[] = [];
  for (const [i, ref] of (body.billing_reference ?? []).entries()) {
    const documentType = findDocumentType(ref.invoice_type)?.code;
    const folio = String(ref.number);
    if (documentType && /^\d+$/.test(folio)) targets.push({ field: `billing_reference[${i}]`, documentType, folio: Number(folio) });
  }
  return { targets, check: (target) => checkTarget(note, target), checkAmount: checkCancellationAmount };
}
