/**
 * The signed DTE: Documento/Exportaciones (facturas, notes, guías, exports) or the boleta form of
 * EnvioBOLETA_v11, stamped (TED) and signed. Standalone root:
 *   <DTE version="1.0" xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 * xmlns:xsi is declared on purpose (unused by the DTE): envelopes declare it on their root, so the
 * canonical forms of Documento and SignedInfo are the same standalone and pasted into an envelope,
 * and strict verifiers (xmlsec1) accept the DTE signature in both places.
 */
import { type Caf, assertCafUsable } from "./caf";
import { EngineError } from "../errors";
import { formatScaled, parseScaled, divRound, pow10 } from "./decimal";
import { type ComputedDocument, formatAmount } from "./invoice";
import { stampTed, type Ted } from "./ted";
import { el, encodeLatin1, leaf, NS_SII, NS_XSI, raw, serialize, type XmlEl } from "../xml/xml";
import { signXml, type XmlSigner } from "../xml/xmldsig";

export interface BuildDteParams {
  document: ComputedDocument;
  folio: number;
  caf: Caf;
  signer: XmlSigner;
  /** Local time (company time zone) YYYY-MM-DDTHH:MM:SS: TSTED and TmstFirma. */
  timestamp: string;
}

export interface SignedDte {
  /** Document ID (the Reference URI without '#'), e.g. "F7T33". */
  id: string;
  documentType: number;
  folio: number;
  issuerRut: string;
  receiverRut: string;
  issueDate: string;
  /** MntTotal exactly as written. */
  total: string;
  /** The <DTE>…</DTE> element text, signed; paste it verbatim into envelopes. */
  element: string;
  /** Standalone file text with XML declaration (ISO-8859-1). */
  xmlString: string;
  /** Standalone file bytes, ISO-8859-1. */
  xml: Uint8Array;
  ted: Ted;
  /** Envelope family of the type. */
  envelope: "EnvioDTE" | "EnvioBOLETA";
}

export const XML_DECL = '<?xml version="1.0" encoding="ISO-8859-1"?>\n';

function checkTimestamp(ts: string, field = "timestamp"): void {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(ts)) throw new EngineError("INVALID_DATE", `${field} must be local time YYYY-MM-DDTHH:MM:SS`, { field });
}

export function dteId(documentType: number, folio: number): string {
  return `F${folio}T${documentType}`;
}

function idDoc(d: ComputedDocument, folio: number): XmlEl {
  const t = d.type;
  if (t.boleta) {
    return el("IdDoc", null, leaf("TipoDTE", t.code), leaf("Folio", folio), leaf("FchEmis", d.issueDate), leaf("IndServicio", d.serviceIndicator ?? 3), leaf("FchVenc", d.dueDate));
  }
  return el(
    "IdDoc",
    null,
    leaf("TipoDTE", t.code),
    leaf("Folio", folio),
    leaf("FchEmis", d.issueDate),
    t.code === 52 ? leaf("IndTraslado", 1) : null,
    leaf("FmaPago", d.paymentForm),
    leaf("FchVenc", d.dueDate),
  );
}

function emisor(d: ComputedDocument): XmlEl {
  const e = d.issuer;
  if (d.type.boleta) {
    return el("Emisor", null, leaf("RUTEmisor", e.rut), leaf("RznSocEmisor", e.legalName), leaf("GiroEmisor", e.activity), leaf("DirOrigen", e.address), leaf("CmnaOrigen", e.commune), leaf("CiudadOrigen", e.city));
  }
  return el(
    "Emisor",
    null,
    leaf("RUTEmisor", e.rut),
    leaf("RznSoc", e.legalName),
    leaf("GiroEmis", e.activity),
    e.activityCodes.map((c) => leaf("Acteco", c)),
    d.branchOffice !== undefined ? leaf("Sucursal", String(d.branchOffice).slice(0, 20)) : null,
    leaf("DirOrigen", e.address),
    leaf("CmnaOrigen", e.commune),
    leaf("CiudadOrigen", e.city),
  );
}

function receptor(d: ComputedDocument): XmlEl {
  const r = d.receiver;
  if (d.type.boleta) {
    return el("Receptor", null, leaf("RUTRecep", r.rut), leaf("RznSocRecep", r.legalName), leaf("DirRecep", r.address), leaf("CmnaRecep", r.commune), leaf("CiudadRecep", r.city));
  }
  return el(
    "Receptor",
    null,
    leaf("RUTRecep", r.rut),
    leaf("RznSocRecep", r.legalName),
    r.foreignId ? el("Extranjero", null, leaf("NumId", r.foreignId.slice(0, 20))) : null,
    leaf("GiroRecep", r.activity),
    leaf("DirRecep", r.address),
    leaf("CmnaRecep", r.commune),
    leaf("CiudadRecep", r.city),
  );
}

