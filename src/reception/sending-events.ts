/**
 * Cloudflare Email Service's Email Sending events (a queue subscribed to the sending domain's
 * events, `dte-email-events`): the way it reports that a mail the service sent on a company's
 * behalf did not arrive. Its bounces mostly go to Cloudflare's own bounce processor rather than back
 * to the sender's address, so the delivery status notifications bounces.ts reads are not enough.
 *
 * A `message.bounced` (a permanent refusal, or temporary failures until the retries ran out),
 * `message.failed` or `message.rejected` event makes the mail it names FAILED with what was said,
 * as a bounce does; a `message.delivered` event records on a SENT mail when the receiving server
 * accepted it (`delivered_at`, the event's timestamp). The mail is found by the id the mail service
 * gave it (kept by domain/companies/company-mail.ts) in the index store of the company whose
 * reception address sent it, and only while it is the latest mail of its document's reply or
 * delivery. Other events (deferred, complained) change nothing. An event about a mail whose record
 * still says PENDING (the attempt that sent it has not recorded SENT yet, or a new attempt is under
 * way) is read again later, like one whose store is unavailable; one still unread after 10 tries is
 * dead-lettered, listed to the company and sent back by it (operations/dead-letters.ts). An event
 * is untrusted input: one that does not parse, names no company or no mail of the company's is
 * logged and acknowledged.
 * Payload: developers.cloudflare.com/email-service/platform/event-subscriptions (schema version 1,
 * read 2026-11-28 and 2026-11-29).
 */
import { z } from "zod";
import { createDb } from "../storage/db/client";
import { companyOfAddress } from "../accounts/companies/reception-address";
import { sentMailOf } from "../accounts/companies/company-mail";
import { describeError, log } from "../lib/log";
import { backoffSeconds } from "../lib/backoff";
import { deliveredMailOf, failMailOf, readOnto } from "./bounces";

const text = (max: number) => z.string().max(4000).transform((s) => s.replace(/\s+/g, " ").trim().slice(0, max));

export const sendingEvent = z.object({
  type: z.string().max(200),
  payload: z.object({
    messageId: z.string().min(1).max(300),
    sender: z.string().max(320),
    recipient: text(320).optional(),
    delivery: z.object({ smtpEnhancedStatusCode: text(20).optional(), smtpResponse: text(300).optional() }).optional(),
    bounce: z.object({ type: text(20).optional(), reason: text(300).optional() }).optional(),
    failure: z.object({ reason: text(300).optional() }).optional(),
    rejection: z.object({ reason: text(100).optional(), detail: text(300).optional() }).optional(),
  }),
  // When the event happened; a missing or unreadable one is replaced by the time it is read.
  metadata: z.object({ eventTimestamp: z.string().max(40).optional().catch(undefined) }).optional().catch(undefined),
});
export type SendingEvent = z.infer<typeof sendingEvent>;

/** The events that say a mail did not arrive, by the name after `cf.email.sending.`. */
const FAILURES = new Set(["message.bounced", "message.failed", "message.rejected"]);

/** The event's name after `cf.email.sending.`. */
const kindOf = (e: SendingEvent) => e.type.replace(/^cf\.email\.sending\./, "");

/** When a `message.delivered` event says the mail was accepted (ISO 8601 UTC): its timestamp, else `now`; null for any other event. */
export function deliveredAt(e: SendingEvent, now: Date): string | null {
  if (kindOf(e) !== "message.delivered") return null;
  const stamp = e.metadata?.eventTimestamp;
  const at = stamp && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(stamp) ? Date.parse(stamp) : NaN;
  return new Date(Number.isFinite(at) ? at : now.getTime()).toISOString();
}

/** Why the mail failed, in the words bounces.ts uses for a delivery status notification. */
export function failureOf(e: SendingEvent): string | null {
  const kind = kindOf(e);
  if (!FAILURES.has(kind)) return null;
  const p = e.payload;
  const by = p.recipient ? ` by ${p.recipient}` : "";
  const to = p.recipient ? ` to ${p.recipient}` : "";
  if (kind === "message.bounced") {
    const said = [p.delivery?.smtpEnhancedStatusCode, p.bounce?.reason ?? p.delivery?.smtpResponse].filter(Boolean).join(" ");
    return `Bounced${by}: ${said || "no reason given"}${p.bounce?.type === "soft" ? " (temporary failures until the mail service gave up)" : ""}`;
  }
  if (kind === "message.rejected") return `Refused by the mail service before delivery${to}: ${p.rejection?.detail ?? p.rejection?.reason ?? "no reason given"}`;
  return `Not delivered${to}: the mail service failed (${p.failure?.reason ?? "no reason given"})`;
}

/** One batch of the events queue: each message acknowledged once read, retried while a store is unavailable. */
export async function handleSendingEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const msg of batch.messages) {
    try {
      await readSendingEvent(env, msg.body);
      msg.ack();
    } catch (e) {
      log("warn", "email sending event not read; retrying", { message_id: msg.id, attempts: msg.attempts, error: describeError(e) });
      msg.retry({ delaySeconds: backoffSeconds(msg.attempts) });
    }
  }
}

/** The company whose reception address sent the mail the event is about; null when none. */
const senderCompany = (env: Env, e: SendingEvent) => companyOfAddress(createDb(env.DB), e.payload.sender, env.RECEPTION_DOMAIN);

/** The company an event's body names as the sender (the dead letters' listing); null when none, or when it is no event. */
export async function companyOfSendingEvent(env: Env, body: unknown): Promise<string | null> {
  const parsed = sendingEvent.safeParse(body);
  return parsed.success ? senderCompany(env, parsed.data) : null;
}

/** What one event did (for the log and the tests): the mail it failed, or why it changed nothing. */
export async function readSendingEvent(env: Env, body: unknown, now = new Date()): Promise<string> {
  const parsed = sendingEvent.safeParse(body);
  if (!parsed.success) return noted("warn", "email sending event not understood", { issues: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`) });
  const e = parsed.data;
  const why = failureOf(e);
  const delivered = deliveredAt(e, now);
  const ids = { type: e.type, mail_id: e.payload.messageId };
  if (!why && !delivered) return noted("info", "email sending event: neither a failure nor a delivery", ids);
  const companyId = await senderCompany(env, e);
  if (!companyId) return noted("warn", "email sending event: the sender is no company's reception address", { ...ids, sender: e.payload.sender.slice(0, 320) });
  const sent = await sentMailOf(env, companyId, e.payload.messageId);
  if (!sent) return noted("warn", "email sending event: no mail of the company's has this id", { ...ids, company_id: companyId });
  if (!sent.latest) return noted("info", "email sending event: about a mail sent again since", { ...ids, company_id: companyId, reference: sent.reference });
  const fields = { ...ids, company_id: companyId, reference: sent.reference };
  const done = why ? await failMailOf(env, companyId, sent.reference, why) : await deliveredMailOf(env, companyId, sent.reference, delivered!);
  if (!done) return noted("info", "email sending event: its document is gone", fields);
  // The attempt that sent it has not recorded SENT yet (or a new one is under way): read again later.
  if (done.outcome === "PENDING") throw new Error(`${done.onto} is still being sent`);
  return noted("info", `email sending event: ${why ?? `Delivered at ${delivered}`}. Read onto ${readOnto(done)}.`, fields);
}

function noted(level: "info" | "warn", msg: string, fields: Record<string, unknown>): string {
  log(level, msg, fields);
  return msg;
}
