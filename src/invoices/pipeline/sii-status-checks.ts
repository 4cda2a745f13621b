/**
 * The issuance queue's `reception.sii_status` messages: each one read of the SII's status of a
 * received document, its `sii_status` check (src/reception/sii-status.ts). Each company's RUT and
 * signer are read once per batch (src/accounts/certificates/sii-access.ts, as for buyer checks). The
 * SII unreachable: the message retries with backoff, until 48 hours after the first ask, when the
 * check says it could not be verified.
 */
import { siiAccess, type SiiAccess } from "../../accounts/certificates/sii-access";
import { backoffSeconds } from "../../lib/backoff";
import { describeError, log } from "../../lib/log";
import type { SiiStatusMessage } from "./messages";
import { checkSiiStatus, giveUpUnreachable } from "../../reception/sii-status";

export type SiiStatusWork = { msg: Message<unknown>; body: SiiStatusMessage };

export async function checkSiiStatuses(env: Env, work: SiiStatusWork[]): Promise<void> {
  const access = new Map<string, SiiAccess>();
  for (const w of work) {
    try {
      let a = access.get(w.body.company_id);
      if (!a) access.set(w.body.company_id, (a = await siiAccess(env, w.body.company_id)));
      await checkSiiStatus(env, a, w.body);
      w.msg.ack();
    } catch (e) {
      if (await giveUpUnreachable(env, w.body, e).catch(() => false)) {
        w.msg.ack();
        continue;
      }
      log("warn", "received document's SII status check failed; retrying", { document: w.body.received_id, error: describeError(e) });
      w.msg.retry({ delaySeconds: backoffSeconds(w.msg.attempts) });
    }
  }
}
