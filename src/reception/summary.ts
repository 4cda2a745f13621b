/** What the API shows of a received DTE's content (names, amounts, lines), read from its own bytes. */
import { childElements, childText, decodeXmlBytes, firstChild, parseXml, type XElement } from "../countries/cl";

export interface Summary {
  issuer_name: string | null;
  issuer_activity: string | null;
  recipient_name: string | null;
  net_amount: string | null;
  exempt_amount: string | null;
  vat: string | null;
  total: string | null;
  lines: { line: number; name: string; quantity: string | null; unit_price: string | null; amount: string | null }[];
}

const EMPTY: Summary = { issuer_name: null, issuer_activity: null, recipient_name: null, net_amount: null, exempt_amount: null, vat: null, total: null, lines: [] };

export function readSummary(dte: Uint8Array): Summary {
  try {
    const root = parseXml(decodeXmlBytes(dte), "The DTE").documentElement as XElement;
    const branch = childElements(root).find((c) => ["Documento", "Exportaciones", "Liquidacion"].includes(c.localName ?? ""));
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
      lines: childElements(branch, "Detalle").slice(0, 1000).map((d, i) => ({
        line: Number(t(d, "NroLinDet") ?? i + 1),
        name: t(d, "NmbItem") ?? "",
        quantity: t(d, "QtyItem"),
        unit_price: t(d, "PrcItem"),
        amount: t(d, "MontoItem"),
      })),
    };
  } catch {
    return EMPTY;
  }
}
