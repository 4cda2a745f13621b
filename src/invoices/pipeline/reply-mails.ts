/**
 * The issuance queue's `reception.reply_mail` messages: each one attempt to mail a reply to a
 * supplier (src/reception/reply-mail.ts). What fails in the attempt itself is recorded on the
 * document, whose next attempt is already queued; a store that is unavailable retries the message
 * with backoff.
 */
import { describeError, log } from "../../lib/log";
import type { ReplyMailMessage } from "./messages";
import { attemptReplyMail } from "../../reception/reply-mail";
import { backoffSeconds } from "../../lib/backoff";

export type ReplyMailWork = { msg: Message<unknown>; body: ReplyMailMessage };

export async function sendReplyMails(env: Env, work: ReplyMailWork[]): Promise<void> {
  for (const { msg, body } of work) {
    try {
      await attemptReplyMail(env, { companyId: body.company_id, receivedId: body.received_id, reply: body.reply, attempt: body.attempt, ...(body.partitions ? { partitions: body.partitions } : {}) });
      msg.ack();
    } catch (e) {
      log("warn", "reply mail attempt failed; retrying", { id: body.received_id, reply: body.reply, error: describeError(e) });
      msg.retry({ delaySeconds: backoffSeconds(msg.attempts) });
    }
  }
}
