/**
 * Mailing the replies to the supplier: the RecepcionEnvio that answers a received file
 * (acknowledge.ts) and the replies of an acceptance or claim (respond.ts). Each mail is recorded on
 * the document before it is attempted (`mail`, state PENDING), attempted at once, and when the
 * attempt fails (the mail service refused or did not answer) tried again by the issuance queue
 * (`reception.reply_mail` messages) with growing waits, REPLY_MAIL_ATTEMPTS in all; then FAILED, with
 * a `received_document.reply_mail_failed` event. The replies stay downloadable whatever happens.
 *
 * An attempt reads what to send from the record (the address, the files kept in R2), and takes its
 * place on the record before it mails (claimAttempt), so two messages of one attempt mail once and a
 * repeated message sends nothing once the mail is SENT or FAILED. A mail whose chain of queue
 * messages broke (the process stopped before the next attempt was queued, the queue refused it, a
 * message was dead-lettered) is found by the sweep of overdue mails (overdue-mails.ts), which reads
 * each document's `mail_due_at`: every write that leaves a mail PENDING brings it forward.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { SupplierResponse } from "../countries/port";
import type { Db } from "../storage/db/client";
import { ordinalOfId } from "../storage/db/document-store";
import { receivedDocuments } from "../storage/db/schema";
import { companyControl } from "../accounts/companies/control-cache";
import { describeError, log } from "../lib/log";
import type { MailFile } from "../lib/mail";
import type { ReplyMailMessage } from "../invoices/pipeline/messages";
import { partitionDb, receptionEventIf, writeIn } from "./stores";
import { receivedFileOfRow, type ReceivedRow, type ReplyRecipient, type ResponseEntry } from "./view";
import { fileReplyKey, replyKey, type ReplyType } from "./replies";
import { applyMailReport, mailFromCompany, type MailReportOutcome } from "../accounts/companies/company-mail";

/** Attempts in all before FAILED: waits of 5 minutes doubling, at most 6 hours, between them (about 19 hours). */
export const REPLY_MAIL_ATTEMPTS = 8;

export interface ReplyMail {
  state: "PENDING" | "SENT" | "FAILED";
  attempts: number;
  sent_at: string | null;
  /** Why the last attempt failed. */
  message: string | null;
  /** When the next attempt is due while PENDING; null once SENT or FAILED (absent on records from before it was kept). */
  next_attempt_at?: string | null;
  /** When the supplier's server accepted the mail SENT (the mail service's `message.delivered` event); absent until then. */
  delivered_at?: string | null;
}

/** A mail not attempted yet, its first attempt due at `at` (made at once). */
export const pendingMail = (at: Date): ReplyMail => ({ state: "PENDING", attempts: 0, sent_at: null, message: null, next_attempt_at: at.toISOString() });

/** The document's mail_due_at brought forward to `due` when later (only the sweep moves it later, overdue-mails.ts). */
export const mailDueBy = (due: string) => sql`min(coalesce(${receivedDocuments.mailDueAt}, ${due}), ${due})`;

/**
 * Marks a write that settles a mail (SENT, FAILED): when no other mail of the document is PENDING
 * it leaves mail_due_at null, and its store then sets its alarm again from what is left
 * (overdue-reply-mails.ts), so that a mail sent at once costs no visit of the sweep.
 */
export const MAIL_SETTLED = "/* reply mail settled */";

/** Whether a mail of the document other than its file's acknowledgment is PENDING (response `but` aside, if given). */
const responsePending = (but?: number) =>
  sql`EXISTS (SELECT 1 FROM json_each(${receivedDocuments.responses}) WHERE json_extract(value, '$.mail.state') = 'PENDING'${but === undefined ? sql`` : sql` AND key <> ${but}`})`;
const ackPending = sql`coalesce(json_extract(${receivedDocuments.receivedFile}, '$.acknowledgment.mail.state') = 'PENDING', 0)`;

/**
 * The mail_due_at assignment of a write of `mail` (the file's acknowledgment, or response `index`):
 * brought forward while it is PENDING; else kept only while another mail of the document is PENDING.
 */
