/**
 * Mailing a reply to the supplier again on request (POST /api/reception/invoices/{purchase_id}/reply_mail):
 * the file's RecepcionEnvio or the replies of a recorded response, to the address on record or to
 * one given, once its last mailing is settled (SENT, FAILED) or when none was made for want of an
 * address. The mailing starts over (reply-mail.ts: PENDING, an attempt now, then the queue's) and the
 * answer shows the first attempt's outcome.
 */
import type { CompanyRow } from "../accounts/companies/repository";
import { AppError } from "../lib/errors";
import { getReceived } from "./queries";
import { attemptReplyMail, replyOf, restartReplyMail, type ReplyKind } from "./reply-mail";
import type { ReceivedRow, ReplyRecipient } from "./view";

export async function mailReplyAgain(env: Env, company: Pick<CompanyRow, "id">, id: string, reply: ReplyKind, email: string | undefined): Promise<ReceivedRow> {
  const row = await getReceived(env, company.id, id);
  if (!env.SEND_EMAIL || !env.RECEPTION_DOMAIN) throw new AppError("RECEPTION_MAIL_UNAVAILABLE", "No mail service is configured (a send_email binding and RECEPTION_DOMAIN): download the reply and send it to the supplier yourself.");
  const current = replyOf(row, reply);
  if (!current) {
    throw new AppError("RECEPTION_REPLY_MISSING", reply === "acknowledgment" ? `No RecepcionEnvio was built for the file of ${id} (its company had no active certificate when it arrived): download recepcion_envio, which builds one for this document.` : `No ${reply} is recorded for ${id}: send it first (send_response).`);
  }
  const to: ReplyRecipient | null = email ? { email, source: "REQUEST" } : current.to;
  if (!to) throw new AppError("RECEPTION_REPLY_NO_ADDRESS", "No address is known for this supplier (the SII's taxpayer directory has none, and the document did not come by e-mail): give one in `email`.");
  const busy = () => new AppError("RECEPTION_REPLY_MAIL_PENDING", `This reply is being mailed (${current.mail?.attempts ?? 0} attempts so far${current.mail?.next_attempt_at ? `, the next at ${current.mail.next_attempt_at}` : ""}): wait until it is SENT or FAILED.`);
  if (current.mail?.state === "PENDING") throw busy();
  if (!(await restartReplyMail(env, row, reply, email ? to : null, ["SENT", "FAILED", null]))) throw busy();
  // A file's acknowledgment: the attempt reads the partitions holding the file's documents from the record.
  await attemptReplyMail(env, { companyId: company.id, receivedId: row.id, reply, attempt: 1 });
  return getReceived(env, company.id, id);
}
