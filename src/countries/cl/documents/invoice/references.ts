/** Referencia: references to other documents, and the reason (CodRef) of notes. */
import { EngineError } from "../../errors";
import { type DocumentTypeInfo, resolveReasonCode, resolveReferenceType } from "../document-types";
import { checkDate, checkLength, LIMITS, notAllowed } from "./checks";
import type { ComputedDocument, ComputedReference } from "./model";
import type { InvoiceInput } from "./schema";
import { formatRut, parseRut, RutError } from "../rut";

export function buildReferences(input: InvoiceInput, type: DocumentTypeInfo, total: bigint): { references: ComputedReference[]; reason?: ComputedDocument["reason"] } {
  let reason: ComputedDocument["reason"];
  if (input.reason_code !== undefined) {
    const r = resolveReasonCode(input.reason_code);
    reason = { code: r.reason, codRef: r.codRef };
  }
  const refsIn = input.billing_reference ?? [];
  if (type.note && refsIn.length === 0) {
    throw new EngineError("REFERENCE_REQUIRED", `${type.name} must reference the document it modifies (billing_reference)`, { field: "billing_reference" });
  }
  if (type.note && !reason) {
    throw new EngineError("REFERENCE_REQUIRED", `${type.name} needs reason_code ANU, COT or COM`, { field: "reason_code" });
  }
  if (reason && !type.note) throw new EngineError("REFERENCE_INVALID", `reason_code is only for notes (56, 61, 111, 112)`, { field: "reason_code" });
  const references: ComputedReference[] = refsIn.map((r, i) => {
    const p = `billing_reference[${i}]`;
    const rtype = resolveReferenceType(r.invoice_type, `${p}.invoice_type`);
    const folio = String(r.number);
    checkLength(folio, LIMITS.folioRef, `${p}.number`);
    checkLength(r.reason, LIMITS.reason, `${p}.reason`);
    const date = checkDate(r.invoice_date.slice(0, 10), `${p}.invoice_date`);
    if (!/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?$/.test(r.invoice_date)) throw new EngineError("INVALID_DATE", `${p}.invoice_date must be YYYY-MM-DD or YYYY-MM-DD HH:MM:SS`, { field: `${p}.invoice_date` });
    const ref: ComputedReference = { lineNo: i + 1, type: rtype, folio, date };
    refExtras(r, p, ref, type);
    if (r.reason_code !== undefined) {
      ref.codRef = resolveReasonCode(r.reason_code, `${p}.reason_code`).codRef;
      if (r.reason) ref.reason = r.reason;
      // The reason applies to the first reference to a modifiable document.
    } else if (reason && type.mayModify.includes(Number(rtype)) && !references_has_cod(i, refsIn, type)) {
      ref.codRef = reason.codRef;
      ref.reason = r.reason ?? defaultReason(reason.codRef);
    } else if (r.reason) ref.reason = r.reason;
    return ref;
  });
  if (reason && !references.some((r) => r.codRef)) {
    throw new EngineError("REFERENCE_INVALID", `${type.name} cannot modify ${refsIn.map((r) => r.invoice_type).join(", ")}; it may reference ${type.mayModify.join(", ")}`, { field: "billing_reference[0].invoice_type", expected: type.mayModify.join("|") });
  }
  // A text correction (CodRef 2, on the document or on any one reference) carries zero amounts: the
  // SII rejects a note that corrects text and also moves money (ref §1.2 b; simulator COT-AMOUNT).
  if ((reason?.codRef === 2 || references.some((r) => r.codRef === 2)) && total !== 0n) {
    throw new EngineError("TOTALS_MISMATCH", `A text-correction note (COT) carries zero amounts; correct the amounts in a separate note (COM)`, { field: "items", expected: "0" });
  }
  return reason ? { references, reason } : { references };
}

/** Whether the body references a document of one of these SII codes (an unknown type counts as none: its own check reports it). */
export function referencesAnyOf(input: InvoiceInput, codes: readonly string[]): boolean {
  return (input.billing_reference ?? []).some((r) => {
    try {
      return codes.includes(resolveReferenceType(r.invoice_type, "billing_reference"));
    } catch {
      return false;
    }
  });
}

/** IndGlobal (folio 0), RUTOtr and IdAdicOtr (exports; an additional id of that other issuer). */
function refExtras(r: NonNullable<InvoiceInput["billing_reference"]>[number], p: string, ref: ComputedReference, type: DocumentTypeInfo): void {
  if (r.other_issuer_additional_id !== undefined) {
    if (!type.export) notAllowed(`${p}.other_issuer_additional_id`, "IdAdicOtr is for export documents (110, 111, 112)");
    if (r.other_issuer === undefined) throw new EngineError("REFERENCE_INVALID", `${p}.other_issuer_additional_id identifies the other issuer further; send its RUT in other_issuer too`, { field: `${p}.other_issuer_additional_id`, expected: "other_issuer too" });
    ref.otherIssuerAdditionalId = r.other_issuer_additional_id;
  }
  if (r.global) {
    if (ref.folio !== "0") throw new EngineError("REFERENCE_INVALID", `${p}: a global reference (IndGlobal) has number 0`, { field: `${p}.number`, expected: "0" });
    ref.global = true;
  }
  if (r.other_issuer !== undefined) {
    try {
      ref.otherIssuer = formatRut(parseRut(r.other_issuer));
    } catch (e) {
      if (e instanceof RutError) throw new EngineError("INVALID_RUT", `${p}.other_issuer: ${e.message}`, { field: `${p}.other_issuer` });
      throw e;
    }
  }
}

/**
 * CodVndor and CodCaja of a boleta. EnvioBOLETA has them only inside Referencia; with no document
 * to reference, our reading is a Referencia line of their own (NroLinRef, CodVndor, CodCaja: the
 * boleta schema makes TpoDocRef and FolioRef optional), after the billing references.
 */
export function buildPointOfSale(input: InvoiceInput, type: DocumentTypeInfo): ComputedDocument["pointOfSale"] {
  const p = input.point_of_sale;
  if (!p) return undefined;
  if (!type.boleta) notAllowed("point_of_sale", "CodVndor and CodCaja are in the boleta schema (39, 41) only; facturas carry the seller in issuer.seller_code (CdgVendedor)");
  if (p.seller_code === undefined && p.register_code === undefined) throw new EngineError("INVALID_INPUT", "point_of_sale needs seller_code, register_code or both", { field: "point_of_sale" });
  if ((input.billing_reference?.length ?? 0) >= 40) throw new EngineError("INVALID_INPUT", "point_of_sale takes a Referencia line of its own, and the document already has the 40 the SII allows", { field: "point_of_sale", expected: "≤ 39 billing_reference" });
  return { ...(p.seller_code !== undefined ? { sellerCode: p.seller_code } : {}), ...(p.register_code !== undefined ? { registerCode: p.register_code } : {}) };
}

function references_has_cod(i: number, refs: { invoice_type: string; reason_code?: string | undefined }[], type: DocumentTypeInfo): boolean {
  for (let k = 0; k < i; k++) {
    const r = refs[k]!;
    if (r.reason_code !== undefined) continue;
    try {
      if (type.mayModify.includes(Number(resolveReferenceType(r.invoice_type, "")))) return true;
    } catch {
      /* reported by its own iteration */
    }
  }
  return false;
}

function defaultReason(codRef: 1 | 2 | 3): string {
  return codRef === 1 ? "ANULA DOCUMENTO DE REFERENCIA" : codRef === 2 ? "CORRIGE TEXTO DEL DOCUMENTO DE REFERENCIA" : "CORRIGE MONTOS";
}