function dueOf(mail: ReplyMail, index?: number) {
  if (mail.state === "PENDING") return mail.next_attempt_at ? { mailDueAt: mailDueBy(mail.next_attempt_at) } : {};
  const others = index === undefined ? responsePending() : sql`(${ackPending} OR ${responsePending(index)})`;
  return { mailDueAt: sql`${sql.raw(MAIL_SETTLED)} CASE WHEN ${others} THEN ${receivedDocuments.mailDueAt} END` };
}

/** Which mail of a document: its file's acknowledgment, or the replies of one of its responses. */
export type ReplyKind = ReplyMailMessage["reply"];

/** Seconds between attempt `attempt` and the next. */
export const replyMailWait = (attempt: number) => Math.min(300 * 2 ** Math.max(0, attempt - 1), 6 * 3600);

/**
 * Attempt `attempt` (from 1) of the mail `reply` of document `receivedId`; `partitions`: for an
 * acknowledgment, the partitions holding documents of the file (all record its mail).
 */
export interface ReplyMailJob {
  companyId: string;
  receivedId: string;
  reply: ReplyKind;
  attempt: number;
  partitions?: number[];
}

export const replyMailBody = (j: ReplyMailJob): ReplyMailMessage => ({ v: 1, type: "reception.reply_mail", company_id: j.companyId, received_id: j.receivedId, reply: j.reply, attempt: j.attempt, ...(j.partitions ? { partitions: j.partitions } : {}) });

/** The mail of `reply` as the document records it, with where it goes and what it sends. */
interface Recorded {
  mail: ReplyMail;
  to: ReplyRecipient;
  files: { name: string; key: string }[];
  subject: string;
  text: string;
}

/** The reply `reply` as the document records it, its address and mailing; null when the document has no such reply. */
export function replyOf(row: ReceivedRow, reply: ReplyKind): { to: ReplyRecipient | null; mail: ReplyMail | null } | null {
  if (reply === "acknowledgment") {
    const ack = row.xmlKey ? receivedFileOfRow(row)?.acknowledgment : null;
    return ack ? { to: ack.reply_to, mail: ack.mail ?? null } : null;
  }
  const entry = (JSON.parse(row.responses) as ResponseEntry[]).find((r) => r.action === reply);
  return entry ? { to: entry.reply_to ?? null, mail: entry.mail ?? null } : null;
}

function recorded(row: ReceivedRow, taxId: string, reply: ReplyKind): Recorded | null {
  if (reply === "acknowledgment") {
    const ack = receivedFileOfRow(row)?.acknowledgment;
    if (!ack?.mail || !ack.reply_to || !row.xmlKey) return null;
    const subject = `Acuse de recibo de envio DTE - ${taxId}`;
    return { mail: ack.mail, to: ack.reply_to, files: [{ name: `RecepcionEnvio_${taxId}.xml`, key: fileReplyKey(row.xmlKey) }], subject, text: `${subject} (RespuestaDTE, RecepcionEnvio)` };
  }
  const entry = (JSON.parse(row.responses) as ResponseEntry[]).find((r) => r.action === reply);
  if (!entry?.mail || !entry.reply_to) return null;
  const subject = `Respuesta DTE ${row.documentType} folio ${row.folio} - ${taxId}`;
  const files = entry.files.map((type) => ({ name: `${type}_${row.documentType}_${row.folio}.xml`, key: replyKey(row.companyId, row.id, type as ReplyType) }));
  return { mail: entry.mail, to: entry.reply_to, files, subject, text: subject };
}

/**
 * One attempt at a mail still PENDING whose record has fewer attempts than `job.attempt` (a repeated
 * or outrun queue message does nothing). The next attempt is queued before this one is made, so that
 * a failure to record this one's outcome still leaves one to come; it does nothing once the mail is
 * SENT. Records SENT, or the failure (PENDING, FAILED after the last attempt). Returns the mail as
 * recorded after it, or null when there was nothing to send. Throws what an unavailable store or
 * queue throws before the attempt (the queue message is then retried, and makes it).
 */
