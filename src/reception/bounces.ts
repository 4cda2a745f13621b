/**
 * Bounces of the mails the service sends from a company's reception address: the replies to a
 * supplier (reply-mail.ts: a file's RecepcionEnvio, a response's replies) and the deliveries of
 * issued documents to their buyers (domain/invoices/buyer-delivery.ts). A receiving server that
 * refuses one after it was handed over sends a delivery status notification (lib/dsn.ts) back to
 * that address; the e-mail handler (email.ts) reads it here: the original headers it quotes say which
 * mail of which document (the X-DTE-Reference header, else the Message-ID; only the company's own
 * documents are looked at), whose SENT mailing becomes
 * FAILED with what the server said, and its event says so.
 */
import type { ReceptionAction } from "../countries/port";
import { bouncedDelivery } from "../domain/invoices/buyer-delivery";
import type { FailedDelivery } from "../lib/dsn";
import { REFERENCE_HEADER } from "../lib/mail";
import { bouncedReplyMail, type ReplyKind } from "./reply-mail";

/** The reference of a reply mail (reply-mail.ts): the document and the reply. */
const REPLY_REFERENCE = /^(rcv_[A-Za-z0-9_]{1,80})\.(ack|acd|erm|rcd|rfp|rft)$/;
/** The reference of a delivery to the buyer (buyer-delivery.ts): the document. */
const DELIVERY_REFERENCE = /^(inv_[A-Za-z0-9_]{1,80})$/;

/**
 * What the report's original message was about: its reference header (kept when the mail service
 * replaced the Message-ID), else its Message-ID as we wrote it (`<reference>.<time>@<domain>`).
 */
function referencesOf(bounce: FailedDelivery): string[] {
  const header = bounce.original.get(REFERENCE_HEADER.toLowerCase())?.trim();
  const fromIds = bounce.messageIds.map((id) => /^(.{1,100})\.\d{1,16}@/.exec(id)?.[1]).filter((r): r is string => r !== undefined);
  return [...new Set([...(header ? [header] : []), ...fromIds])];
}

/** What a bounce did, for the inbound message's record; null when it names no mail of the company's (then it is read as any other message). */
export async function readBounce(env: Env, companyId: string, bounce: FailedDelivery): Promise<string | null> {
  const why = `Bounced${bounce.recipient ? ` by ${bounce.recipient}` : ""}: ${[bounce.status, bounce.diagnostic].filter(Boolean).join(" ") || "no reason given"}`;
  const read: string[] = [];
  for (const ref of referencesOf(bounce)) {
    const done = await failMailOf(env, companyId, ref, why);
    if (done) read.push(done);
  }
  return read.length === 0 ? null : `${why}. Read onto ${read.join(", ")}.`;
}

/**
 * Makes the company's SENT mail `reference` names FAILED for `why` (a reply to a supplier, or a
 * delivery to a buyer), with its event: what it read it onto, or null when the reference names no
 * mail of the company's. A mail not SENT (already FAILED, or being sent again) is left as it was.
 */
export async function failMailOf(env: Env, companyId: string, reference: string, why: string): Promise<string | null> {
  const reply = REPLY_REFERENCE.exec(reference);
  if (reply) {
    const kind: ReplyKind = reply[2] === "ack" ? "acknowledgment" : (reply[2]!.toUpperCase() as ReceptionAction);
    const outcome = await bouncedReplyMail(env, companyId, reply[1]!, kind, why);
    return outcome && `${kind === "acknowledgment" ? "the RecepcionEnvio" : `the ${kind} replies`} of ${reply[1]}${outcome === "UNCHANGED" ? " (not SENT: left as it was)" : ""}`;
  }
  const delivery = DELIVERY_REFERENCE.exec(reference);
  if (!delivery) return null;
  const outcome = await bouncedDelivery(env, companyId, delivery[1]!, why);
  return outcome && `the delivery of ${delivery[1]} to its buyer${outcome === "UNCHANGED" ? " (not SENT: left as it was)" : ""}`;
}
