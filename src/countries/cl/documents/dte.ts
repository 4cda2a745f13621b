/**
 * The signed DTE: Documento (facturas, notes, guías), Liquidacion (43), Exportaciones (110-112) or the boleta form of
 * EnvioBOLETA_v11, stamped (TED) and signed. Standalone root:
 *   <DTE version="1.0" xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
 * xmlns:xsi is declared on purpose (unused by the DTE): envelopes declare it on their root, so the
 * canonical forms of Documento and SignedInfo are the same standalone and pasted into an envelope,
 * and strict verifiers (xmlsec1) accept the DTE signature in both places.
 */
import { type Caf, assertCafUsable } from "./caf";
import type { StoredDocument } from "../../port";
import { EngineError } from "../errors";
import { comisiones, detalle, dscRcgGlobal, emisor, idDoc, otraMoneda, receptor, referencias, subTotInfo, totales, transporte } from "./dte-body";
import { type ComputedDocument, formatAmount } from "./invoice";
import { stampTed, type Ted } from "./ted";
import { el, encodeLatin1, leaf, NS_SII, NS_XSI, raw, serialize } from "../xml/xml";
import { signXml, type XmlSigner } from "../xml/xmldsig";

export interface BuildDteParams {
  document: ComputedDocument;
  folio: number;
  caf: Caf;
  signer: XmlSigner;
  /** Local time (company time zone) YYYY-MM-DDTHH:MM:SS: TSTED and TmstFirma. */
  timestamp: string;
}

/** A signed DTE: what the port records of it (`total`: MntTotal exactly as written; `xml`: the standalone file, ISO-8859-1) and its Chilean parts. */
export interface SignedDte extends StoredDocument {
  /** Document ID (the Reference URI without '#'), e.g. "F7T33". */
  id: string;
  /** The <DTE>…</DTE> element text, signed; paste it verbatim into envelopes. */
  element: string;
  /** Standalone file text with XML declaration (ISO-8859-1). */
  xmlString: string;
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
      el("Encabezado", null, idDoc(d, folio), emisor(d), branch === "Documento" && !d.type.boleta ? leaf("RUTMandante", d.principalRut) : null, receptor(d), branch === "Documento" && !d.type.boleta ? leaf("RUTSolicita", d.requesterRut) : null, transporte(d), totales(d), otraMoneda(d)),
      detalle(d),
      subTotInfo(d),
      dscRcgGlobal(d),
      referencias(d),
      comisiones(d),
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
