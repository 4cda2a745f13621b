/**
 * The printed form of a received DTE (A4, our layout, PDF417 of its own TED), built from the
 * document's XML as received: the same renderer as issued documents (src/pdf), fed from the XML.
 */
import { childElements, childText, decodeXmlBytes, firstChild, flatten, parseXml, type XElement } from "../countries/cl";
import { siiOfficeLabel } from "../domain/catalogs/cl/communes";
import { DTE_TYPE_CODES, renderPdf, type DteTypeCode, type PrintableDocument, type PrintableLine } from "../pdf";

const t = (e: XElement | undefined, n: string) => (e ? childText(e, n) : undefined);

function lines(branch: XElement): PrintableLine[] {
  return childElements(branch, "Detalle").map((d) => ({
    description: t(d, "NmbItem") ?? "",
    detail: t(d, "DscItem"),
    quantity: t(d, "QtyItem"),
    unit: t(d, "UnmdItem"),
    unitPrice: t(d, "PrcItem"),
    discount: t(d, "DescuentoMonto"),
    amount: t(d, "MontoItem") ?? "0",
    exempt: t(d, "IndExe") === "1",
  }));
}

/** The printable model of a received DTE, or null when it is not a printable DTE. */
export function printableOfReceived(dte: Uint8Array): PrintableDocument | null {
  const text = decodeXmlBytes(dte);
  const root = parseXml(text, "The received DTE").documentElement as XElement;
  const branch = childElements(root).find((c) => ["Documento", "Exportaciones", "Liquidacion"].includes(c.localName ?? ""));
  const enc = branch && firstChild(branch, "Encabezado");
  const ted = /<TED\b[^>]*>[\s\S]*?<\/TED>/.exec(text);
  if (!branch || !enc || !ted) return null;
  const id = firstChild(enc, "IdDoc");
  const em = firstChild(enc, "Emisor");
  const re = firstChild(enc, "Receptor");
  const to = firstChild(enc, "Totales");
  const type = Number(t(id, "TipoDTE"));
  if (!DTE_TYPE_CODES.includes(type as DteTypeCode)) return null;
  return {
    type: type as DteTypeCode,
    folio: Number(t(id, "Folio")),
    issueDate: t(id, "FchEmis") ?? "",
    dueDate: t(id, "FchVenc"),
    issuer: { rut: t(em, "RUTEmisor") ?? "", name: t(em, "RznSoc") ?? t(em, "RznSocEmisor") ?? "", activity: t(em, "GiroEmis") ?? t(em, "GiroEmisor"), address: t(em, "DirOrigen"), comuna: t(em, "CmnaOrigen"), city: t(em, "CiudadOrigen"), siiOffice: siiOfficeLabel(t(em, "CmnaOrigen"), t(em, "CiudadOrigen")) },
    recipient: { rut: t(re, "RUTRecep") ?? "", name: t(re, "RznSocRecep") ?? "", activity: t(re, "GiroRecep"), address: t(re, "DirRecep"), comuna: t(re, "CmnaRecep"), city: t(re, "CiudadRecep") },
    lines: lines(branch),
    totals: { net: t(to, "MntNeto"), exempt: t(to, "MntExe"), ivaRate: t(to, "TasaIVA"), iva: t(to, "IVA"), total: t(to, "MntTotal") ?? "0" },
    // The resolution is the issuer's, printed from its envelope; a received DTE alone does not carry it.
    resolution: { number: 0, date: t(id, "FchEmis") ?? "" },
    ted: flatten(ted[0].replace(/ xmlns(:\w+)?="[^"]*"/g, "")),
  };
}

export async function receivedPdf(dte: Uint8Array): Promise<Uint8Array | null> {
  const doc = printableOfReceived(dte);
  return doc ? renderPdf(doc, "A4") : null;
}
