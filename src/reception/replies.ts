/**
 * The signed replies to a supplier, built by the country (countries/port.ts Inbound: a response's
 * reply, a received file's acknowledgment). Stored in R2 under
 * keys built from the company and the document id; mailed to the issuer (its exchange address from
 * the taxpayer directory, else the mail's sender) through SEND_EMAIL when bound.
 */
import type { Credentials, ReceivedDocumentKey, SupplierResponse } from "../countries/port";
import { issuingCountry } from "../countries";
import { and, eq } from "drizzle-orm";
import { inboundMessages } from "../storage/db/schema";
import { partitionDb } from "./stores";
import type { CompanyRow } from "../accounts/companies/repository";
import { EMAIL_ADDRESS, exchangeAddress } from "../accounts/taxpayers/exchange-address";
import type { Check } from "./checks";
import type { ReceivedRow, ReplyRecipient } from "./view";
import { receivedFileOfRow } from "./view";

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

function keyOf(row: ReceivedRow): ReceivedDocumentKey {
  return { documentType: row.documentType, folio: row.folio, issueDate: row.issueDate ?? "", issuerRut: row.issuerRut, receiverRut: row.recipientRut ?? "", total: row.total ?? "0" };
}

/** The signed reply that states `response` to the issuer of `row`, stored for download. */
export async function buildReplies(env: Env, company: CompanyRow, row: ReceivedRow, response: SupplierResponse, reason: string | null, signer: Credentials, at: Date): Promise<ReplyFile[]> {
  const r = await issuingCountry().inbound.reply({ response, reason, document: keyOf(row), responderRut: company.taxId, receptionCode: receptionCode(row), signer, at });
  const type = r.type as ReplyType;
  const file: ReplyFile = { type, key: replyKey(company.id, row.id, type), xml: r.xml };
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
export async function recepcionEnvioXml(company: Pick<CompanyRow, "taxId">, rows: ReceivedRow[], signer: Credentials): Promise<Uint8Array> {
  const first = rows[0]!;
  const received = receivedFileOfRow(first);
  return issuingCountry().inbound.acknowledgment({
    responderRut: company.taxId,
    recipientRut: first.issuerRut,
    receptionCode: receptionCode(first),
    signer,
    at: new Date(),
    file: {
      name: received?.name ?? `${first.id}.xml`,
      receivedAt: received?.received_at ?? first.createdAt,
      envelopeId: received?.envelope_id ?? first.id,
      digest: received?.digest ?? null,
      issuerRut: received?.caratula_issuer ?? null,
      receiverRut: received?.caratula_recipient ?? null,
      signatureFailed: envelopeSignatureFailed(first),
    },
    documents: rows.map((row) => ({ ...keyOf(row), status: row.receptionStatus ?? 99 })),
  });
}

/** Whether the envelope's own signature failed (the documents' verdicts are each their own). */
function envelopeSignatureFailed(row: ReceivedRow): boolean {
  const checks = row.checks ? (JSON.parse(row.checks) as Check[]) : [];
  return checks.find((c) => c.name === "envelope_signature")?.result === "FAILED";
}

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

