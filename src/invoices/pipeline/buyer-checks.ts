/**
 * The issuance queue's `invoice.buyer_check` messages: each one read of the SII's register for an
 * issued factura (src/invoices/buyer-check.ts). The SII unreachable: the message retries with
 * backoff (one given up is sent again by the store's alarm when its lease ends); no usable
 * certificate or a refusal by the SII: the check waits an hour (for up to 10 days after the document
 * was stamped, see retryAt); a company gone: its checks stop.
 */
import { checkBuyerResponse } from "../buyer-check";
import { siiAccess, type SiiAccess } from "../../accounts/certificates/sii-access";
import { describeError, log } from "../../lib/log";
import type { BuyerCheckMessage } from "./messages";
import { backoffSeconds } from "../../lib/backoff";

export type BuyerCheckWork = { msg: Message<unknown>; body: BuyerCheckMessage };

/** Handles the batch's checks (each company's RUT and signer read once). */
export async function checkBuyerResponses(env: Env, work: BuyerCheckWork[]): Promise<void> {
  const checkers = new Map<string, SiiAccess>();
  for (const w of work) {
    try {
      let checker = checkers.get(w.body.company_id);
      if (!checker) checkers.set(w.body.company_id, (checker = await siiAccess(env, w.body.company_id)));
      await checkBuyerResponse(env, checker, w.body.company_id, w.body.invoice_id, true);
      w.msg.ack();
    } catch (e) {
      log("warn", "buyer response check failed; retrying", { invoice: w.body.invoice_id, error: describeError(e) });
      w.msg.retry({ delaySeconds: backoffSeconds(w.msg.attempts) });
    }
  }
}
