/**
 * The e-mail channel: the Worker's email() handler (Cloudflare Email Routing). The recipient address
 * dte+<token>@<RECEPTION_DOMAIN> names the company; XML attachments, and XML inside zip attachments,
 * go through the same intake as uploads. Every message is recorded in inbound_messages (the
 * company's open document store; D1 for one that matched no company) with its
 * outcome (STORED, REPLY, BOUNCE, NO_DTE, UNKNOWN_RECIPIENT, MALFORMED, TOO_LARGE, ZIP_REFUSED) and its Subject;
 * a buyer's reply to a document the company issued (RespuestaDTE, EnvioRecibos) is read onto that
 * document (src/invoices/buyer-replies.ts); a bounce of a mail the company sent is read onto
 * that mail (./bounces.ts);
 * nothing here throws out of the handler (a failure is logged). The company reads its messages at
 * GET /api/reception/messages (./messages.ts).
 */
import { issuingCountry } from "../countries";
import PostalMime from "postal-mime";
import { eq } from "drizzle-orm";
import { createDb } from "../storage/db/client";
import { openStore, partitionedId } from "../storage/db/document-store";
import { outboxInsert } from "../storage/db/document-store/outbox";
import { companies, inboundMessages, type InboundAttachment } from "../storage/db/schema";
import { companyOfAddress } from "../accounts/companies/reception-address";
import { sha256Hex } from "../lib/crypto";
import { newId } from "../lib/ids";
import { describeReplyIntake, recordBuyerReply } from "../invoices/buyer-replies";
import { intakeFile, MAX_DTES_PER_FILE } from "./intake";
import { failedDelivery } from "../lib/dsn";
import { readBounce } from "./bounces";
import { attachmentRecord, inboundMessageView } from "./messages";
import { xmlFilesInZip, ZipRefused, type NamedFile } from "./zip";

export const EMAIL_LIMITS = { maxMessageBytes: 20 * 1024 * 1024, maxAttachments: 50 } as const;

export interface InboundMail { from: string; to: string; raw: ReadableStream<Uint8Array> | Uint8Array; rawSize: number }

async function readRaw(raw: InboundMail["raw"], max: number): Promise<Uint8Array | null> {
  if (raw instanceof Uint8Array) return raw.length > max ? null : raw;
  const chunks: Uint8Array[] = [];
  let n = 0;
  const reader = raw.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) (all.set(c, at), (at += c.length));
  return all;
}

const isZip = (a: { mimeType: string; filename: string | null }) => /zip/i.test(a.mimeType) || /\.zip$/i.test(a.filename ?? "");
const isXml = (a: { mimeType: string; filename: string | null }) => /xml/i.test(a.mimeType) || /\.xml$/i.test(a.filename ?? "");

