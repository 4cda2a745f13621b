/** The upload channel: one file through the intake, recorded as an inbound message. */
import { and, eq, inArray } from "drizzle-orm";
import { createDb } from "../db/client";
import { inboundMessages, receivedDocuments } from "../db/schema";
import type { CompanyRow } from "../domain/companies/repository";
import { AppError } from "../errors";
import { newId } from "../lib/ids";
import { intakeFile, type IntakeResult } from "./intake";
import { receivedView } from "./view";

/** Largest uploaded file (the API's body limit is 2 MiB). */
export const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

export async function recordMessage(env: Env, m: { companyId: string | null; channel: string; sender?: string | null; recipient?: string | null; size: number; sha256?: string | null; outcome: string; detail?: string | null; documents?: number }): Promise<string> {
  const id = newId("inm");
  await createDb(env.DB).insert(inboundMessages).values({ id, ...m, detail: m.detail?.slice(0, 1000) ?? null, documents: m.documents ?? 0 });
  return id;
}

export async function viewsOf(env: Env, companyId: string, result: IntakeResult) {
  const ids = result.documents.map((d) => d.id);
  const db = createDb(env.DB);
  const rows = [];
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < ids.length; i += 90) rows.push(...(await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), inArray(receivedDocuments.id, ids.slice(i, i + 90))))));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return result.documents.filter((d) => byId.has(d.id)).map((d) => ({ ...receivedView(byId.get(d.id)!), outcome: d.outcome }));
}

export async function intakeUpload(env: Env, company: CompanyRow, bytes: Uint8Array) {
  if (bytes.length > MAX_UPLOAD_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", `The file is larger than ${MAX_UPLOAD_BYTES} bytes.`);
  const messageId = newId("inm");
  const result = await intakeFile(env, company, bytes, "UPLOAD", messageId);
  // A refused upload stores nothing (the caller has the answer; issue 15: no change after a 4xx).
  if (result.problem) throw new AppError("RECEPTION_FILE_INVALID", `The file was not taken in: ${result.problem}`);
  await createDb(env.DB).insert(inboundMessages).values({ id: messageId, companyId: company.id, channel: "UPLOAD", size: bytes.length, sha256: result.fileSha256, outcome: "STORED", detail: null, documents: result.documents.length });
  return { kind: result.kind as "EnvioDTE" | "DTE", file_sha256: result.fileSha256, documents: await viewsOf(env, company.id, result) };
}
