/**
 * The RecepcionEnvio a received file is answered with (sii-formats.md §5): when an
 * e-mail or an upload brings new documents and the company has an active certificate, one signed
 * RespuestaDTE for the file (every DTE taken in from it, each with its EstadoRecepDTE), stored beside
 * the file and mailed to the issuer: its exchange address in the SII's taxpayer directory, else the
 * sender of the e-mail (reply-mail.ts: attempted at once, retried by the queue). Each document
 * records where it goes and how its mailing went (`received_file.acknowledgment`).
 *
 * It never undoes an intake: without a certificate nothing is built (a document's own RecepcionEnvio
 * is then built on its first download, once one is uploaded), and a failure to build or mail it is
 * logged and left (the file's reply stays downloadable when it was stored).
 */
import { and, eq, sql } from "drizzle-orm";
import { createDb } from "../storage/db/client";
import { ordinalOfId } from "../storage/db/document-store";
import { receivedDocuments } from "../storage/db/schema";
import type { CompanyRow } from "../accounts/companies/repository";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { AppError } from "../lib/errors";
import { fileReplyKey, issuerAddress, recepcionEnvioXml } from "./replies";
import { attemptReplyMail, mailDueBy, pendingMail, type ReplyMail } from "./reply-mail";
import { writeIn } from "./stores";
import type { ReceivedRow, ReplyRecipient } from "./view";

/** What a document records of its file's RecepcionEnvio. */
export interface Acknowledgment {
  at: string;
  /** Where it is mailed; null when no address is known or no mail binding is configured. */
  reply_to: ReplyRecipient | null;
  /** Its mailing (reply-mail.ts); null when it is not mailed; absent on records from before mails were tracked. */
  mail?: ReplyMail | null;
  /** The partitions holding documents of the file, each recording the mailing (not shown in the API); absent on records from before it was kept. */
  partitions?: number[];
}

/**
 * Answers the file kept at `xmlKey` whose documents `rows` were just stored; `sender`: the e-mail's
 * sender, if it came by e-mail. Returns what the documents record, or null when nothing was built.
 */
export async function acknowledgeFile(env: Env, company: Pick<CompanyRow, "id" | "taxId">, xmlKey: string, rows: ReceivedRow[], sender: string | null): Promise<Acknowledgment | null> {
  if (rows.length === 0) return null;
  try {
    const signer = await signerOf(env, company.id);
    if (!signer) return null;
    const xml = await recepcionEnvioXml(company, rows, signer);
    await env.FILES.put(fileReplyKey(xmlKey), xml, { httpMetadata: { contentType: "application/xml" } });
    const to = env.SEND_EMAIL && env.RECEPTION_DOMAIN ? await issuerAddress(env, rows[0]!.issuerRut, async () => sender) : null;
    const now = new Date();
    const partitions = [...new Set(rows.map((r) => ordinalOfId(r.id)).filter((o): o is number => o !== null))].sort((a, b) => a - b);
    const ack: Acknowledgment = { at: now.toISOString(), reply_to: to, mail: to ? pendingMail(now) : null, partitions };
    await record(env, company.id, xmlKey, partitions, ack);
    if (to) ack.mail = (await attemptReplyMail(env, { companyId: company.id, receivedId: rows[0]!.id, reply: "acknowledgment", attempt: 1, partitions })) ?? ack.mail;
    return ack;
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "reception acknowledgment failed", company_id: company.id, file: xmlKey, error: String(e) }));
    return null;
  }
}

async function signerOf(env: Env, companyId: string) {
  try {
    return await requireSigningCredentials(createDb(env.DB), env, companyId);
  } catch (e) {
    if (e instanceof AppError) return null;
    throw e;
  }
}

/** Writes the acknowledgment into the file's documents, one statement per partition they live in (with the sweep's due time while its mail is PENDING). */
async function record(env: Env, companyId: string, xmlKey: string, partitions: number[], ack: Acknowledgment): Promise<void> {
  const value = JSON.stringify(ack);
  const due = ack.mail?.next_attempt_at ? { mailDueAt: mailDueBy(ack.mail.next_attempt_at) } : {};
  for (const ordinal of partitions) {
    await writeIn(env, companyId, ordinal, (db) =>
      db
        .update(receivedDocuments)
        .set({ receivedFile: sql`json_set(coalesce(${receivedDocuments.receivedFile}, '{}'), '$.acknowledgment', json(${value}))`, ...due })
        .where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.xmlKey, xmlKey))),
    );
  }
}
