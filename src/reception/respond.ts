/**
 * send_response: our rules first (type, XML present, verification, compatibility,
 * repeat, 8-day window), then the SII's accept/claim register, then the signed exchange replies,
 * stored for download and mailed to the issuer when a send_email binding is configured.
 */
import { envForCompany } from "../config";
import { and, eq } from "drizzle-orm";
import { AuthorityError, type ResponseRefusal } from "../countries/port";
import { issuingCountry } from "../countries";
import { createDb } from "../storage/db/client";
import { receivedDocuments, type ResponseState } from "../storage/db/schema";
import type { CompanyRow } from "../accounts/companies/repository";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { AppError, type ErrorCode } from "../lib/errors";
import { getReceived } from "./queries";
import { receptionEvent, receptionEventIf, writeIn } from "./stores";
import { ordinalOfId } from "../storage/db/document-store";
import { buildReplies, replyRecipient } from "./replies";
import { attemptReplyMail, mailDueBy, pendingMail, restartReplyMail } from "./reply-mail";
import { describeError, log } from "../lib/log";
import type { ReceivedRow, ResponseEntry } from "./view";
import { verificationStatus, type Check } from "./checks";

/** A response as the API takes it (the country's codes: countries/port.ts ResponseKind). */
export type ReceptionAction = Exclude<ResponseEntry["action"], "ACCEPTED_BY_LAW">;
const meaningOf = (action: string) => issuingCountry().inbound.responses.find((r) => r.code === action)?.meaning;
const nameOf = (action: string) => issuingCountry().inbound.responses.find((r) => r.code === action)?.name ?? action;
const isClaim = (action: string) => meaningOf(action) === "CLAIM";
const isAcceptance = (action: string) => meaningOf(action) === "ACCEPT_CONTENT" || meaningOf(action) === "GOODS_RECEIVED";

/** The state after a set of recorded actions. */
export function stateOf(actions: string[]): ResponseState {
  if (actions.some(isClaim)) return "CLAIMED";
  const content = actions.some((a) => meaningOf(a) === "ACCEPT_CONTENT");
  const goods = actions.some((a) => meaningOf(a) === "GOODS_RECEIVED");
  return content && goods ? "ACCEPTED_AND_RECEIVED" : content ? "ACCEPTED" : goods ? "GOODS_RECEIVED" : "PENDING";
}

/** Our own rules, before any call to the SII. Returns true for a repeat (nothing to do). */
export function checkRules(row: ReceivedRow, action: ReceptionAction, now: number): boolean {
  const doc = `document ${row.documentType} folio ${row.folio} from ${row.issuerRut}`;
  if (!issuingCountry().responseWindow.types.has(row.documentType)) throw new AppError("RECEPTION_ACTION_TYPE", `Only facturas (33, 34) and liquidaciones-factura (43) can be accepted or claimed; ${doc} is type ${row.documentType}.`);
  if (!row.xmlKey) throw new AppError("RECEPTION_ACTION_NO_XML", `The SII lists ${doc}, but its XML has not arrived yet: ask the supplier to send it, then answer it.`);
  const done = (JSON.parse(row.responses) as ResponseEntry[]).map((r) => r.action);
  if (done.includes(action)) return true;
  if (row.responseState === "ACCEPTED_BY_LAW" || (row.responseDeadline && Date.parse(row.responseDeadline) < now)) {
    throw new AppError("RECEPTION_DEADLINE_PASSED", `The 8 days to answer ${doc} ended on ${row.responseDeadline}: by law it is now accepted, and it can no longer be ${isClaim(action) ? "claimed" : "answered"}.`);
  }
  if (isAcceptance(action) && done.some(isClaim)) throw new AppError("RECEPTION_ACTION_CONFLICT", `${doc} was already claimed (${done.join(", ")}): it cannot be accepted now.`);
  if (isClaim(action) && done.length > 0) throw new AppError("RECEPTION_ACTION_CONFLICT", `${doc} was already ${done.some(isClaim) ? "claimed" : "accepted"} (${done.join(", ")}): a ${nameOf(action)} is no longer possible.`);
  if (isAcceptance(action) && verificationStatus(row.receptionStatus, row.checks ? (JSON.parse(row.checks) as Check[]) : []) === "FAILED") {
    throw new AppError("RECEPTION_ACTION_UNVERIFIED", `${doc} failed verification (${row.duplicate ? "a different document with the same folio was received before" : "see its checks"}): signing an ${nameOf(action)} for it could vouch for a forged invoice. You may claim it instead.`);
  }
  return false;
}

const REFUSAL_CODES: Record<ResponseRefusal, ErrorCode> = {
  DEADLINE_PASSED: "RECEPTION_DEADLINE_PASSED",
  CONFLICT: "RECEPTION_ACTION_CONFLICT",
  NOT_AT_AUTHORITY: "RECEPTION_NOT_AT_AUTHORITY",
  REFUSED: "RECEPTION_AUTHORITY_REFUSED",
};

/** Updates the document in the store its id names, with its event (if any) in the same batch. */
async function save(env: Env, row: ReceivedRow, set: Partial<ReceivedRow>, event: { type: string; key: string } | null): Promise<ReceivedRow> {
  const next = { ...row, ...set, updatedAt: new Date().toISOString() };
  await writeIn(env, row.companyId, ordinalOfId(row.id)!, async (db) => {
    const update = db.update(receivedDocuments).set({ ...set, updatedAt: next.updatedAt }).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id)));
    if (event) await db.batch([update, receptionEvent(db, { row: next, ...event })]);
    else await update;
  });
  return next;
}

