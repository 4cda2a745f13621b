/**
 * The issuance queue's `invoice.buyer_delivery` messages: each one attempt to mail an accepted
 * document to its buyer (src/invoices/buyer-delivery.ts). What fails in the attempt itself
 * is recorded on the document and tried again later by the store's alarm; a store that is
 * unavailable retries the message with backoff.
 */
import { deliverToBuyer } from "../buyer-delivery";
import { describeError, log } from "../../lib/log";
import type { BuyerDeliveryMessage } from "./messages";
import { backoffSeconds } from "../../lib/backoff";

export type BuyerDeliveryWork = { msg: Message<unknown>; body: BuyerDeliveryMessage };

export async function deliverToBuyers(env: Env, work: BuyerDeliveryWork[]): Promise<void> {
  for (const w of work) {
    try {
      const outcome = await deliverToBuyer(env, w.body.company_id, w.body.invoice_id, { scheduled: true, ...(w.body.lease ? { lease: w.body.lease } : {}) });
      if (outcome.kind === "done" && outcome.delivery.state !== "SENT") log("warn", "buyer delivery not sent", { invoice: w.body.invoice_id, state: outcome.delivery.state, error: outcome.delivery.message });
      w.msg.ack();
    } catch (e) {
      log("warn", "buyer delivery failed; retrying", { invoice: w.body.invoice_id, error: describeError(e) });
      w.msg.retry({ delaySeconds: backoffSeconds(w.msg.attempts) });
    }
  }
}
