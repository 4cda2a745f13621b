/**
 * The company's log of inbound messages: every e-mail that reached its reception address and every
 * file it uploaded, with what became of it (STORED, NO_DTE, MALFORMED, TOO_LARGE, ZIP_REFUSED) and
 * the received documents it brought. What a bookkeeper needs when a supplier says "we sent it".
 * Messages live beside the received documents, in the company's document stores (./stores.ts); one
 * that matched no company stays in D1 and belongs to no company's log.
 */
import { and, count, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { pageAcrossPartitions } from "../storage/db/document-store/lists";
import { companyStores, ordinalOfId } from "../storage/db/document-store";
import { inboundMessages, receivedDocuments, type InboundAttachment } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { MESSAGE_OUTCOMES } from "./schema";
import { partitionDb } from "./stores";

type StoreEnv = Parameters<typeof partitionDb>[0];
export type InboundMessageRow = typeof inboundMessages.$inferSelect;

export interface MessageFilter {
  outcome?: (typeof MESSAGE_OUTCOMES)[number];
  channel?: "EMAIL" | "UPLOAD";
  receivedFrom?: string;
  receivedTo?: string;
}

function where(companyId: string, f: MessageFilter): SQL {
  const m = inboundMessages;
  const c: SQL[] = [eq(m.companyId, companyId)];
  if (f.outcome) c.push(eq(m.outcome, f.outcome));
  if (f.channel) c.push(eq(m.channel, f.channel));
  if (f.receivedFrom) c.push(gte(m.createdAt, f.receivedFrom));
  if (f.receivedTo) c.push(lte(m.createdAt, f.receivedTo));
  return and(...c)!;
}

/** One page of the company's inbound messages, newest first, across its partitions. */
export async function listInboundMessages(env: StoreEnv, companyId: string, f: MessageFilter, page: { offset: number; perPage: number }) {
  const w = where(companyId, f);
  const newestFirst = [desc(inboundMessages.createdAt), desc(inboundMessages.id)];
  return pageAcrossPartitions(env, companyId, {
    count: async (db) => (await db.select({ n: count() }).from(inboundMessages).where(w))[0]?.n ?? 0,
    rows: (db, limit, offset) => db.select().from(inboundMessages).where(w).orderBy(...newestFirst).limit(limit).offset(offset),
  }, page);
}

/** One inbound message of the company and the ids of the received documents first stored from it. */
export async function getInboundMessage(env: StoreEnv, companyId: string, id: string): Promise<{ row: InboundMessageRow; documentIds: string[] }> {
  const db = await partitionDb(env, companyId, id);
  const row = db && (await db.select().from(inboundMessages).where(and(eq(inboundMessages.companyId, companyId), eq(inboundMessages.id, id))).get());
  if (!row) throw new AppError("INBOUND_MESSAGE_NOT_FOUND", `No inbound message ${id} for this company.`);
  return { row, documentIds: await documentsOf(env, companyId, id) };
}

/**
 * The documents a message brought, in arrival order: they were written to the partition open when
 * its file was taken in, the message's own or (across a roll-over) a newer one.
 */
async function documentsOf(env: StoreEnv, companyId: string, messageId: string): Promise<string[]> {
  const from = ordinalOfId(messageId) ?? 0;
  const partitions = (await companyStores(env, companyId)).filter((p) => p.ordinal >= from).reverse();
  const ids: string[] = [];
  for (const p of partitions) ids.push(...(await documentIdsIn(p.db, companyId, messageId)));
  return ids;
}

function documentIdsIn(db: Db, companyId: string, messageId: string): Promise<string[]> {
  const r = receivedDocuments;
  return db.select({ id: r.id }).from(r).where(and(eq(r.companyId, companyId), eq(r.messageId, messageId))).orderBy(r.createdAt, r.id).then((rows) => rows.map((x) => x.id));
}

/** The inbound message row of an uploaded file (the log's UPLOAD channel): its size, hash, outcome and the file as its one attachment. */
export function uploadMessage(m: { id: string; companyId: string; bytes: Uint8Array; sha256: string; outcome: InboundMessageRow["outcome"]; detail: string | null; documents: number; file: { name?: string | null; type?: string | null } }) {
  return {
    id: m.id, companyId: m.companyId, channel: "UPLOAD", size: m.bytes.length, sha256: m.sha256, outcome: m.outcome, detail: m.detail?.slice(0, 1000) ?? null, documents: m.documents,
    attachments: [attachmentRecord(m.file.name, m.file.type, m.bytes.length, "XML")],
  } satisfies typeof inboundMessages.$inferInsert;
}

/** Text from outside kept for display only: control characters removed, at most `max` characters; null when nothing is left. */
export function displayText(s: string | null | undefined, max: number): string | null {
  return s ? s.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, max) || null : null;
}

/** An attachment as the log records it: its name and type as sent, for display only (control characters removed, bounded). */
export function attachmentRecord(name: string | null | undefined, contentType: string | null | undefined, size: number, readAs: InboundAttachment["readAs"]): InboundAttachment {
  return { name: displayText(name, 255), contentType: displayText(contentType, 100), size, readAs };
}

/** The message as the API shows it. */
export function inboundMessageView(row: InboundMessageRow) {
  return {
    id: row.id,
    id_company: row.companyId!,
    channel: row.channel as "EMAIL" | "UPLOAD",
    sender: row.sender,
    recipient: row.recipient,
    subject: row.subject,
    size: row.size,
    sha256: row.sha256,
    outcome: row.outcome as (typeof MESSAGE_OUTCOMES)[number],
    detail: row.detail,
    documents: row.documents,
    attachments: (row.attachments ?? []).map((a) => ({ name: a.name, content_type: a.contentType, size: a.size, read_as: a.readAs })),
    received_at: row.createdAt,
  };
}
