/**
 * The `sii_status` check of a received document (./checks.ts): the SII's own status of it
 * (QueryEstDte with its type, folio, issue date, total and RUTs), asked with the company's
 * certificate (the company is the receiver: its certificate's holder is the consultant, the
 * document's issuer the RutCompania). Never inline in intake: the SII may be slow or down, and an
 * e-mail's intake must not wait for it. Intake records the check NOT_CHECKED; then
 *
 * - queueSiiStatusChecks (intake, once the rows are stored): one `reception.sii_status` message per
 *   document waiting, on the issuance queue, when the company has an active, current certificate;
 *   without one the check says so and nothing is queued;
 * - checkSiiStatus (each message, src/invoices/pipeline/sii-status-checks.ts): asks the SII and records
 *   PASSED (registered with the same data), FAILED (other data, or a folio or issuer the SII says is
 *   not valid: the document's verification becomes FAILED, with a `received_document.verification_failed`
 *   event when it was VERIFIED; EstadoRecepDTE, already sent, is unchanged) or NOT_CHECKED while the
 *   SII does not list it yet (a genuine document may reach its buyer first) or refuses the query: it
 *   is asked again 5 minutes later, then after waits doubling up to 12 hours, until 48 hours after
 *   the first ask; then it stays NOT_CHECKED, saying so.
 */
import { and, eq } from "drizzle-orm";
import { envForCompany } from "../config";
import { issuingCountry } from "../countries";
import { AuthorityError, type RegisteredStatus } from "../countries/port";
import { createDb } from "../storage/db/client";
import { receivedDocuments } from "../storage/db/schema";
import { certificateProblem } from "../accounts/certificates/certificates";
import { signerOf, type SiiAccess } from "../accounts/certificates/sii-access";
import { chunked } from "../lib/chunked";
import { describeError, log } from "../lib/log";
import type { SiiStatusMessage } from "../invoices/pipeline/messages";
import { verificationStatus, type Check } from "./checks";
import { byPartition, receivedByIds, receptionEventIf, writeIn } from "./stores";
import type { ReceivedRow } from "./view";

/** How long a document the SII does not list (or a query it refuses) is asked about, from the first ask. */
export const SII_STATUS_WINDOW_MS = 48 * 3_600_000;
/** The longest delay the queue takes on a message. */
const MAX_DELAY_SECONDS = 12 * 3600;
const NOT_LISTED = "Not yet listed by the SII";
const REFUSED = "The SII refused the query";

/** The wait before ask number `attempt + 1`: 5 minutes, doubling up to 12 hours. */
export function nextAskSeconds(attempt: number): number {
  return Math.min(MAX_DELAY_SECONDS, 300 * 2 ** Math.min(attempt - 1, 20));
}

const checksOf = (row: Pick<ReceivedRow, "checks">): Check[] => (row.checks ? (JSON.parse(row.checks) as Check[]) : []);
const siiCheck = (result: Check["result"], message: string | null): Check => ({ name: "sii_status", result, message });

/** Whether a document's `sii_status` is still to be asked: waiting for its first read, or not listed or refused before. */
function askable(row: ReceivedRow): boolean {
  const c = checksOf(row).find((x) => x.name === "sii_status");
  return !!row.xmlKey && c?.result === "NOT_CHECKED" && !!c.message && (c.message === issuingCountry().inbound.statusCheckWaiting || c.message.startsWith(NOT_LISTED) || c.message.startsWith(REFUSED));
}

export function siiStatusBody(companyId: string, receivedId: string, attempt: number, since: string): SiiStatusMessage {
  return { v: 1, type: "reception.sii_status", company_id: companyId, received_id: receivedId, attempt, since };
}

/**
 * After intake: the documents just stored whose `sii_status` waits are asked about through the queue,
 * or, without a usable certificate, say why they will not be. Never throws (intake is done; a
 * failure here is logged and leaves the check waiting).
 */
export async function queueSiiStatusChecks(env: Env, companyId: string, stored: ReceivedRow[], now = new Date()): Promise<void> {
  const waiting = stored.filter(askable);
  if (waiting.length === 0) return;
  try {
    const problem = await certificateProblem(createDb(env.DB), companyId, now);
    if (problem) {
      const check = siiCheck("NOT_CHECKED", `Not asked: the company has no usable certificate to ask the SII with (${problem.message}).`);
      await writeChecks(env, companyId, waiting.map((row) => ({ row, check })));
      return;
    }
    for (const chunk of chunked(waiting, 100)) await env.ISSUANCE_QUEUE.sendBatch(chunk.map((row) => ({ body: siiStatusBody(companyId, row.id, 1, now.toISOString()) })));
  } catch (e) {
    log("warn", "sii_status checks not queued; the documents' check stays waiting", { company: companyId, documents: waiting.length, error: describeError(e) });
  }
}

type CheckWrite = { row: ReceivedRow; check: Check };

/**
 * Writes each document's new `sii_status` (only while its checks are as read: a concurrent writer's
 * change wins), with a `received_document.verification_failed` event for a document that was
 * VERIFIED and now FAILED. Returns the ids written.
 */
