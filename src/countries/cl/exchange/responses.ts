/**
 * Exchange acknowledgments between taxpayers (sii-formats.md §5), each signed:
 * - RespuestaDTE with RecepcionEnvio (we received an EnvioDTE; per-DTE reception status), or with
 *   ResultadoDTE (commercial acceptance / rejection of each DTE);
 * - EnvioRecibos (Ley 19.983 receipt of goods or services), each Recibo signed, then the set.
 * Never sign a receipt for a DTE whose signature you have not verified (factoring fraud vector).
 */
import { XML_DECL } from "../documents/dte";
import { EngineError } from "../errors";
import { normalizeRut } from "../documents/rut";
import { el, encodeLatin1, leaf, NS_SII, NS_XSI, serialize, type XmlEl } from "../xml/xml";
import { signXml, type XmlSigner } from "../xml/xmldsig";

export const RECEIPT_DECLARATION =
  "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s).";

/** EstadoRecepEnv codes. */
export const ENVELOPE_RECEPTION_STATUS = { OK: 0, SCHEMA_ERROR: 1, SIGNATURE_ERROR: 2, WRONG_RECEIVER: 3, REPEATED: 90, UNREADABLE: 91, OTHER: 99 } as const;
/** EstadoRecepDTE codes. */
export const DTE_RECEPTION_STATUS = { OK: 0, SIGNATURE_ERROR: 1, ISSUER_RUT_ERROR: 2, RECEIVER_RUT_ERROR: 3, REPEATED: 4, OTHER: 99 } as const;
/** EstadoDTE (commercial result) codes. */
export const DTE_RESULT_STATUS = { ACCEPTED: 0, ACCEPTED_WITH_DISCREPANCIES: 1, REJECTED: 2 } as const;

export interface DocumentKey {
  type: number;
  folio: number;
  /** FchEmis YYYY-MM-DD. */
  issueDate: string;
  issuerRut: string;
  receiverRut: string;
  /** MntTotal as written in the DTE. */
  total: string | number;
}

export interface ResponseHeader {
  /** RutResponde: who answers (the receiver of the documents: our company). */
  responderRut: string;
  /** RutRecibe: who gets the answer (the issuer of the documents). */
  recipientRut: string;
  contact?: { name?: string; phone?: string; email?: string };
  /** Local YYYY-MM-DDTHH:MM:SS. */
  timestamp: string;
  signer: XmlSigner;
}

export interface SignedResponse {
  xmlString: string;
  xml: Uint8Array;
}

function ts(v: string, field: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(v)) throw new EngineError("INVALID_DATE", `${field} must be YYYY-MM-DDTHH:MM:SS`, { field });
  return v;
}
function txt(v: string | undefined, max: number): string | undefined {
  return v === undefined ? undefined : v.slice(0, max);
}
function docFields(d: DocumentKey, typeTag: "TipoDTE" | "TipoDoc"): XmlEl[] {
  return [leaf(typeTag, d.type)!, leaf("Folio", d.folio)!, leaf("FchEmis", d.issueDate)!, leaf("RUTEmisor", normalizeRut(d.issuerRut))!, leaf("RUTRecep", normalizeRut(d.receiverRut))!, leaf("MntTotal", d.total)!];
}
function contact(h: ResponseHeader): XmlEl[] {
  return [leaf("NmbContacto", txt(h.contact?.name, 40)), leaf("FonoContacto", txt(h.contact?.phone, 40)), leaf("MailContacto", txt(h.contact?.email, 80))].filter((x): x is XmlEl => !!x);
}

async function respuesta(h: ResponseHeader, responseId: number, details: XmlEl[]): Promise<SignedResponse> {
  const root = el(
    "RespuestaDTE",
    [
      ["xmlns", NS_SII],
      ["xmlns:xsi", NS_XSI],
      ["version", "1.0"],
      ["xsi:schemaLocation", `${NS_SII} RespuestaEnvioDTE_v10.xsd`],
    ],
    el(
      "Resultado",
      [["ID", "R1"]],
      el(
        "Caratula",
        [["version", "1.0"]],
        leaf("RutResponde", normalizeRut(h.responderRut)),
        leaf("RutRecibe", normalizeRut(h.recipientRut)),
        leaf("IdRespuesta", responseId),
        leaf("NroDetalles", details.length),
        contact(h),
        leaf("TmstFirmaResp", ts(h.timestamp, "timestamp")),
      ),
      details,
    ),
  );
  const signed = await signXml(serialize(root, ""), "R1", h.signer);
  const xmlString = XML_DECL + signed + "\n";
  return { xmlString, xml: encodeLatin1(xmlString) };
}

export interface ReceivedEnvelope {
  /** NmbEnvio: file name of the received envelope. */
  fileName: string;
  /** FchRecep: when we received it, local YYYY-MM-DDTHH:MM:SS. */
  receivedAt: string;
  /** CodEnvio: our reception number. */
  receptionCode: number;
  /** EnvioDTEID: the SetDTE ID of the received envelope. */
  envelopeId: string;
  /** Digest: the DigestValue of the received SetDTE signature. */
  digest?: string;
  issuerRut?: string;
  receiverRut?: string;
  status: number;
  statusText: string;
  documents: (DocumentKey & { status: number; statusText: string })[];
}

