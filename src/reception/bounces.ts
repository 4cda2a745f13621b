/**
 * Bounces of the mails the service sends from a company's reception address: the replies to a
 * supplier (reply-mail.ts: a file's RecepcionEnvio, a response's replies) and the deliveries of
 * issued documents to their buyers (domain/invoices/buyer-delivery.ts). A receiving server that
 * refuses one after it was handed over sends a delivery status notification (lib/dsn.ts) back to
 * that address; the e-mail handler (email.ts) reads it here: the original headers it quotes say which
 * mail of which document (the X-DTE-Reference header, else the Message-ID; only the company's own
 * documents are looked at), whose SENT mailing becomes
 * FAILED with what the server said, and its event says so. The mail service's own reports on those
 * mails (Email Sending events, sending-events.ts) go through the same functions: failMailOf for a
 * failure, deliveredMailOf for a delivery.
 */
import type { MailReportOutcome } from "../accounts/companies/company-mail";
import { bouncedDelivery, deliveredDelivery } from "../invoices/buyer-delivery";
import type { FailedDelivery } from "../lib/dsn";
import { REFERENCE_HEADER } from "../lib/mail";
import { bouncedReplyMail, deliveredReplyMail, type ReplyKind } from "./reply-mail";

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
    if (done) read.push(readOnto(done));
  }
  return read.length === 0 ? null : `${why}. Read onto ${read.join(", ")}.`;
}

/**
 * Makes the company's SENT mail `reference` names FAILED for `why` (a reply to a supplier, or a
 * delivery to a buyer), with its event; null when the reference names no mail of the company's. A
 * mail not SENT (already FAILED, or being sent again) is left as it was.
 */
export function failMailOf(env: Env, companyId: string, reference: string, why: string): Promise<{ onto: string; outcome: MailReportOutcome } | null> {
  return onMailOf(reference, (receivedId, kind) => bouncedReplyMail(env, companyId, receivedId, kind, why), (invoiceId) => bouncedDelivery(env, companyId, invoiceId, why));
}

/** Records on the company's SENT mail `reference` names that the receiving server accepted it at `at` (the mail service's word); null as failMailOf. */
export function deliveredMailOf(env: Env, companyId: string, reference: string, at: string): Promise<{ onto: string; outcome: MailReportOutcome } | null> {
  return onMailOf(reference, (receivedId, kind) => deliveredReplyMail(env, companyId, receivedId, kind, at), (invoiceId) => deliveredDelivery(env, companyId, invoiceId, at));
}

/** Applies `toReply` or `toDelivery` to the mail `reference` names: what it was (for the log) and what became of it. */
async function onMailOf(reference: string, toReply: (receivedId: string, kind: ReplyKind) => Promise<MailReportOutcome | null>, toDelivery: (invoiceId: string) => Promise<MailReportOutcome | null>): Promise<{ onto: string; outcome: MailReportOutcome } | null> {
  const reply = REPLY_REFERENCE.exec(reference);
  if (reply) {
    const kind: ReplyKind = reply[2] === "ack" ? "acknowledgment" : (reply[2]!.toUpperCase() as ReplyKind);
    const outcome = await toReply(reply[1]!, kind);
    return outcome && { onto: `${kind === "acknowledgment" ? "the RecepcionEnvio" : `the ${kind} replies`} of ${reply[1]}`, outcome };
  }
  const delivery = DELIVERY_REFERENCE.exec(reference);
  if (!delivery) return null;
  const outcome = await toDelivery(delivery[1]!);
  return outcome && { onto: `the delivery of ${delivery[1]} to its buyer`, outcome };
}

/** How a bounce's record says what it did: "the … of …", and when the mail was left as it was, why. */
export function readOnto(done: { onto: string; outcome: MailReportOutcome }): string {
  if (done.outcome === "PENDING") return `${done.onto} (being sent: left as it was)`;
  if (done.outcome === "RECORDED") return `${done.onto} (its delivery recorded already: left as it was)`;
  return done.outcome === "UNCHANGED" ? `${done.onto} (not SENT: left as it was)` : done.onto;
}
