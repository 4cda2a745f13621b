/**
 * The Worker's queue and scheduled handlers (src/index.ts wires them): each invocation in its log
 * context, the configuration checked first, each queue's batch to its consumer. The chaos run's
 * entry (scripts/chaos/worker.ts) wraps the same handlers with its faults.
 */
import { assertConfigured, envForCompany } from "../config";
import { issuingCountry } from "../countries";
import { handleIssuanceBatch } from "../invoices/pipeline/consumer";
import { handleDeadLetters } from "../invoices/pipeline/dead-letters";
import { newId } from "../lib/ids";
import { idsOf, log, withLogContext } from "../lib/log";
import { companyOfSendingEvent, handleSendingEvents } from "../reception/sending-events";
import { createDb } from "../storage/db/client";
import { ackDeadWebhookMessages, handleWebhookBatch } from "../webhooks/consumer";
import { recordDeadLetters } from "./dead-letters";
import { runScheduled } from "./scheduled";

type Consume = (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void>;

/** A queue handler: the batch's log context and one line per message, the configuration checked, then `consume`. */
export function onQueue(consume: Consume): ExportedHandlerQueueHandler<Env> {
  return (batch, env, ctx) =>
    withLogContext({ queue: batch.queue, batch_id: newId("req") }, async () => {
      assertConfigured(env); // throws: the batch is retried once the configuration is fixed
      // One line per message with the ids it carries (request, company, document...): every line of
      // the batch shares batch_id, so a document's work can be followed from its request onwards.
      for (const m of batch.messages) log("info", "queue message", { message_id: m.id, attempts: m.attempts, ...idsOf(m.body) });
      await consume(batch, env, ctx);
    });
}

/** A scheduled handler: the run's log context, the configuration checked, the jobs run with `envOf(env)`. */
export function onScheduled(envOf: (env: Env) => Env): ExportedHandlerScheduledHandler<Env> {
  return (controller, env, ctx) =>
    withLogContext({ cron: controller.cron, cron_run_id: newId("req"), scheduled_time: new Date(controller.scheduledTime).toISOString() }, () => {
      assertConfigured(env);
      ctx.waitUntil(withLogContext({}, () => runScheduled(controller, envOf(env))));
    });
}

/**
 * Each queue's batch to its consumer. `siiEnv`: the bindings the SII client talks to the (simulated)
 * authority with (the chaos run gives the others faults, not these).
 */
export async function consumeQueue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext, siiEnv: Env = env): Promise<void> {
  // Queue names may carry an environment suffix in deployments; the dead-letter queues end in -dlq.
  if (batch.queue.startsWith("dte-webhooks")) {
    if (batch.queue.endsWith("-dlq")) {
      // Recorded for the dead-letter listing; the cron sweep also re-drives what they carried.
      await recordDeadLetters(createDb(env.DB), "webhooks", batch.messages);
      return ackDeadWebhookMessages(batch);
    }
    return handleWebhookBatch(batch, env);
  }
  // Cloudflare Email Service's events about the mails sent (a queue subscribed to the sending domain's events).
  if (batch.queue.startsWith("dte-email-events")) {
    if (!batch.queue.endsWith("-dlq")) return handleSendingEvents(batch, env);
    // Events not read onto their mail in 10 tries: listed to the company whose address sent the mail.
    await recordDeadLetters(createDb(env.DB), "email_events", batch.messages, new Date(), (body) => companyOfSendingEvent(env, body));
    return batch.ackAll();
  }
  if (batch.queue.endsWith("-dlq")) {
    await recordDeadLetters(createDb(env.DB), "issuance", batch.messages);
    return handleDeadLetters(batch, env);
  }
  if (batch.queue.startsWith("dte-issuance")) {
    return handleIssuanceBatch(batch, env, (company) => issuingCountry().authority(envForCompany(siiEnv, company), ctx));
  }
  log("error", "no consumer for this queue yet; messages kept for retry", { queue: batch.queue, count: batch.messages.length });
  batch.retryAll({ delaySeconds: 300 });
}
