/** Downloads of a received document: the DTE as verified (its own stored XML, intake.ts dteKey), its PDF and the replies. */
import { createDb } from "../storage/db/client";
import type { CompanyRow } from "../accounts/companies/repository";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { AppError } from "../lib/errors";
import { getReceived } from "./queries";
import { dteKey } from "./intake";
import { issuingCountry } from "../countries";
import { receivedFileOfRow, type ReceivedRow } from "./view";
import { buildRecepcionEnvioFor, fileReplyKey, replyKey, type ReplyType } from "./replies";

const xmlHeaders = (name: string) => ({ "Content-Type": "application/xml; charset=ISO-8859-1", "Content-Disposition": `attachment; filename="${name}"` });

async function dteObject(env: Env, row: ReceivedRow): Promise<R2ObjectBody> {
  if (!row.xmlKey || !row.xmlSha256) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `The XML of ${row.id} has not arrived yet: the SII lists it, the supplier has not sent it.`);
  const object = await env.FILES.get(dteKey(row.companyId, row.xmlSha256));
  if (!object) throw new AppError("RECEPTION_FILE_NOT_AVAILABLE", `The XML of ${row.id} is missing from storage.`);
  return object;
}

export async function downloadFile(env: Env, company: CompanyRow, id: string, type: "xml" | "pdf" | ReplyType): Promise<Response> {
  const row = await getReceived(env, company.id, id);
  const name = `${type === "xml" ? "DTE" : type}_${row.issuerRut}_T${row.documentType}_F${row.folio}.${type === "pdf" ? "pdf" : "xml"}`;
  if (type === "xml") {
    const object = await dteObject(env, row);
    return new Response(await object.arrayBuffer(), { headers: { ...xmlHeaders(name), "Content-Type": object.httpMetadata?.contentType ?? "application/xml" } });
  }
  if (type === "pdf") {
    let pdf: Uint8Array | null = null;
    try {
      pdf = await issuingCountry().printing.received({ xml: new Uint8Array(await (await dteObject(env, row)).arrayBuffer()), resolution: receivedFileOfRow(row)?.resolution });
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