/** Handles one message; returns the inbound message record's outcome. */
export async function receiveMail(env: Env, mail: InboundMail): Promise<{ id: string; outcome: string; documents: number }> {
  const db = createDb(env.DB);
  const companyId = await companyOfAddress(db, mail.to, env.RECEPTION_DOMAIN);
  const company = companyId ? await db.select({ id: companies.id, taxId: companies.taxId, livemode: companies.livemode, status: companies.status }).from(companies).where(eq(companies.id, companyId)).get() : undefined;
  // A message of a company goes to its open store; one that matched none stays in D1.
  const store = company?.status === "ACTIVE" ? await openStore(env, company.id) : null;
  const id = store ? partitionedId("inm", store.ordinal) : newId("inm");
  let subject: string | null = null;
  let attachments: InboundAttachment[] | null = null;
  const record = async (companyId: string | null, size: number, outcome: string, detail: string | null, documents = 0, sha: string | null = null) => {
    const row = { id, companyId, channel: "EMAIL", sender: mail.from.slice(0, 320), recipient: mail.to.slice(0, 320), subject, attachments, size, sha256: sha, outcome, detail: detail?.slice(0, 1000) ?? null, documents, createdAt: new Date().toISOString() };
    if (!store || !companyId || outcome === "STORED" || outcome === "REPLY" || outcome === "BOUNCE") await (store?.db ?? db).insert(inboundMessages).values(row);
    // A company's message that brought nothing is also an event, in the same batch (its webhooks tell the company).
    else await store.db.batch([store.db.insert(inboundMessages).values(row), outboxInsert(store.db, { companyId, type: "inbound_message.no_documents", dedupeKey: `inbound_message:${id}`, payload: inboundMessageView({ ...row, companyId }) })]);
    return { id, outcome, documents };
  };
  if (!company || !store) return record(null, mail.rawSize, "UNKNOWN_RECIPIENT", `No company receives at ${mail.to}.`);
  if (mail.rawSize > EMAIL_LIMITS.maxMessageBytes) return record(company.id, mail.rawSize, "TOO_LARGE", `The message is larger than ${EMAIL_LIMITS.maxMessageBytes} bytes.`);
  const raw = await readRaw(mail.raw, EMAIL_LIMITS.maxMessageBytes);
  if (!raw) return record(company.id, mail.rawSize, "TOO_LARGE", `The message is larger than ${EMAIL_LIMITS.maxMessageBytes} bytes.`);
  const sha = await sha256Hex(raw);
  let parsed;
  try {
    parsed = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer", maxNestingDepth: 20, maxHeadersSize: 256 * 1024 });
  } catch (e) {
    return record(company.id, raw.length, "MALFORMED", `The message cannot be parsed: ${(e as Error).message}`, 0, sha);
  }
  subject = parsed.subject?.slice(0, 500) ?? null;
  // A bounce of a mail the company sent (its replies to a supplier, a delivery to a buyer) is read onto that mail.
  const bounce = failedDelivery(parsed);
  const bounced = bounce && (await readBounce(env, company.id, bounce));
  if (bounced) return record(company.id, raw.length, "BOUNCE", bounced, 0, sha);
  // What the supplier sent, as the log shows it (the first 100; those past the limit are not read).
  const sizeOf = (c: ArrayBuffer | Uint8Array | string) => (typeof c === "string" ? c.length : c.byteLength);
  const read = parsed.attachments.slice(0, 2 * EMAIL_LIMITS.maxAttachments).map((a, i) => ({
    a,
    record: attachmentRecord(a.filename, a.mimeType, sizeOf(a.content), i >= EMAIL_LIMITS.maxAttachments ? "OVER_LIMIT" : isZip(a) ? "ZIP" : isXml(a) ? "XML" : "IGNORED"),
  }));
  attachments = read.map((r) => r.record);
  const files: NamedFile[] = [];
  try {
    for (const { a, record: { readAs } } of read) {
      if (readAs !== "ZIP" && readAs !== "XML") continue;
      const bytes = a.content instanceof ArrayBuffer ? new Uint8Array(a.content) : typeof a.content === "string" ? new TextEncoder().encode(a.content) : a.content;
      if (readAs === "ZIP") files.push(...xmlFilesInZip(bytes));
      else files.push({ name: a.filename ?? null, bytes });
    }
  } catch (e) {
    if (e instanceof ZipRefused) return record(company.id, raw.length, "ZIP_REFUSED", e.message, 0, sha);
    throw e;
  }
  const problems: string[] = [];
  const replies: string[] = [];
  let documents = 0;
  for (const f of files) {
    const r = await intakeFile(env, company, f.bytes, { channel: "EMAIL", message: id, fileName: f.name, sender: mail.from });
    // A buyer's reply to a document the company issued comes to the same address: its parse says so.
    if (r.root && issuingCountry().documents.buyerReplies.roots.includes(r.root)) {
      const reply = await recordBuyerReply(env, company, f.bytes, { channel: "EMAIL", messageId: id });
      if ("problem" in reply) problems.push(reply.problem);
      else replies.push(describeReplyIntake(reply));
      continue;
    }
    if (r.problem) problems.push(r.problem);
    documents += r.documents.length;
  }
  const detail = [...replies, ...problems].join(" | ") || null;
  if (documents === 0 && replies.length) return record(company.id, raw.length, "REPLY", detail, 0, sha);
  if (documents === 0) return record(company.id, raw.length, "NO_DTE", problems.length ? problems.join(" | ") : files.length ? "No DTE in the XML attachments." : "The message carries no XML or zip attachment.", 0, sha);
  return record(company.id, raw.length, "STORED", detail, Math.min(documents, MAX_DTES_PER_FILE * files.length), sha);
}

/** The Worker's email() entry: never throws (a failure is logged and recorded when possible). */
export async function handleEmail(message: ForwardableEmailMessage, env: Env): Promise<void> {
  try {
    await receiveMail(env, { from: message.from, to: message.to, raw: message.raw, rawSize: message.rawSize });
  } catch (e) {
    console.error(JSON.stringify({ level: "error", msg: "inbound e-mail failed", to: message.to, error: String(e) }));
  }
}
