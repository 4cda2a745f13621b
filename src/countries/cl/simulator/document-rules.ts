/**
 * The simulated SII's content rules of one document (after its signature, CAF and stamp checks in
 * validate.ts): dates against the CAF and today, references and their codes, despatch indicators.
 * Each returns `fatal` reasons (the document is RCH) or `reparos` (accepted with objections, RLV),
 * with the rule id of docs/simulator-fidelity.md as the reason code. Where the SII publishes a
 * detail code (TED-1-646, TED-3-640) it is used; elsewhere the code is ours.
 */
import { childElements, childText, type XElement } from "../xml/xml";

export interface RuleFindings {
  fatal: string[];
  reparos: string[];
}

/** Types whose CAF folios expire six months after authorisation (reference §2, LC Caf::hasVencimiento). */
const EXPIRING_TYPES = new Set([33, 43, 46, 56, 61]);
const NOTE_TYPES = new Set([56, 61, 111, 112]);
const EXPORT_NOTES = new Set([111, 112]);
const EXPORT_TYPES = new Set(["110", "111", "112"]);

function addMonths(date: string, months: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString().slice(0, 10);
}

/** FchEmis and TSTED against the CAF's FA and the reception day (Santiago is at most a day behind UTC). */
function dateRules(type: number, issueDate: string, dd: XElement | undefined, da: XElement | undefined, now: Date, out: RuleFindings) {
  const fa = da ? childText(da, "FA") : undefined;
  if (fa && issueDate < fa) out.fatal.push(`CAF-DATE FchEmis ${issueDate} anterior a la fecha de autorizacion del CAF (${fa})`);
  if (fa && EXPIRING_TYPES.has(type) && issueDate > addMonths(fa, 6)) out.fatal.push(`CAF-EXPIRED Folios del CAF autorizado el ${fa} vencidos (6 meses) a la fecha ${issueDate}`);
  const tsted = dd ? childText(dd, "TSTED") : undefined;
  if (fa && tsted && tsted.slice(0, 10) < fa) out.reparos.push(`TED-1-646 Fecha del timbre (TSTED ${tsted}) anterior a la autorizacion del CAF (${fa})`);
  const latest = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);
  if (issueDate > latest) out.fatal.push(`DATE-FUTURE FchEmis ${issueDate} posterior a la fecha de recepcion`);
}

/**
 * Referencias: folio 0 only with IndGlobal; notes carry a CodRef; a text correction (CodRef 2) has
 * zero amounts; an export note's coded references are to export documents.
 */
function referenceRules(type: number, doc: XElement, total: string, out: RuleFindings) {
  const refs = childElements(doc, "Referencia");
  for (const r of refs) {
    const folio = childText(r, "FolioRef") ?? "";
    if (/^0+$/.test(folio) && childText(r, "IndGlobal") !== "1") out.fatal.push(`REF-FOLIO-0 Referencia ${childText(r, "NroLinRef")} con FolioRef 0 sin IndGlobal`);
  }
  if (!NOTE_TYPES.has(type)) return;
  const coded = refs.filter((r) => /^[123]$/.test(childText(r, "CodRef") ?? ""));
  if (coded.length === 0) out.fatal.push(`NOTE-REF Nota ${type} sin Referencia con CodRef (1, 2 o 3) al documento que modifica`);
  if (coded.some((r) => childText(r, "CodRef") === "2") && Number(total) !== 0) out.fatal.push(`COT-AMOUNT Nota que corrige texto (CodRef 2) con MntTotal ${total}; debe ser 0`);
  // An export note (111/112) modifies export documents: the 110, or an export note (AO; ref §1.2).
  if (EXPORT_NOTES.has(type) && coded.length > 0 && !coded.some((r) => EXPORT_TYPES.has(childText(r, "TpoDocRef") ?? ""))) {
    out.fatal.push(`NOTE-TARGET Nota de exportacion ${type} cuyas Referencias con CodRef no son a un documento de exportacion (110, 111, 112)`);
  }
}

/** A guía de despacho declared as a sale (IndTraslado 1) of nothing. */
function despatchRules(type: number, idDoc: XElement, total: string, out: RuleFindings) {
  if (type === 52 && childText(idDoc, "IndTraslado") === "1" && Number(total) === 0) {
    out.fatal.push("GUIA-ZERO-SALE Guia de despacho con IndTraslado 1 (venta) y MntTotal 0");
  }
}

export function documentContentRules(p: { type: number; doc: XElement; idDoc: XElement; issueDate: string; total: string; dd?: XElement; da?: XElement; now: Date }): RuleFindings {
  const out: RuleFindings = { fatal: [], reparos: [] };
  dateRules(p.type, p.issueDate, p.dd, p.da, p.now, out);
  referenceRules(p.type, p.doc, p.total, out);
  despatchRules(p.type, p.idDoc, p.total, out);
  return out;
}

/** Detalle and Referencia cardinality of DTE_v10 / EnvioBOLETA_v11 (schema, RSC). */
export function cardinalityErrors(doc: XElement, boleta: boolean, where: string): string[] {
  const errs: string[] = [];
  const lines = childElements(doc, "Detalle").length;
  const maxLines = boleta ? 1000 : 60;
  if (lines > maxLines) errs.push(`${where} tiene ${lines} Detalle (maximo ${maxLines})`);
  const refs = childElements(doc, "Referencia").length;
  if (refs > 40) errs.push(`${where} tiene ${refs} Referencia (maximo 40)`);
  return errs;
}

/** FechaType of SiiTypes_v10: a date between 2000-01-01 and 2050-12-31 (schema, RSC). */
export function fechaTypeOk(date: string): boolean {
  return date >= "2000-01-01" && date <= "2050-12-31";
}
