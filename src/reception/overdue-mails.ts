/**
 * The sweep of reply mails whose chain of attempts broke (reply-mail.ts). Each attempt of a mail
 * queues the next before it is made, but the chain can still break: the process stops between
 * recording a mail PENDING and its first attempt, the queue refuses the next attempt while the first
 * one fails, a message is dead-lettered after the queue's own retries. Every write that leaves a mail
 * PENDING brings its document's `mail_due_at` forward to the mail's next attempt; the sweep (a task
 * of each document store's alarm) reads the documents whose
 * `mail_due_at` passed more than REPLY_MAIL_STALE_MS ago, queues again each mail whose next attempt
 * is that late, and sets `mail_due_at` to what the record says now (null once no mail is PENDING).
 *
 * Queuing again is harmless: an attempt does nothing once the record has it (or the mail is SENT or
 * FAILED). A file's acknowledgment, recorded on every document of the file, is queued once, by the
 * lowest of the partitions holding them.
 */
import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { ordinalOfId } from "../storage/db/document-store";
import { receivedDocuments } from "../storage/db/schema";
import { chunked } from "../lib/chunked";
import { replyMailBody, type ReplyKind, type ReplyMail, type ReplyMailJob } from "./reply-mail";
import { receivedFileOfRow, type ReceivedRow, type ResponseEntry } from "./view";

/** How long past its next attempt a PENDING mail may wait for that attempt's queue message before it is queued again. */
export const REPLY_MAIL_STALE_MS = 30 * 60_000;
/** Documents looked at per run. */
export const OVERDUE_MAIL_ROWS_PER_RUN = 200;

/** What the sweep makes of one document at `at`: the attempts to queue again, and when to look at it next (null: no mail of it is PENDING). */
export function overdueMailsOf(row: ReceivedRow, at: Date): { jobs: ReplyMailJob[]; dueAt: string | null } {
  const cutoff = at.getTime() - REPLY_MAIL_STALE_MS;
  const jobs: ReplyMailJob[] = [];
  const dues: string[] = [];
  const look = (mail: ReplyMail | null | undefined, job: Omit<ReplyMailJob, "companyId" | "receivedId" | "attempt">) => {
    if (mail?.state !== "PENDING") return;
    const next = mail.next_attempt_at ? Date.parse(mail.next_attempt_at) : Number.NaN;
    if (next > cutoff) return void dues.push(mail.next_attempt_at!);
    jobs.push({ companyId: row.companyId, receivedId: row.id, attempt: mail.attempts + 1, ...job });
    dues.push(at.toISOString());
  };
  const ack = receivedFileOfRow(row)?.acknowledgment;
  const own = ordinalOfId(row.id) ?? 0;
  const partitions = ack?.partitions ?? [own];
  // The file's other partitions leave its acknowledgment to the lowest one.
  if (row.xmlKey && partitions[0] === own) look(ack?.mail, { reply: "acknowledgment", ...(ack?.partitions ? { partitions } : {}) });
  for (const entry of JSON.parse(row.responses) as ResponseEntry[]) if (entry.action !== "ACCEPTED_BY_LAW") look(entry.mail, { reply: entry.action as ReplyKind });
  return { jobs, dueAt: dues.length === 0 ? null : dues.reduce((a, b) => (a < b ? a : b)) };
}

/**
 * One database's overdue reply mails at `at`: queued again, and each document's next look written
 * (only if its record did not change meanwhile: a write that did set its own). Returns the attempts queued.
 * Throws what the queue throws, before any document's next look is moved.
 */
export async function overdueMailsIn(db: Db, env: Pick<Env, "ISSUANCE_QUEUE">, at: Date, limit = OVERDUE_MAIL_ROWS_PER_RUN): Promise<number> {
  const cutoff = new Date(at.getTime() - REPLY_MAIL_STALE_MS).toISOString();
  const rows = (await db.select().from(receivedDocuments).where(lte(receivedDocuments.mailDueAt, cutoff)).orderBy(asc(receivedDocuments.mailDueAt)).limit(limit));
  const looked = rows.map((row) => ({ row, ...overdueMailsOf(row, at) }));
  const jobs: ReplyMailJob[] = [];
  // A file's acknowledgment once, however many of its documents this database holds.
  const files = new Set<string>();
  for (const { row, jobs: due } of looked) {
    for (const job of due) {
      if (job.reply === "acknowledgment" && files.has(row.xmlKey!)) continue;
      if (job.reply === "acknowledgment") files.add(row.xmlKey!);
      jobs.push(job);
    }
  }
  for (const chunk of chunked(jobs, 100)) await env.ISSUANCE_QUEUE.sendBatch(chunk.map((j) => ({ body: replyMailBody(j) })));
  const updates = looked.map(({ row, dueAt }) =>
    db
      .update(receivedDocuments)
      .set({ mailDueAt: dueAt })
      .where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), eq(receivedDocuments.responses, row.responses), sql`${receivedDocuments.receivedFile} IS ${row.receivedFile}`)),
  );
  for (const chunk of chunked(updates, 100)) await db.batch(chunk as [(typeof chunk)[number], ...typeof chunk]);
  return jobs.length;
}
