/**
 * The signed exchange replies of Ley 19.983 / sii-formats.md §5, built with the engine
 * (countries/cl responses): RespuestaDTE with ResultadoDTE for ACD and the claims, EnvioRecibos for
 * ERM, RespuestaDTE with RecepcionEnvio for the file that brought a document. Stored in R2 under
 * keys built from the company and the document id; mailed to the issuer (its exchange address from
 * the taxpayer directory, else the mail's sender) through SEND_EMAIL when bound.
 */
import type { Credentials } from "../countries/port";
import { buildEnvioRecibos, buildRecepcionEnvio, buildResultadoDte, isValidRut, type ReceptionAction, ownCredentials } from "../countries/cl";
import { and, eq } from "drizzle-orm";
import { inboundMessages } from "../storage/db/schema";
import { partitionDb } from "./stores";
import type { CompanyRow } from "../accounts/companies/repository";
import { toLocalDateTime } from "../lib/time";
import { EMAIL_ADDRESS, exchangeAddress } from "../accounts/taxpayers/exchange-address";
import type { Check } from "./checks";
import type { ReceivedRow, ReplyRecipient } from "./view";
import { receivedFileOfRow, receptionStatusText } from "./view";

export type ReplyType = "resultado_dte" | "envio_recibos" | "recepcion_envio";
export interface ReplyFile { type: ReplyType; key: string; xml: Uint8Array }

export function replyKey(companyId: string, documentId: string, type: ReplyType): string {
  return `reception/${companyId}/replies/${documentId}/${type}.xml`;
}

/** Where the RecepcionEnvio of a whole file kept at `xmlKey` (intake.ts fileKey) is stored (acknowledge.ts). */
export const fileReplyKey = (xmlKey: string) => xmlKey.replace(/received\.xml$/, "recepcion_envio.xml");

/** CodEnvio: a stable number for the reception of this document (from its id's time part). */
function receptionCode(row: ReceivedRow): number {
  return Math.max(1, Date.parse(row.createdAt) % 1_000_000_000);
}

function keyOf(row: ReceivedRow) {
  return { type: row.documentType, folio: row.folio, issueDate: row.issueDate ?? "", issuerRut: row.issuerRut, receiverRut: row.recipientRut ?? "", total: row.total ?? "0" };
}

const CLAIM_TEXT: Record<string, string> = { RCD: "Reclamo al contenido del documento", RFP: "Reclamo por falta parcial de mercaderías", RFT: "Reclamo por falta total de mercaderías" };

export async function buildReplies(env: Env, company: CompanyRow, row: ReceivedRow, action: ReceptionAction, reason: string | null, credentials: Credentials, at: Date): Promise<ReplyFile[]> {
  const signer = ownCredentials(credentials);
  const header = { responderRut: company.taxId, recipientRut: row.issuerRut, timestamp: toLocalDateTime(at, "America/Santiago"), signer };
  let file: ReplyFile;
  if (action === "ERM") {
    const r = await buildEnvioRecibos({ ...header, receipts: [{ ...keyOf(row), place: (reason ?? "Recepción conforme").slice(0, 80), signerRut: signer.rut ?? company.taxId }] });
    file = { type: "envio_recibos", key: replyKey(company.id, row.id, "envio_recibos"), xml: r.xml };
  } else {
    const accepted = action === "ACD";
    const text = (reason ?? (accepted ? "Documento aceptado" : CLAIM_TEXT[action]!)).slice(0, 256);
    const r = await buildResultadoDte({ ...header, responseId: receptionCode(row), results: [{ ...keyOf(row), receptionCode: receptionCode(row), status: accepted ? 0 : 2, statusText: text, ...(accepted ? {} : { rejectionCode: -1 }) }] });
    file = { type: "resultado_dte", key: replyKey(company.id, row.id, "resultado_dte"), xml: r.xml };
  }
  await env.FILES.put(file.key, file.xml, { httpMetadata: { contentType: "application/xml" } });
  return [file];
}

/**
 * RecepcionEnvio for one received document, built on its first download and kept when the file that
 * brought it was not answered at intake (acknowledge.ts: no certificate then, or received before).
 */
export async function buildRecepcionEnvioFor(env: Env, company: CompanyRow, row: ReceivedRow, signer: Credentials): Promise<ReplyFile> {
  const file: ReplyFile = { type: "recepcion_envio", key: replyKey(company.id, row.id, "recepcion_envio"), xml: await recepcionEnvioXml(company, [row], signer) };
  await env.FILES.put(file.key, file.xml, { httpMetadata: { contentType: "application/xml" } });
  return file;
}