/** RespuestaDTE / RecepcionEnvio: acknowledges reception of envelopes (schema, signature, RUT checks). */
export async function buildRecepcionEnvio(h: ResponseHeader & { responseId: number; envelopes: ReceivedEnvelope[] }): Promise<SignedResponse> {
  if (h.envelopes.length === 0) throw new EngineError("ENVELOPE_INVALID", "RecepcionEnvio needs at least one envelope");
  const details = h.envelopes.map((e) =>
    el(
      "RecepcionEnvio",
      null,
      leaf("NmbEnvio", e.fileName.slice(0, 80)),
      leaf("FchRecep", ts(e.receivedAt, "receivedAt")),
      leaf("CodEnvio", e.receptionCode),
      leaf("EnvioDTEID", e.envelopeId.slice(0, 80)),
      leaf("Digest", e.digest),
      leaf("RutEmisor", e.issuerRut ? normalizeRut(e.issuerRut) : undefined),
      leaf("RutReceptor", e.receiverRut ? normalizeRut(e.receiverRut) : undefined),
      leaf("EstadoRecepEnv", e.status),
      leaf("RecepEnvGlosa", e.statusText.slice(0, 256)),
      e.documents.length ? leaf("NroDTE", e.documents.length) : null,
      e.documents.map((d) => el("RecepcionDTE", null, docFields(d, "TipoDTE"), leaf("EstadoRecepDTE", d.status), leaf("RecepDTEGlosa", d.statusText.slice(0, 256)))),
    ),
  );
  return respuesta(h, h.responseId, details);
}

export interface DocumentResult extends DocumentKey {
  /** CodEnvio of the reception this result refers to. */
  receptionCode: number;
  /** 0 accepted, 1 accepted with discrepancies, 2 rejected. */
  status: 0 | 1 | 2;
  statusText: string;
  /** CodRchDsc: rejection/discrepancy code (negative integers in the SII table). */
  rejectionCode?: number;
}

/** RespuestaDTE / ResultadoDTE: commercial acceptance or rejection of each DTE. */
export async function buildResultadoDte(h: ResponseHeader & { responseId: number; results: DocumentResult[] }): Promise<SignedResponse> {
  if (h.results.length === 0) throw new EngineError("ENVELOPE_INVALID", "ResultadoDTE needs at least one document");
  const details = h.results.map((r) =>
    el("ResultadoDTE", null, docFields(r, "TipoDTE"), leaf("CodEnvio", r.receptionCode), leaf("EstadoDTE", r.status), leaf("EstadoDTEGlosa", r.statusText.slice(0, 256)), leaf("CodRchDsc", r.rejectionCode)),
  );
  return respuesta(h, h.responseId, details);
}

export interface ReceiptItem extends DocumentKey {
  /** Recinto: where the goods/services were received. */
  place: string;
  /** RutFirma: RUT of the person signing the receipt (the certificate holder). */
  signerRut: string;
}

/** EnvioRecibos with one signed Recibo per document, the set signed too. */
export async function buildEnvioRecibos(h: ResponseHeader & { receipts: ReceiptItem[]; setId?: string }): Promise<SignedResponse> {
  if (h.receipts.length === 0) throw new EngineError("ENVELOPE_INVALID", "EnvioRecibos needs at least one receipt");
  const recibos: string[] = [];
  for (const r of h.receipts) {
    const id = `T${r.type}F${r.folio}`;
    const recibo = el(
      "Recibo",
      [
        ["xmlns", NS_SII],
        ["xmlns:xsi", NS_XSI],
        ["version", "1.0"],
      ],
      el(
        "DocumentoRecibo",
        [["ID", id]],
        docFields(r, "TipoDoc"),
        leaf("Recinto", r.place.slice(0, 80)),
        leaf("RutFirma", normalizeRut(r.signerRut)),
        leaf("Declaracion", RECEIPT_DECLARATION),
        leaf("TmstFirmaRecibo", ts(h.timestamp, "timestamp")),
      ),
    );
    recibos.push(await signXml(serialize(recibo, ""), id, h.signer));
  }
  const setId = h.setId ?? "SetDteRecibidos";
  const caratula = serialize(
    el("Caratula", [["version", "1.0"]], leaf("RutResponde", normalizeRut(h.responderRut)), leaf("RutRecibe", normalizeRut(h.recipientRut)), contact(h), leaf("TmstFirmaEnv", ts(h.timestamp, "timestamp"))),
    "",
  );
  const body =
    `<EnvioRecibos xmlns="${NS_SII}" xmlns:xsi="${NS_XSI}" version="1.0" xsi:schemaLocation="${NS_SII} EnvioRecibos_v10.xsd">\n` +
    `<SetRecibos ID="${setId}">\n${caratula}\n${recibos.join("\n")}\n</SetRecibos>\n</EnvioRecibos>`;
  const signed = await signXml(body, setId, h.signer);
  const xmlString = XML_DECL + signed + "\n";
  return { xmlString, xml: encodeLatin1(xmlString) };
}
