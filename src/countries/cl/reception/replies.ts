/**
 * The signed exchange replies of Ley 19.983 (sii-formats.md §5): RespuestaDTE with ResultadoDTE for
 * an acceptance (ACD) or a claim (RCD, RFP, RFT), EnvioRecibos for the receipt of goods (ERM),
 * RespuestaDTE with RecepcionEnvio for a received file; and what the SII's answers to recording a
 * response mean.
 */
import type { Inbound, ReceivedDocumentKey, ResponseKind } from "../../port";
import { toLocalDateTime } from "../../../lib/time";
import { buildEnvioRecibos, buildRecepcionEnvio, buildResultadoDte, type DocumentKey } from "../exchange/responses";
import { ownCredentials } from "../pki/certificate";
import { isValidRut } from "../documents/rut";

const ZONE = "America/Santiago";

export const RESPONSES: readonly ResponseKind[] = [
  { code: "ACD", meaning: "ACCEPT_CONTENT", name: "acceptance of the content (ACD)" },
  { code: "ERM", meaning: "GOODS_RECEIVED", name: "acknowledgment of goods or services received (ERM)" },
  { code: "RCD", meaning: "CLAIM", name: "claim against the content (RCD)" },
  { code: "RFP", meaning: "CLAIM", name: "claim for partial lack of goods (RFP)" },
  { code: "RFT", meaning: "CLAIM", name: "claim for total lack of goods (RFT)" },
];

const STATUS_TEXT: Record<number, string> = { 0: "DTE Recibido OK", 1: "DTE No Recibido - Error de Firma", 2: "DTE No Recibido - Error en RUT Emisor", 3: "DTE No Recibido - Error en RUT Receptor", 4: "DTE No Recibido - DTE Repetido", 99: "DTE No Recibido - Otros" };
/** RecepDTEGlosa: the words of an EstadoRecepDTE. */
export const statusText = (code: number) => STATUS_TEXT[code] ?? "DTE No Recibido - Otros";

/** The SII's codResp: 0 OK and 7 already recorded are successes. */
export const refusalOf: Inbound["refusalOf"] = (code, message) => {
  if (code === 0 || code === 7) return null;
  if (code === 8) return { reason: "DEADLINE_PASSED", text: `The SII says the 8 days have passed (${code}: ${message}).` };
  if ([5, 6, 11, 12, 13, 19].includes(code)) return { reason: "CONFLICT", text: `The SII already holds an incompatible action for this document (${code}: ${message}).` };
  if (code === 16 || code === 17 || code === 18) return { reason: "NOT_AT_AUTHORITY", text: `The SII does not hold this document (${code}: ${message}).` };
  return { reason: "REFUSED", text: `The SII refused the action (${code}: ${message}).` };
};

const keyOf = (d: ReceivedDocumentKey): DocumentKey => ({ type: d.documentType, folio: d.folio, issueDate: d.issueDate, issuerRut: d.issuerRut, receiverRut: d.receiverRut, total: d.total });

const CLAIM_TEXT: Record<string, string> = { RCD: "Reclamo al contenido del documento", RFP: "Reclamo por falta parcial de mercaderías", RFT: "Reclamo por falta total de mercaderías" };

export const reply: Inbound["reply"] = async (p) => {
  const signer = ownCredentials(p.signer);
  const header = { responderRut: p.responderRut, recipientRut: p.document.issuerRut, timestamp: toLocalDateTime(p.at, ZONE), signer };
  if (p.response === "ERM") {
    const r = await buildEnvioRecibos({ ...header, receipts: [{ ...keyOf(p.document), place: (p.reason ?? "Recepción conforme").slice(0, 80), signerRut: signer.rut ?? p.responderRut }] });
    return { type: "envio_recibos", xml: r.xml };
  }
  const accepted = p.response === "ACD";
  const text = (p.reason ?? (accepted ? "Documento aceptado" : CLAIM_TEXT[p.response]!)).slice(0, 256);
  const r = await buildResultadoDte({ ...header, responseId: p.receptionCode, results: [{ ...keyOf(p.document), receptionCode: p.receptionCode, status: accepted ? 0 : 2, statusText: text, ...(accepted ? {} : { rejectionCode: -1 }) }] });
  return { type: "resultado_dte", xml: r.xml };
};

/** Text from the received file written into the ISO-8859-1 reply: a character it cannot hold becomes "_" (a UTF-8 file or an attachment's name may carry any). */
const latin1 = (s: string) => s.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, "_");

/** A RUT as the Caratula wrote it when valid (RutEmisor, RutReceptor are RUTType), else `fallback`. */
const rutOr = (rut: string | null | undefined, fallback: string) => (rut && isValidRut(rut) ? rut : fallback);

/**
 * A RespuestaDTE with one RecepcionEnvio: EstadoRecepEnv on the envelope itself (2 when its
 * signature failed, else 0: received), and each document's own EstadoRecepDTE in its RecepcionDTE.
 */
export const acknowledgment: Inbound["acknowledgment"] = async (p) => {
  const f = p.file;
  const envelope = f.signatureFailed ? { status: 2, statusText: "Envio Rechazado - Error de Firma" } : { status: 0, statusText: "Envio Recibido Conforme" };
  const r = await buildRecepcionEnvio({
    responderRut: p.responderRut,
    recipientRut: p.recipientRut,
    timestamp: toLocalDateTime(p.at, ZONE),
    signer: ownCredentials(p.signer),
    responseId: p.receptionCode,
    envelopes: [{
      fileName: latin1(f.name), receivedAt: toLocalDateTime(f.receivedAt, ZONE), receptionCode: p.receptionCode, envelopeId: latin1(f.envelopeId),
      ...(f.digest ? { digest: f.digest } : {}),
      issuerRut: rutOr(f.issuerRut, p.recipientRut), receiverRut: rutOr(f.receiverRut, p.responderRut), ...envelope,
      documents: p.documents.map((d) => ({ ...keyOf(d), status: d.status, statusText: statusText(d.status) })),
    }],
  });
  return r.xml;
};
