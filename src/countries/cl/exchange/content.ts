/** What a received DTE's signed branch says (names, amounts, lines), read from its parsed element. */
import type { ReceivedContent } from "../../port";
import { childElements, childText, firstChild, type XElement } from "../xml/xml";

export type DteContent = ReceivedContent;

const EMPTY: DteContent = { issuer_name: null, issuer_activity: null, recipient_name: null, net_amount: null, exempt_amount: null, vat: null, total: null, lines: [] };
/** The most lines shown of one document (the schema allows 60 on most types, 1000 on some). */
const MAX_LINES = 1000;

/** The content of a DTE's signed branch (Documento, Exportaciones or Liquidacion); empty without one. */
export function dteContentOf(branch: XElement | undefined): DteContent {
  const enc = branch && firstChild(branch, "Encabezado");
  if (!branch || !enc) return EMPTY;
  const em = firstChild(enc, "Emisor");
  const re = firstChild(enc, "Receptor");
  const to = firstChild(enc, "Totales");
  const t = (e: XElement | undefined, n: string) => (e ? (childText(e, n) ?? null) : null);
  return {
    issuer_name: t(em, "RznSoc") ?? t(em, "RznSocEmisor"),
    issuer_activity: t(em, "GiroEmis") ?? t(em, "GiroEmisor"),
    recipient_name: t(re, "RznSocRecep"),
    net_amount: t(to, "MntNeto"),
    exempt_amount: t(to, "MntExe"),
    vat: t(to, "IVA"),
    total: t(to, "MntTotal"),
    lines: childElements(branch, "Detalle")
      .slice(0, MAX_LINES)
      .map((d, i) => ({ line: Number(t(d, "NroLinDet") ?? i + 1), name: t(d, "NmbItem") ?? "", quantity: t(d, "QtyItem"), unit_price: t(d, "PrcItem"), amount: t(d, "MontoItem") })),
  };
}