async function writeChecks(env: Env, companyId: string, writes: CheckWrite[]): Promise<Set<string>> {
  const written = new Set<string>();
  const at = new Date().toISOString();
  for (const [ordinal, group] of byPartition(writes, (w) => w.row.id)) {
    for (const chunk of chunked(group, 50)) {
      const results = await writeIn(env, companyId, ordinal, async (db) => {
        const t = receivedDocuments;
        const statements = chunk.flatMap(({ row, check }) => {
          const checks = JSON.stringify(checksOf(row).map((c) => (c.name === "sii_status" ? check : c)));
          const update = db.update(t).set({ checks, updatedAt: at }).where(and(eq(t.companyId, companyId), eq(t.id, row.id), eq(t.checks, row.checks!))).returning({ id: t.id });
          if (check.result !== "FAILED" || verificationStatus(row.receptionStatus, checksOf(row)) === "FAILED") return [update];
          const type = "received_document.verification_failed";
          return [update, receptionEventIf(db, { row: { ...row, checks, updatedAt: at }, type, key: `${type}:${row.id}:sii_status` }, eq(t.checks, checks))];
        });
        return (await db.batch(statements as [(typeof statements)[number], ...typeof statements])) as unknown[];
      });
      // Only the updates return rows (the ids they wrote).
      for (const r of results) if (Array.isArray(r)) for (const x of r as { id?: unknown }[]) if (typeof x?.id === "string") written.add(x.id);
    }
  }
  return written;
}

/**
 * One message: asks the SII about its document and records the answer; queues the next ask while
 * the SII does not list it. Throws a retryable AuthorityError when the SII does not answer, and what
 * an unavailable store or queue throws (the message is retried).
 */
export async function checkSiiStatus(env: Env, access: SiiAccess, m: SiiStatusMessage, now = new Date()): Promise<void> {
  const row = (await receivedByIds(env, m.company_id, [m.received_id])).get(m.received_id);
  if (!row || !askable(row) || !access.company) return; // settled, not ours, or the company is gone
  const signer = await signerOf(env, access, m.company_id);
  if (signer instanceof Error) {
    await writeChecks(env, m.company_id, [{ row, check: siiCheck("NOT_CHECKED", `Not asked: the company has no usable certificate to ask the SII with (${signer.message}).`) }]);
    return;
  }
  const sii = issuingCountry().reception(envForCompany(env, access.company));
  let status: RegisteredStatus | AuthorityError;
  try {
    status = await sii.documentStatus({ companyRut: access.company.taxId, signer, issuerRut: row.issuerRut, receiverRut: row.recipientRut!, documentType: row.documentType, folio: row.folio, issueDate: row.issueDate!, total: row.total! });
  } catch (e) {
    if (!(e instanceof AuthorityError) || e.retryable) throw e;
    status = e;
  }
  const settled = verdictOf(row, status);
  if (settled) {
    await writeChecks(env, m.company_id, [{ row, check: settled }]);
    return;
  }
  const what = status instanceof AuthorityError ? `${REFUSED} (${status.message})` : `${NOT_LISTED} (it answered ${status.code}: ${status.message}); a genuine document may reach its buyer before the SII lists it`;
  const deadline = Date.parse(m.since) + SII_STATUS_WINDOW_MS;
  const delay = Math.min(nextAskSeconds(m.attempt), Math.floor((deadline - now.getTime()) / 1000));
  if (delay <= 0) {
    const last = status instanceof AuthorityError ? `it refused the last query (${status.message})` : `it did not list the document (last answer ${status.code}: ${status.message})`;
    await writeChecks(env, m.company_id, [{ row, check: siiCheck("NOT_CHECKED", `Not verified with the SII within 48 hours of the first ask (${m.since}): ${last}.`) }]);
    return;
  }
  const next = new Date(now.getTime() + delay * 1000).toISOString();
  const written = await writeChecks(env, m.company_id, [{ row, check: siiCheck("NOT_CHECKED", `${what}. Asked ${m.attempt} time(s), last at ${now.toISOString()}; asked again at ${next}, until ${new Date(deadline).toISOString()}.`) }]);
  if (written.has(row.id)) await env.ISSUANCE_QUEUE.send(siiStatusBody(m.company_id, row.id, m.attempt + 1, m.since), { delaySeconds: delay });
}

/** The check the SII's answer settles (PASSED or FAILED, in plain words), or null while it does not list the document or refuses the query. */
function verdictOf(row: ReceivedRow, status: RegisteredStatus | AuthorityError): Check | null {
  if (status instanceof AuthorityError || status.state === "NOT_REGISTERED") return null;
  const doc = `type ${row.documentType} folio ${row.folio} of issuer ${row.issuerRut}`;
  const answered = `The SII answered ${status.code}: ${status.message}`;
  if (status.state === "MATCH") return siiCheck("PASSED", status.code === "DOK" ? null : `The SII registers it with the same data. ${answered}.`);
  if (status.state === "MISMATCH") {
    return siiCheck("FAILED", `The SII registers a document ${doc}, but not with this document's data (receiver ${row.recipientRut}, issue date ${row.issueDate}, total ${row.total}): the receiver, the issue date or the total it holds differ, so this document was altered or forged. ${answered}.`);
  }
  return siiCheck("FAILED", `The SII says the document ${doc} is not valid: its folio is not authorised or was annulled, or its issuer may not issue electronic documents. ${answered}.`);
}

/**
 * A message whose SII could not be reached: past the 48 hours of its asks, the check says so and the
 * message is settled (true); otherwise false (the message is retried).
 */
export async function giveUpUnreachable(env: Env, m: SiiStatusMessage, error: unknown, now = new Date()): Promise<boolean> {
  if (now.getTime() < Date.parse(m.since) + SII_STATUS_WINDOW_MS) return false;
  const row = (await receivedByIds(env, m.company_id, [m.received_id])).get(m.received_id);
  if (row && askable(row)) {
    await writeChecks(env, m.company_id, [{ row, check: siiCheck("NOT_CHECKED", `Not verified with the SII: it could not be reached within 48 hours of the first ask (${m.since}): ${describeError(error)}.`) }]);
  }
  return true;
}