/**
 * A signed RespuestaDTE with one RecepcionEnvio for `rows`, documents of one received file: the
 * envelope as the file names it (its name, SetDTE ID and signature digest, the Caratula's RUTs; the
 * first document's id where the file did not say, as for documents received before these were
 * kept), EstadoRecepEnv on the envelope itself (2 when its signature failed, else 0: received), and
 * each document's own EstadoRecepDTE in its RecepcionDTE.
 */
export async function recepcionEnvioXml(company: Pick<CompanyRow, "taxId">, rows: ReceivedRow[], credentials: Credentials): Promise<Uint8Array> {
  const signer = ownCredentials(credentials);
  const first = rows[0]!;
  const received = receivedFileOfRow(first);
  const r = await buildRecepcionEnvio({
    responderRut: company.taxId, recipientRut: first.issuerRut, timestamp: toLocalDateTime(new Date(), "America/Santiago"), signer, responseId: receptionCode(first),
    envelopes: [{
      fileName: latin1(received?.name ?? `${first.id}.xml`), receivedAt: toLocalDateTime(received?.received_at ?? first.createdAt, "America/Santiago"), receptionCode: receptionCode(first), envelopeId: latin1(received?.envelope_id ?? first.id),
      ...(received?.digest ? { digest: received.digest } : {}),
      issuerRut: rutOr(received?.caratula_issuer, first.issuerRut), receiverRut: rutOr(received?.caratula_recipient, company.taxId), ...envelopeReception(first),
      documents: rows.map((row) => ({ ...keyOf(row), status: row.receptionStatus ?? 99, statusText: receptionStatusText(row.receptionStatus ?? 99)! })),
    }],
  });
  return r.xml;
}

/** EstadoRecepEnv and its text (sii-formats.md §5) from the envelope's own check: the documents' verdicts are each RecepcionDTE's. */
function envelopeReception(row: ReceivedRow): { status: number; statusText: string } {
  const checks = row.checks ? (JSON.parse(row.checks) as Check[]) : [];
  const signature = checks.find((c) => c.name === "envelope_signature");
  return signature?.result === "FAILED" ? { status: 2, statusText: "Envio Rechazado - Error de Firma" } : { status: 0, statusText: "Envio Recibido Conforme" };
}

/** Text from the received file written into the ISO-8859-1 reply: a character it cannot hold becomes "_" (a UTF-8 file or an attachment's name may carry any). */
const latin1 = (s: string) => s.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, "_");

/** A RUT as the Caratula wrote it when valid (RutEmisor, RutReceptor are RUTType), else `fallback`. */
const rutOr = (rut: string | null | undefined, fallback: string) => (rut && isValidRut(rut) ? rut : fallback);

/**
 * Where the issuer gets replies, for every channel: its exchange address in the SII's taxpayer
 * directory (the imported load; in simulator mode also the simulator's own companies), which the
 * SII publishes for exactly this; else the sender of the e-mail that brought the document (less
 * reliable: a relay or a no-reply address). Null when neither is known.
 */
export async function replyRecipient(env: Env, row: ReceivedRow): Promise<ReplyRecipient | null> {
  return issuerAddress(env, row.issuerRut, async () => {
    if (row.channel !== "EMAIL" || !row.messageId) return null;
    const store = await partitionDb(env, row.companyId, row.messageId);
    const m = store && (await store.select({ sender: inboundMessages.sender }).from(inboundMessages).where(and(eq(inboundMessages.companyId, row.companyId), eq(inboundMessages.id, row.messageId))).get());
    return m?.sender ?? null;
  });
}

/** `issuerRut`'s exchange address in the taxpayer directory, else the e-mail sender `senderOf` finds (read only when needed), if it is an address. */
export async function issuerAddress(env: Env, issuerRut: string, senderOf: () => Promise<string | null>): Promise<ReplyRecipient | null> {
  const listed = await exchangeAddress(env.DB, env.SII_MODE, issuerRut);
  if (listed) return { email: listed, source: "TAXPAYER_DIRECTORY" };
  const sender = await senderOf();
  return sender && EMAIL_ADDRESS.test(sender) ? { email: sender, source: "EMAIL_SENDER" } : null;
}

