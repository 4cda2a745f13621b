/** The upload channel: one file through the intake, recorded as an inbound message. */
import { partitionedId, storeForId } from "../storage/db/document-store";
import { inboundMessages } from "../storage/db/schema";
import type { CompanyRow } from "../accounts/companies/repository";
import { AppError } from "../lib/errors";
import { intakeFile, type IntakeResult } from "./intake";
import { uploadMessage } from "./messages";
import { receivedByIds } from "./stores";
import { receivedView } from "./view";

/** Largest uploaded file (the API's body limit is 2 MiB). */
export const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

export async function viewsOf(env: Env, companyId: string, result: IntakeResult) {
  const byId = await receivedByIds(env, companyId, result.documents.map((d) => d.id));
  return result.documents.filter((d) => byId.has(d.id)).map((d) => ({ ...receivedView(byId.get(d.id)!), outcome: d.outcome }));
}

/** Whether the file starts as a zip archive does (a local file header, "PK\x03\x04"). */
const isZipArchive = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

/** `file`: the multipart part's file name and type, recorded on the inbound message (display only). */
export async function intakeUpload(env: Env, company: CompanyRow, bytes: Uint8Array, file: { name?: string | null; type?: string | null } = {}) {
  if (bytes.length > MAX_UPLOAD_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `The file is larger than ${MAX_UPLOAD_BYTES} bytes.`);
  // Suppliers often send their XML zipped: say so rather than "not well-formed XML".
  if (isZipArchive(bytes)) throw new AppError("RECEPTION_FILE_INVALID", "The file is a zip archive: upload the XML file inside it (the company's reception e-mail address takes zip attachments).");
  const result = await intakeFile(env, company, bytes, { channel: "UPLOAD", message: (ordinal) => partitionedId("inm", ordinal), fileName: file.name ?? null });
  // A refused upload stores nothing, not even a partition: the caller has the answer, and a 4xx changes nothing.
  if (result.problem) throw new AppError("RECEPTION_FILE_INVALID", `The file was not taken in: ${result.problem}`);
  const messageId = result.messageId!;
  await storeForId(env, company.id, messageId)!.db.insert(inboundMessages).values(uploadMessage({ id: messageId, companyId: company.id, bytes, sha256: result.fileSha256, outcome: "STORED", detail: null, documents: result.documents.length, file }));
  return { kind: result.kind as "EnvioDTE" | "DTE", file_sha256: result.fileSha256, documents: await viewsOf(env, company.id, result) };
}