export async function attemptReplyMail(env: Env, job: ReplyMailJob, now = new Date()): Promise<ReplyMail | null> {
  const { companyId, receivedId, reply, attempt } = job;
  const db = await partitionDb(env, companyId, receivedId);
  const row = db && (await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.id, receivedId))).get());
  const control = row ? await companyControl(env, companyId, now.getTime()) : null;
  const found = row && control ? recorded(row, control.company.taxId, reply) : null;
  if (!row || !found || found.mail.state !== "PENDING" || found.mail.attempts >= attempt) return found?.mail ?? null;
  let next: ReplyMail;
  if (control!.company.status !== "ACTIVE") next = { state: "FAILED", attempts: attempt, sent_at: null, message: "The company was deleted: its replies are no longer mailed", next_attempt_at: null };
  else {
    if (attempt < REPLY_MAIL_ATTEMPTS) await queueNext(env, job);
    if (!(await claimAttempt(env, row, found.mail, job, now))) return settledElsewhere(env, row, job);
    next = await mailOnce(env, row, found, job, now);
  }
  await recordMail(env, row, partitionsOf(row, job), reply, next);
  return next;
}

/**
 * The partitions whose documents record the mail `job.reply` of document `row`: for a file's
 * acknowledgment, those holding documents of the file (the message's list, else the record's);
 * else the document's own.
 */
const partitionsOf = (row: ReceivedRow, job: Pick<ReplyMailJob, "reply" | "partitions">) =>
  (job.reply === "acknowledgment" && (job.partitions ?? receivedFileOfRow(row)?.acknowledgment?.partitions)) || [ordinalOfId(row.id)!];

/**
 * Takes attempt `job.attempt` of a PENDING mail before it is made: the record counts it (and the
 * time of the next attempt, already queued) only if no other message took it meanwhile, compared
 * where it is written. The issuance queue delivers a message at least once, and the sweep may queue
 * an attempt again whose own message is only late: of two messages for one attempt, one mails. A
 * file's acknowledgment is taken in the lowest partition holding its documents, whichever document
 * the message names. False when another message has the attempt.
 */
async function claimAttempt(env: Env, row: ReceivedRow, mail: ReplyMail, job: ReplyMailJob, now: Date): Promise<boolean> {
  const claimed: ReplyMail = { ...mail, attempts: job.attempt, next_attempt_at: new Date(now.getTime() + replyMailWait(job.attempt) * 1000).toISOString() };
  const at = now.toISOString();
  // The mail at `path` of `column` is still PENDING with fewer attempts than this one.
  const open = (column: typeof receivedDocuments.receivedFile | typeof receivedDocuments.responses, path: string) =>
    sql`json_extract(${column}, ${`${path}.state`}) = 'PENDING' AND json_extract(${column}, ${`${path}.attempts`}) < ${job.attempt}`;
  if (job.reply === "acknowledgment") {
    const taken = await writeIn(env, row.companyId, Math.min(...partitionsOf(row, job)), (db) =>
      setAckMail(db, row, claimed, at, open(receivedDocuments.receivedFile, "$.acknowledgment.mail")).returning({ id: receivedDocuments.id }),
    );
    return taken.length > 0;
  }
  const index = (JSON.parse(row.responses) as ResponseEntry[]).findIndex((r) => r.action === job.reply);
  const taken = await writeIn(env, row.companyId, ordinalOfId(row.id)!, (db) =>
    setEntryMail(db, row, index, job.reply as SupplierResponse, claimed, at, open(receivedDocuments.responses, `$[${index}].mail`)).returning({ id: receivedDocuments.id }),
  );
  return taken.length > 0;
}

/**
 * After a lost claim of a file's acknowledgment: when the partition that decides (the lowest) has it
 * SENT or FAILED but this document's partition does not (the attempt that settled it stopped while
 * writing the other copies, and its message, or the next attempt's, came back), the settled mail is
 * written on every copy, with its event if FAILED. Returns that mail; null when there is nothing to
 * finish (another message is attempting it, or it is not an acknowledgment held in several partitions).
 */
