/**
 * Mail the service sends on a company's behalf, from its reception address dte+<token>@<domain>:
 * the replies to a supplier (src/reception/reply-mail.ts) and the deliveries of issued documents to
 * their buyers (src/invoices/buyer-delivery.ts). An answer to either comes back to that
 * address, and so does a receiving server's bounce (src/reception/bounces.ts). The id the mail
 * service gives each message is kept in the company's index store for SENT_MAIL_DAYS, with what the
 * message was: Cloudflare Email Service reports a bounce as an Email Sending event naming that id
 * (src/reception/sending-events.ts), not always as a mail to the sender.
 */
import { desc, eq, inArray, lt } from "drizzle-orm";
import { createDb } from "../../storage/db/client";
import { indexStore } from "../../storage/db/document-store";
import { sentMails } from "../../storage/db/document-store/tables";
import { describeError, log } from "../../lib/log";
import { mimeMessage, sendMail, type MailFile } from "../../lib/mail";
import { receptionEmail, receptionToken } from "./reception-address";

/** How long a sent mail's id is kept: Email Sending reports a bounce within its retries (hours), a late one within days. */
export const SENT_MAIL_DAYS = 30;
/** Old ids deleted with each new one, so the table stays about SENT_MAIL_DAYS of mail. */
const PRUNE_PER_SEND = 5;

export interface CompanyMail {
  to: string;
  subject: string;
  /** What the message is about: `<received document>.<ack|acd|erm|rcd|rfp|rft>`, or an issued document's id (src/reception/bounces.ts reads it back). */
  reference: string;
  text: string;
  files: MailFile[];
}

/** What became of a mail: SENT, or not sent because there is no reception domain or no send_email binding. */
export type CompanyMailOutcome = "SENT" | "NO_DOMAIN" | "NO_BINDING";

/** What a report on a mail sent from a company's address (a bounce, a mail service's event) did: its new state, or why it left the mail as it was. */
export type MailReportOutcome = "FAILED" | "DELIVERED" | "RECORDED" | "PENDING" | "UNCHANGED";

/**
 * Why a report of a failure or of a delivery leaves `mail` as it is: PENDING while an attempt is
 * under way (one that sent it but has not recorded SENT yet, or a new one), UNCHANGED when it is
 * otherwise not SENT, RECORDED when its delivery is recorded already; null when the report applies.
 */
function reportLeaves(mail: { state: string; delivered_at?: string | null }, report: "failure" | "delivery"): "RECORDED" | "PENDING" | "UNCHANGED" | null {
  if (mail.state === "PENDING") return "PENDING";
  if (mail.state !== "SENT") return "UNCHANGED";
  return report === "delivery" && mail.delivered_at ? "RECORDED" : null;
}

/** Times a report is read again when the mail changed between its reading and its writing. */
const REPORT_TRIES = 3;

/**
 * Applies a report on a mail (a bounce, a mail service's event): `read` finds the mail (null when
 * there is none: the outcome is null), `write` records the report only over the mail as read and
 * says whether it did (compared where it is written, so that an attempt started meanwhile, or
 * another report, never loses to it). A mail that changed meanwhile is read again; one that keeps
 * changing is PENDING (a report that can be is read again later).
 */
export async function applyMailReport<T extends { mail: { state: string; delivered_at?: string | null } }>(
  report: "failure" | "delivery",
  read: () => Promise<T | null>,
  write: (found: T) => Promise<boolean>,
): Promise<MailReportOutcome | null> {
  for (let tries = 0; tries < REPORT_TRIES; tries++) {
    const found = await read();
    if (!found) return null;
    const leaves = reportLeaves(found.mail, report);
    if (leaves) return leaves;
    if (await write(found)) return report === "failure" ? "FAILED" : "DELIVERED";
  }
  return "PENDING";
}

/** Sends `mail` from the company's reception address. Throws what the mail service throws. */
export async function mailFromCompany(env: Env, companyId: string, mail: CompanyMail, now = new Date()): Promise<CompanyMailOutcome> {
  const domain = env.RECEPTION_DOMAIN;
  if (!domain) return "NO_DOMAIN";
  const from = receptionEmail(await receptionToken(createDb(env.DB), companyId), domain)!;
  // Our Message-ID names the reference too; a mail service may replace it (Cloudflare's does), the reference header stays.
  const raw = mimeMessage({ from, to: mail.to, subject: mail.subject, messageId: `${mail.reference}.${now.getTime()}@${domain}`, reference: mail.reference, text: mail.text, files: mail.files });
  const sent = await sendMail(env, from, mail.to, raw);
  if (!sent) return "NO_BINDING";
  if (sent.messageId) await rememberSent(env, companyId, sent.messageId, mail, now);
  return "SENT";
}

/**
 * Keeps the id of a mail just sent. The mail has gone whatever happens here: a store that fails is
 * logged, and an Email Sending event naming that mail is then not matched (logged as such).
 */
async function rememberSent(env: Env, companyId: string, messageId: string, mail: CompanyMail, now: Date): Promise<void> {
  try {
    const db = indexStore(env, companyId);
    const cutoff = new Date(now.getTime() - SENT_MAIL_DAYS * 86_400_000).toISOString();
    const old = db.select({ id: sentMails.messageId }).from(sentMails).where(lt(sentMails.createdAt, cutoff)).orderBy(sentMails.createdAt).limit(PRUNE_PER_SEND);
    await db.batch([
      db.insert(sentMails).values({ messageId, reference: mail.reference, recipient: mail.to.slice(0, 320), createdAt: now.toISOString() }).onConflictDoNothing(),
      db.delete(sentMails).where(inArray(sentMails.messageId, old)),
    ]);
  } catch (e) {
    log("warn", "sent mail id not kept", { company_id: companyId, reference: mail.reference, message_id: messageId, error: describeError(e) });
  }
}

/**
 * The reference of the company's mail the service named `messageId`, and whether it is the latest
 * mail of that reference (an event about an earlier one must not fail a mail sent again since);
 * null when the company sent no such mail in SENT_MAIL_DAYS.
 */
export async function sentMailOf(env: Env, companyId: string, messageId: string): Promise<{ reference: string; latest: boolean } | null> {
  const db = indexStore(env, companyId);
  const [row] = await db.select().from(sentMails).where(eq(sentMails.messageId, messageId)).limit(1);
  if (!row) return null;
  const [last] = await db.select({ id: sentMails.messageId }).from(sentMails).where(eq(sentMails.reference, row.reference)).orderBy(desc(sentMails.createdAt), desc(sentMails.messageId)).limit(1);
  return { reference: row.reference, latest: last?.id === messageId };
}
