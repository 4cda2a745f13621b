/**
 * Bounces of the mails the service sends from a company's reception address: the replies to a
 * supplier (reply-mail.ts: a file's RecepcionEnvio, a response's replies) and the deliveries of
 * issued documents to their buyers (domain/invoices/buyer-delivery.ts). A receiving server that
 * refuses one after it was handed over sends a delivery status notification (lib/dsn.ts) back to
 * that address; the e-mail handler (email.ts) reads it here: the Message-ID it names says which mail
 * of which document (only the company's own documents are looked at), whose SENT mailing becomes
 * FAILED with what the server said, and its event says so.
 */
import type { ReceptionAction } from "../countries/port";
import { bouncedDelivery } from "../domain/invoices/buyer-delivery";
import type { FailedDelivery } from "../lib/dsn";
import { bouncedReplyMail, type ReplyKind } from "./reply-mail";

/** The Message-ID of a reply mail (replies.ts mailToIssuer): the document, the reply, the time. */
const REPLY_MESSAGE_ID = /^(rcv_[A-Za-z0-9_]{1,80})\.(ack|acd|erm|rcd|rfp|rft)\.\d{1,16}@/;
/** The Message-ID of a delivery to the buyer (buyer-delivery.ts): the document, the time. */
const DELIVERY_MESSAGE_ID = /^(inv_[A-Za-z0-9_]{1,80})\.\d{1,16}@/;

/** What a bounce did, for the inbound message's record; null when it names no mail of the company's (then it is read as any other message). */
export async function readBounce(env: Env, companyId: string, bounce: FailedDelivery): Promise<string | null> {
  const why = `Bounced${bounce.recipient ? ` by ${bounce.recipient}` : ""}: ${[bounce.status, bounce.diagnostic].filter(Boolean).join(" ") || "no reason given"}`;
  const read: string[] = [];
  for (const id of bounce.messageIds) {
    const reply = REPLY_MESSAGE_ID.exec(id);
    const delivery = DELIVERY_MESSAGE_ID.exec(id);
    if (reply) {
      const kind: ReplyKind = reply[2] === "ack" ? "acknowledgment" : (reply[2]!.toUpperCase() as ReceptionAction);
      const outcome = await bouncedReplyMail(env, companyId, reply[1]!, kind, why);
      if (outcome) read.push(`${kind === "acknowledgment" ? "the RecepcionEnvio" : `the ${kind} replies`} of ${reply[1]}${outcome === "UNCHANGED" ? " (not SENT: left as it was)" : ""}`);
    } else if (delivery) {
      const outcome = await bouncedDelivery(env, companyId, delivery[1]!, why);
      if (outcome) read.push(`the delivery of ${delivery[1]} to its buyer${outcome === "UNCHANGED" ? " (not SENT: left as it was)" : ""}`);
    }
  }
  return read.length === 0 ? null : `${why}. Read onto ${read.join(", ")}.`;
}