async function settledElsewhere(env: Env, row: ReceivedRow, job: ReplyMailJob): Promise<ReplyMail | null> {
  const partitions = partitionsOf(row, job);
  const lowest = Math.min(...partitions);
  if (job.reply !== "acknowledgment" || lowest === ordinalOfId(row.id)) return null;
  const decided = await writeIn(env, row.companyId, lowest, (db) =>
    db.select({ receivedFile: receivedDocuments.receivedFile }).from(receivedDocuments).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.xmlKey, row.xmlKey!))).get(),
  );
  const mail = decided ? receivedFileOfRow(decided)?.acknowledgment?.mail : null;
  if (!mail || mail.state === "PENDING") return null;
  await recordMail(env, row, partitions, "acknowledgment", mail);
  return mail;
}

/** Mails what `found` records; returns the mail after it: SENT, or the failure (PENDING with the next attempt's time, FAILED after the last). */
async function mailOnce(env: Env, row: ReceivedRow, found: Recorded, job: ReplyMailJob, now: Date): Promise<ReplyMail> {
  const { companyId, receivedId, reply, attempt } = job;
  try {
    const files: MailFile[] = [];
    for (const f of found.files) {
      const object = await env.FILES.get(f.key);
      if (!object) throw new Error(`The reply ${f.name} is missing from storage`);
      files.push({ name: f.name, contentType: "application/xml", bytes: new Uint8Array(await object.arrayBuffer()) });
    }
    // From the company's reception address, named by its reference (bounces.ts and sending-events.ts read it back).
    const reference = `${row.id}.${reply === "acknowledgment" ? "ack" : reply.toLowerCase()}`;
    const sent = await mailFromCompany(env, companyId, { to: found.to.email, subject: found.subject, reference, text: found.text, files });
    if (sent !== "SENT") throw new Error("No send_email binding or RECEPTION_DOMAIN is configured");
    return { state: "SENT", attempts: attempt, sent_at: now.toISOString(), message: null, next_attempt_at: null };
  } catch (e) {
    const message = describeError(e).slice(0, 500);
    log("warn", "reply mail failed", { company_id: companyId, id: receivedId, reply, attempt, error: describeError(e) });
    if (attempt >= REPLY_MAIL_ATTEMPTS) return { state: "FAILED", attempts: attempt, sent_at: null, message, next_attempt_at: null };
    return { state: "PENDING", attempts: attempt, sent_at: null, message, next_attempt_at: new Date(now.getTime() + replyMailWait(attempt) * 1000).toISOString() };
  }
}

/**
 * A bounce of the mail `reply` of a company's document (a delivery status notification its reception
 * address received, bounces.ts): a SENT mail becomes FAILED with what the receiving server said, with
 * the reply_mail_failed event. PENDING when it is (its next attempt is coming), UNCHANGED when it
 * is already FAILED; null when the company has no such document or mail.
 */
export function bouncedReplyMail(env: Env, companyId: string, receivedId: string, reply: ReplyKind, why: string): Promise<MailReportOutcome | null> {
  return applyMailReport("failure", () => sentReplyMail(env, companyId, receivedId, reply), ({ row, mail }) => recordReplyMailReport(env, row, reply, { ...mail, state: "FAILED", message: why.slice(0, 500), next_attempt_at: null }, mail));
}

/**
 * The mail service's confirmation that the supplier's server accepted the mail `reply` of a
 * company's document (its `message.delivered` Email Sending event, sending-events.ts): a SENT mail
 * records `delivered_at`, once (no event: a SENT mail has none either). RECORDED when it did
 * already, PENDING while an attempt is under way, UNCHANGED when not SENT, null as bouncedReplyMail.
 */
export function deliveredReplyMail(env: Env, companyId: string, receivedId: string, reply: ReplyKind, at: string): Promise<MailReportOutcome | null> {
  return applyMailReport("delivery", () => sentReplyMail(env, companyId, receivedId, reply), ({ row, mail }) => recordReplyMailReport(env, row, reply, { ...mail, delivered_at: at }, mail));
}

/** Writes a report's `mail` over the mail `reply` of document `row` (every copy of a file's acknowledgment) only where it is still `asRead`; whether the document's own record was. */
export const recordReplyMailReport = (env: Env, row: ReceivedRow, reply: ReplyKind, mail: ReplyMail, asRead: ReplyMail) => recordMail(env, row, partitionsOf(row, { reply }), reply, mail, asRead);

