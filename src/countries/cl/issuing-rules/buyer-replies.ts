/**
 * A buyer's reply to a company's DTEs (RespuestaDTE, EnvioRecibos) as the port's `BuyerReplies`:
 * read and verified by ../exchange/replies-read.ts, each entry's code put in the product's terms
 * (a status) and in the SII's words (the texts of its code tables).
 */
import type { BuyerReplies, ReplyEntry as PortEntry, ReplyStatus, SignatureVerdict } from "../../port";
import { readBuyerReply, type ReplyEntry } from "../exchange/replies-read";
import type { SignatureCheck } from "../xml/xmldsig";
import { xmlDocumentBytes } from "../xml/xml";

const RECEPTION_TEXT: Record<number, string> = { 0: "DTE Recibido OK", 1: "DTE No Recibido - Error de Firma", 2: "DTE No Recibido - Error en RUT Emisor", 3: "DTE No Recibido - Error en RUT Receptor", 4: "DTE No Recibido - DTE Repetido", 99: "DTE No Recibido - Otros" };
const ENVELOPE_TEXT: Record<number, string> = { 0: "Envio Recibido Conforme", 1: "Envio Rechazado - Error de Schema", 2: "Envio Rechazado - Error de Firma", 3: "Envio Rechazado - RUT Receptor No Corresponde", 90: "Envio Rechazado - Archivo Repetido", 91: "Envio Rechazado - Archivo Ilegible", 99: "Envio Rechazado - Otros" };
const RESULT_TEXT: Record<number, string> = { 0: "DTE Aceptado OK", 1: "DTE Aceptado con Discrepancias", 2: "DTE Rechazado" };
const RESULT_STATUS = { 0: "ACCEPTED", 1: "ACCEPTED_WITH_DISCREPANCIES", 2: "REJECTED" } as const;

/** EstadoRecepDTE / EstadoRecepEnv (RECEPTION), EstadoDTE (RESULT) as a status, with the SII's words for the code. */
function statusOf(e: ReplyEntry): { status: ReplyStatus; codeText: string | null } {
  if (e.kind === "RECEIPT") return { status: "GOODS_RECEIVED", codeText: null };
  const table = e.kind === "RESULT" ? RESULT_TEXT : e.envelopeId !== null ? ENVELOPE_TEXT : RECEPTION_TEXT;
  const codeText = e.code === null ? null : (table[e.code] ?? null);
  if (codeText === null) return { status: "UNKNOWN", codeText };
  if (e.kind === "RECEPTION") return { status: e.code === 0 ? "RECEIVED" : "NOT_RECEIVED", codeText };
  return { status: RESULT_STATUS[e.code as 0 | 1 | 2], codeText };
}

const verdictOf = (s: SignatureCheck): SignatureVerdict => ({ ok: s.ok, message: s.ok ? null : (s.message ?? null), signerTaxId: s.signer?.rut ?? null, signerName: s.signer?.subjectCN ?? null });

function entryOf(e: ReplyEntry): PortEntry {
  return {
    kind: e.kind,
    ...statusOf(e),
    code: e.code,
    text: e.text,
    rejectionCode: e.rejectionCode,
    envelopeId: e.envelopeId,
    documentType: e.documentType,
    folio: e.folio,
    issueDate: e.issueDate,
    issuerTaxId: e.issuerRut,
    receiverTaxId: e.receiverRut,
    total: e.total,
    receipt: { place: e.place, signerTaxId: e.signerRut, signedAt: e.signedAt },
    signature: verdictOf(e.signature),
  };
}

export const chileanBuyerReplies: BuyerReplies = {
  async read(bytes) {
    const reply = await readBuyerReply(bytes);
    if ("problem" in reply) return reply;
    return {
      kind: reply.root,
      responderTaxId: reply.responderRut,
      timestamp: reply.timestamp,
      signature: verdictOf(reply.signature),
      entries: reply.entries.map(entryOf),
      kept() {
        // Kept as read: its signed content and signatures, never the received bytes' unsigned additions.
        const kept = xmlDocumentBytes(reply.xml);
        return { bytes: kept.bytes, contentType: `application/xml; charset=${kept.charset}` };
      },
    };
  },
  roots: ["RespuestaDTE", "EnvioRecibos"],
  names: { entries: { RECEPTION: "RecepcionEnvio", RESULT: "ResultadoDTE", RECEIPT: "Recibo" }, envelopeCode: "EstadoRecepEnv" },
};