export async function respondToDocument(env: Env, ctx: ExecutionContext | undefined, company: CompanyRow, id: string, action: ReceptionAction, reason: string | null): Promise<ReceivedRow> {
  const db = createDb(env.DB);
  let row = await getReceived(env, company.id, id);
  if (checkRules(row, action, Date.now())) return mailAgainIfFailed(env, ctx, row, action);
  const signer = await requireSigningCredentials(db, env, company.id);
  const sii = issuingCountry().reception(envForCompany(env, company), ctx);
  const key = { companyRut: company.taxId, signer, issuerRut: row.issuerRut, documentType: row.documentType, folio: row.folio };
  let answer: { code: number; message: string };
  try {
    if (!row.siiReceivedAt) {
      const at = await sii.receptionTime(key);
      if (!at) throw new AppError("RECEPTION_NOT_AT_AUTHORITY", `The SII has no record of document ${row.documentType} folio ${row.folio} from ${row.issuerRut}: the supplier has not declared it to the SII (yet). Nothing was recorded.`);
      row = await save(env, row, { siiReceivedAt: at, responseDeadline: issuingCountry().responseWindow.deadlineOf(at) }, null);
      checkRules(row, action, Date.now());
    }
    answer = await sii.recordAction({ ...key, action });
  } catch (e) {
    if (e instanceof AuthorityError) throw new AppError("RECEPTION_AUTHORITY_UNAVAILABLE", `The SII did not answer (${e.message}); nothing was recorded. Retry later.`);
    throw e;
  }
  const refusal = issuingCountry().inbound.refusalOf(answer.code, answer.message);
  if (refusal) {
    await save(env, row, {}, { type: "received_document.response_refused", key: `response_refused:${row.id}:${action}:${answer.code}` });
    throw new AppError(REFUSAL_CODES[refusal.reason], refusal.text);
  }
  const at = new Date();
  const files = await buildReplies(env, company, row, action, reason, signer, at);
  const to = env.SEND_EMAIL && env.RECEPTION_DOMAIN ? await replyRecipient(env, row) : null;
  const entry: ResponseEntry = { action, reason, at: at.toISOString(), sii_code: answer.code, sii_message: answer.message, files: files.map((f) => f.type), reply_to: to, mail: to ? pendingMail(at) : null };
  row = await appendResponse(env, row, entry);
  if (to) await mailFirstAttempt(env, ctx, row, action);
  return row;
}

/** The first attempt at the replies' mail: after the response (waitUntil) in a request, else awaited. */
async function mailFirstAttempt(env: Env, ctx: ExecutionContext | undefined, row: ReceivedRow, action: ReceptionAction): Promise<void> {
  const mailing = attemptReplyMail(env, { companyId: row.companyId, receivedId: row.id, reply: action, attempt: 1 }).catch((e) => log("error", "reply mail failed", { id: row.id, error: describeError(e) }));
  if (ctx) ctx.waitUntil(mailing);
  else await mailing;
}

/**
 * A repeat of a recorded action records nothing at the SII; when its replies' mail FAILED, it starts
 * the mailing again (PENDING, a first attempt at once, then the queue's).
 */
async function mailAgainIfFailed(env: Env, ctx: ExecutionContext | undefined, row: ReceivedRow, action: ReceptionAction): Promise<ReceivedRow> {
  if (!(await restartReplyMail(env, row, action, null, ["FAILED"]))) return row;
  await mailFirstAttempt(env, ctx, row, action);
  return getReceived(env, row.companyId, row.id);
}

/**
 * Appends `entry` with its response_recorded event: a compare-and-set on the list as read, read again
 * and retried when another answer got there first (an ERM sent beside an ACD, the deadline job, a
 * reply's mail state), so that no recorded answer is lost. Returns the document after it.
 */
async function appendResponse(env: Env, row: ReceivedRow, entry: ResponseEntry): Promise<ReceivedRow> {
  for (let tries = 1; ; tries++) {
    const list = JSON.parse(row.responses) as ResponseEntry[];
    if (list.some((r) => r.action === entry.action)) return row;
    const responses = JSON.stringify([...list, entry]);
    const next = { ...row, responses, responseState: stateOf([...list, entry].map((r) => r.action)), updatedAt: new Date().toISOString() };
    const event = { row: next, type: "received_document.response_recorded", key: `response_recorded:${row.id}:${entry.action}` };
    const applied = await writeIn(env, row.companyId, ordinalOfId(row.id)!, async (db) => {
      const document = and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id));
      const due = entry.mail?.next_attempt_at ? { mailDueAt: mailDueBy(entry.mail.next_attempt_at) } : {};
      const update = db.update(receivedDocuments).set({ responses, responseState: next.responseState, updatedAt: next.updatedAt, ...due }).where(and(document, eq(receivedDocuments.responses, row.responses))).returning({ id: receivedDocuments.id });
      const [changed] = await db.batch([update, receptionEventIf(db, event, eq(receivedDocuments.responses, responses))]);
      return changed.length > 0;
    });
    if (applied) return next;
    if (tries === 5) throw new AppError("SERVICE_UNAVAILABLE", `The SII recorded the ${nameOf(entry.action)}, but the document kept changing while it was being saved: send the same request again to save it (the SII answers that it is already recorded).`, [], { "Retry-After": "1" });
    row = await getReceived(env, row.companyId, row.id);
  }
}