/** The company's document `receivedId` and its mail `reply`; null when there is none. */
export async function sentReplyMail(env: Env, companyId: string, receivedId: string, reply: ReplyKind): Promise<{ row: ReceivedRow; mail: ReplyMail } | null> {
  const db = await partitionDb(env, companyId, receivedId);
  const row = db && (await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.id, receivedId))).get());
  const mail = row ? (replyOf(row, reply)?.mail ?? null) : null;
  return row && mail ? { row, mail } : null;
}

/**
 * Starts the mailing of `reply` over: PENDING with no attempt yet, to `to` (the recorded address
 * when null), on every document that records it. Only from the states `from` (null: never mailed, no
 * address was known); false when the record is in none of them (a mailing in progress, or a change
 * meanwhile: the state is compared where it is written).
 */
export async function restartReplyMail(env: Env, row: ReceivedRow, reply: ReplyKind, to: ReplyRecipient | null, from: readonly (ReplyMail["state"] | null)[]): Promise<boolean> {
  const at = new Date();
  const mail = pendingMail(at);
  const states = sql.join(from.map((s) => sql`${s ?? ""}`), sql`, `);
  if (reply === "acknowledgment") {
    const file = receivedFileOfRow(row);
    if (!file?.acknowledgment || !row.xmlKey) return false;
    const own = ordinalOfId(row.id)!;
    const was = sql`coalesce(json_extract(${receivedDocuments.receivedFile}, '$.acknowledgment.mail.state'), '') IN (${states})`;
    const restart = (db: Db) =>
      db
        .update(receivedDocuments)
        .set({ receivedFile: sql`json_set(${receivedDocuments.receivedFile}, '$.acknowledgment.mail', json(${JSON.stringify(mail)})${to ? sql`, '$.acknowledgment.reply_to', json(${JSON.stringify(to)})` : sql``})`, ...dueOf(mail), updatedAt: at.toISOString() })
        .where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.xmlKey, row.xmlKey!), was))
        .returning({ id: receivedDocuments.id });
    // The document's own partition decides; the file's others follow it.
    if ((await writeIn(env, row.companyId, own, restart)).length === 0) return false;
    for (const ordinal of partitionsOf(row, { reply }).filter((o) => o !== own)) await writeIn(env, row.companyId, ordinal, restart);
    return true;
  }
  const index = (JSON.parse(row.responses) as ResponseEntry[]).findIndex((r) => r.action === reply);
  if (index < 0) return false;
  const changed = await writeIn(env, row.companyId, ordinalOfId(row.id)!, (db) =>
    db
      .update(receivedDocuments)
      .set({ responses: sql`json_set(${receivedDocuments.responses}, ${`$[${index}].mail`}, json(${JSON.stringify(mail)})${to ? sql`, ${`$[${index}].reply_to`}, json(${JSON.stringify(to)})` : sql``})`, ...dueOf(mail), updatedAt: at.toISOString() })
      .where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), sql`json_extract(${receivedDocuments.responses}, ${`$[${index}].action`}) = ${reply}`, sql`coalesce(json_extract(${receivedDocuments.responses}, ${`$[${index}].mail.state`}), '') IN (${states})`))
      .returning({ id: receivedDocuments.id }),
  );
  return changed.length > 0;
}

/** The UPDATE that writes `mail` into the file's acknowledgment on each document of the file (in the partition `db` is), where `also` holds if given. */
const setAckMail = (db: Db, row: ReceivedRow, mail: ReplyMail, at: string, also?: SQL) =>
  db.update(receivedDocuments).set({ receivedFile: sql`json_set(${receivedDocuments.receivedFile}, '$.acknowledgment.mail', json(${JSON.stringify(mail)}))`, ...dueOf(mail), updatedAt: at }).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.xmlKey, row.xmlKey!), also));

/** The UPDATE that writes `mail` into response `index` of the document, if that entry is still `action`'s (and `also` holds, if given). */
const setEntryMail = (db: Db, row: ReceivedRow, index: number, action: SupplierResponse, mail: ReplyMail, at: string, also?: SQL) =>
  db
    .update(receivedDocuments)
    .set({ responses: sql`json_set(${receivedDocuments.responses}, ${`$[${index}].mail`}, json(${JSON.stringify(mail)}))`, ...dueOf(mail, index), updatedAt: at })
    .where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), sql`json_extract(${receivedDocuments.responses}, ${`$[${index}].action`}) = ${action}`, also));