function totales(d: ComputedDocument): XmlEl {
  const t = d.totals;
  const a = (v: bigint | undefined) => (v === undefined ? undefined : formatAmount(d, v));
  if (d.type.export) {
    return el("Totales", null, leaf("TpoMoneda", d.currency.siiName), leaf("MntExe", a(t.exempt ?? 0n)), leaf("MntTotal", a(t.total)));
  }
  if (d.type.boleta) {
    return el("Totales", null, leaf("MntNeto", a(t.net)), leaf("MntExe", a(t.exempt)), leaf("IVA", a(t.iva)), leaf("MntTotal", a(t.total)));
  }
  return el(
    "Totales",
    null,
    leaf("MntNeto", a(t.net)),
    leaf("MntExe", a(t.exempt)),
    leaf("TasaIVA", t.ivaRate),
    leaf("IVA", a(t.iva)),
    t.additional.map((x) => el("ImptoReten", null, leaf("TipoImp", x.type), leaf("TasaImp", x.rate), leaf("MontoImp", a(x.amount)))),
    leaf("MntTotal", a(t.total)),
  );
}

function otraMoneda(d: ComputedDocument): XmlEl | null {
  if (!d.type.export || d.currency.code === "CLP" || !d.currency.exchangeRate) return null;
  const rate = parseScaled(d.currency.exchangeRate, 4, "currency.exchange_rate");
  // total (scale 2) × rate (scale 4) -> CLP integer, half away from zero
  const clp = divRound(d.totals.total * rate, pow10(d.currency.scale + 4));
  const exe = divRound((d.totals.exempt ?? 0n) * rate, pow10(d.currency.scale + 4));
  return el("OtraMoneda", null, leaf("TpoMoneda", "PESO CL"), leaf("TpoCambio", d.currency.exchangeRate), leaf("MntExeOtrMnda", formatScaled(exe, 0)), leaf("MntTotOtrMnda", formatScaled(clp, 0)));
}

function detalle(d: ComputedDocument): XmlEl[] {
  return d.lines.map((l) =>
    el(
      "Detalle",
      null,
      leaf("NroLinDet", l.lineNo),
      l.exemptFlag ? leaf("IndExe", 1) : null,
      leaf("NmbItem", l.name),
      leaf("QtyItem", l.qty),
      leaf("UnmdItem", l.unit),
      leaf("PrcItem", l.price),
      l.discount > 0n ? leaf("DescuentoMonto", formatAmount(d, l.discount)) : null,
      !d.type.boleta ? l.additionalTaxCodes.map((c) => leaf("CodImpAdic", c)) : null,
      leaf("MontoItem", formatAmount(d, l.amount)),
    ),
  );
}

function referencias(d: ComputedDocument): XmlEl[] {
  return d.references.map((r) =>
    d.type.boleta
      ? el("Referencia", null, leaf("NroLinRef", r.lineNo), leaf("TpoDocRef", r.type), leaf("FolioRef", r.folio), leaf("RazonRef", r.reason?.slice(0, 90)))
      : el("Referencia", null, leaf("NroLinRef", r.lineNo), leaf("TpoDocRef", r.type), leaf("FolioRef", r.folio), leaf("FchRef", r.date), leaf("CodRef", r.codRef), leaf("RazonRef", r.reason)),
  );
}

/** The unsigned <DTE> text (Documento with TED and TmstFirma), standalone root with namespaces. */
export function buildDteXml(d: ComputedDocument, folio: number, ted: Ted, timestamp: string): string {
  const id = dteId(d.type.code, folio);
  const branch = d.type.xmlBranch;
  const doc = el(
    "DTE",
    [
      ["xmlns", NS_SII],
      ["xmlns:xsi", NS_XSI],
      ["version", "1.0"],
    ],
    el(
      branch,
      [["ID", id]],
      el("Encabezado", null, idDoc(d, folio), emisor(d), receptor(d), totales(d), otraMoneda(d)),
      detalle(d),
      referencias(d),
      raw(ted.xml),
      leaf("TmstFirma", timestamp),
    ),
  );
  return serialize(doc, "");
}

/**
 * Stamps and signs a computed document with a folio. Checks the CAF covers the type, issuer and
 * folio and is neither expired nor later than the timestamp.
 */
export async function buildSignedDte(p: BuildDteParams): Promise<SignedDte> {
  checkTimestamp(p.timestamp);
  const d = p.document;
  assertCafUsable(p.caf, { documentType: d.type.code, issuerRut: d.issuer.rut, folio: p.folio, timestamp: p.timestamp });
  const total = formatAmount(d, d.totals.total);
  const ted = await stampTed({
    issuerRut: d.issuer.rut,
    documentType: d.type.code,
    folio: p.folio,
    issueDate: d.issueDate,
    receiverRut: d.receiver.rut,
    receiverName: d.receiver.legalName,
    total,
    firstItemName: d.lines[0]?.name ?? "",
    caf: p.caf,
    timestamp: p.timestamp,
  });
  const unsigned = buildDteXml(d, p.folio, ted, p.timestamp);
  const id = dteId(d.type.code, p.folio);
  const element = await signXml(unsigned, id, p.signer);
  const xmlString = XML_DECL + element + "\n";
  return {
    id,
    documentType: d.type.code,
    folio: p.folio,
    issuerRut: d.issuer.rut,
    receiverRut: d.receiver.rut,
    issueDate: d.issueDate,
    total,
    element,
    xmlString,
    xml: encodeLatin1(xmlString),
    ted,
    envelope: d.type.envelope,
  };
}
