/** Downloads of a received document: the DTE as received (byte range of the stored file) and the replies. */
import { createDb } from "../db/client";
import type { CompanyRow } from "../domain/companies/repository";
import { requireSigningCredentials } from "../domain/certificates/certificates";
import { AppError } from "../errors";
import { getReceived } from "./queries";
import { envelopeResolution, receivedPdf, type EnvelopeResolution } from "./pdf";
import { receivedFileOfRow, type ReceivedRow } from "./view";
import { buildRecepcionEnvioFor, fileReplyKey, replyKey, type ReplyType } from "./replies";

const xmlHeaders = (name: string) => ({ "Content-Type": "application/xml; charset=ISO-8859-1", "Content-Disposition": `attachment; filename="${name}"` });

async function dteBytes(env: Env, row: ReceivedRow): Promise<ArrayBuffer> {
  if (!row.xmlKey || row.xmlStart === null || row.xmlEnd === null) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `The XML of ${row.id} has not arrived yet: the SII lists it, the supplier has not sent it.`);
  const object = await env.FILES.get(row.xmlKey, { range: { offset: row.xmlStart, length: row.xmlEnd - row.xmlStart } });
  if (!object) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `The XML of ${row.id} is missing from storage.`);
  return object.arrayBuffer();
}

/** The issuer's resolution from the Caratula at the start of the envelope the DTE came in; null for a DTE that came alone. */
async function resolutionOf(env: Env, row: ReceivedRow): Promise<EnvelopeResolution | null> {
  if (!row.xmlKey || !row.xmlStart) return null;
  const object = await env.FILES.get(row.xmlKey, { range: { offset: 0, length: Math.min(row.xmlStart, ENVELOPE_HEAD_BYTES) } });
  return object ? envelopeResolution(new Uint8Array(await object.arrayBuffer())) : null;
}
/** How much of an envelope's start is read for its Caratula (which precedes the DTEs; 20 SubTotDTE lines are about 1.5 KB). */
const ENVELOPE_HEAD_BYTES = 16 * 1024;

export async function downloadFile(env: Env, company: CompanyRow, id: string, type: "xml" | "pdf" | ReplyType): Promise<Response> {
  const row = await getReceived(env, company.id, id);
  const name = `${type === "xml" ? "DTE" : type}_${row.issuerRut}_T${row.documentType}_F${row.folio}.${type === "pdf" ? "pdf" : "xml"}`;
  if (type === "xml") return new Response(await dteBytes(env, row), { headers: xmlHeaders(name) });
  if (type === "pdf") {
    let pdf: Uint8Array | null = null;
    try {
      const [dte, resolution] = await Promise.all([dteBytes(env, row), resolutionOf(env, row)]);
      pdf = await receivedPdf(new Uint8Array(dte), resolution);
    } catch (e) {
      if (e instanceof AppError) throw e;
      pdf = null;
    }
    if (!pdf) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `${row.id} cannot be printed: its XML is not a readable DTE with a stamp.`);
    return new Response(pdf as Uint8Array<ArrayBuffer>, { headers: { "Content-Type": "application/pdf", "Content-Disposition": `attachment; filename="${name}"` } });
  }
  // A file answered at intake has one RecepcionEnvio for all its documents (acknowledge.ts), the one its issuer was sent.
  const fileReply = type === "recepcion_envio" && row.xmlKey && receivedFileOfRow(row)?.acknowledgment;
  let object = await env.FILES.get(fileReply ? fileReplyKey(row.xmlKey!) : replyKey(company.id, row.id, type));
  if (!object && type === "recepcion_envio" && row.xmlKey) {
    await buildRecepcionEnvioFor(env, company, row, await requireSigningCredentials(createDb(env.DB), env, company.id));
    object = await env.FILES.get(replyKey(company.id, row.id, type));
  }
  if (!object) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `No ${type} exists for ${row.id}${type === "recepcion_envio" ? "" : ": it is produced by send_response"}.`);
  return new Response(await object.arrayBuffer(), { headers: xmlHeaders(name) });
}