/**
 * Queues attempt `job.attempt + 1`. When the queue refuses it, a later attempt (a queue message)
 * throws before it is made, so that its message is retried; the first (made at once, with no message
 * behind it) goes ahead.
 */
async function queueNext(env: Env, job: ReplyMailJob): Promise<void> {
  try {
    await env.ISSUANCE_QUEUE.send(replyMailBody({ ...job, attempt: job.attempt + 1 }), { delaySeconds: replyMailWait(job.attempt) });
  } catch (e) {
    if (job.attempt > 1) throw e;
    log("error", "the next reply mail attempt could not be queued", { company_id: job.companyId, id: job.receivedId, reply: job.reply, error: describeError(e) });
  }
}

/**
 * Writes `mail` into the document's record of `reply` (for an acknowledgment, into every document of
 * the file, in each of `partitions`), with the reply_mail_failed event when it is FAILED. Each is one
 * json_set on its own path, so it never undoes a concurrent change to the rest of the record.
 * `asRead`: only where the mail is still that (a report on a mail, which an attempt started
 * meanwhile must not lose to). Whether the document's own record was written.
 */
async function recordMail(env: Env, row: ReceivedRow, partitions: number[], reply: ReplyKind, mail: ReplyMail, asRead?: ReplyMail): Promise<boolean> {
  const at = new Date().toISOString();
  const own = ordinalOfId(row.id)!;
  const index = reply === "acknowledgment" ? -1 : (JSON.parse(row.responses) as ResponseEntry[]).findIndex((r) => r.action === reply);
  const [column, path] = reply === "acknowledgment" ? [receivedDocuments.receivedFile, "$.acknowledgment.mail"] : [receivedDocuments.responses, `$[${index}].mail`];
  const still = (m: ReplyMail) => sql`json_extract(${column}, ${path}) = json(${JSON.stringify(m)})`;
  const also = asRead ? sameMail(column, path, asRead) : undefined;
  // The file's other documents first: the event goes with the last write, the document's own.
  for (const ordinal of partitions.filter((o) => o !== own)) await writeIn(env, row.companyId, ordinal, (db) => setAckMail(db, row, mail, at, also));
  return writeIn(env, row.companyId, own, async (db) => {
    const update = (reply === "acknowledgment" ? setAckMail(db, row, mail, at, also) : setEntryMail(db, row, index, reply, mail, at, also)).returning({ id: receivedDocuments.id });
    if (mail.state !== "FAILED") return (await update).length > 0;
    const event = { row: { ...withMail(row, reply, mail), updatedAt: at }, type: "received_document.reply_mail_failed", key: `reply_mail_failed:${row.id}:${reply}:${row.updatedAt}` };
    const [written] = await db.batch([update, receptionEventIf(db, event, still(mail))]);
    return written.length > 0;
  });
}

/** The mail at `path` of `column` is still the one `mail` holds: its state, attempts, and sending and delivery times. */
function sameMail(column: typeof receivedDocuments.receivedFile | typeof receivedDocuments.responses, path: string, mail: ReplyMail): SQL {
  const field = (name: keyof ReplyMail) => sql`coalesce(json_extract(${column}, ${`${path}.${name}`}), '')`;
  return sql`${field("state")} = ${mail.state} AND ${field("attempts")} = ${mail.attempts} AND ${field("sent_at")} = ${mail.sent_at ?? ""} AND ${field("delivered_at")} = ${mail.delivered_at ?? ""}`;
}

/** `row` with `mail` written into its record of `reply`. */
function withMail(row: ReceivedRow, reply: ReplyKind, mail: ReplyMail): ReceivedRow {
  if (reply === "acknowledgment") {
    const file = receivedFileOfRow(row)!;
    return { ...row, receivedFile: JSON.stringify({ ...file, acknowledgment: { ...file.acknowledgment!, mail } }) };
  }
  const responses = (JSON.parse(row.responses) as ResponseEntry[]).map((r) => (r.action === reply ? { ...r, mail } : r));
  return { ...row, responses: JSON.stringify(responses) };
}
