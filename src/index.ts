import { app } from "./app";
import { runScheduled } from "./cron";
import { assertConfigured, envForMode } from "./config";
import { createDb } from "./db/client";
import { handleDeadLetters, handleIssuanceBatch } from "./pipeline/consumer";
import { siiAuthority } from "./countries/cl";
import { idsOf, log, withLogContext } from "./lib/log";
import { newId } from "./lib/ids";
import { recordDeadLetters } from "./operations/dead-letters";
import { handleEmail } from "./reception/email";
import { ackDeadWebhookMessages, handleWebhookBatch } from "./webhooks/consumer";

export { FolioAllocator } from "./durable-objects/folio-allocator";

async function consume(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  // Queue names may carry an environment suffix in deployments; the dead-letter queues end in -dlq.
  if (batch.queue.startsWith("dte-webhooks")) {
    if (batch.queue.endsWith("-dlq")) {
      // Recorded for the dead-letter listing; the cron sweep also re-drives what they carried.
      await recordDeadLetters(createDb(env.DB), "webhooks", batch.messages);
      return ackDeadWebhookMessages(batch);
    }
    return handleWebhookBatch(batch, env);
  }
  if (batch.queue.endsWith("-dlq")) {
    await recordDeadLetters(createDb(env.DB), "issuance", batch.messages);
    return handleDeadLetters(batch, env);
  }
  if (batch.queue.startsWith("dte-issuance")) return handleIssuanceBatch(batch, env, (livemode) => siiAuthority(envForMode(env, livemode), ctx));
  log("error", "no consumer for this queue yet; messages kept for retry", { count: batch.messages.length });
  batch.retryAll({ delaySeconds: 300 });
}

export default {
  fetch: app.fetch,
  queue(batch, env, ctx) {
    return withLogContext({ queue: batch.queue, batch_id: newId("req") }, async () => {
      assertConfigured(env); // throws: the batch is retried once the configuration is fixed
      // One line per message with the ids it carries (request, company, document...): every line of
      // the batch shares batch_id, so a document's work can be followed from its request onwards.
      for (const m of batch.messages) log("info", "queue message", { message_id: m.id, attempts: m.attempts, ...idsOf(m.body) });
      await consume(batch, env, ctx);
    });
  },
  /** Suppliers' mail to dte+<token>@<RECEPTION_DOMAIN> (Cloudflare Email Routing): reception intake. */
  email: (message, env) => withLogContext({ email_id: newId("req") }, () => handleEmail(message, env)),
  scheduled: (controller, env, ctx) =>
    withLogContext({ cron: controller.cron, cron_run_id: newId("req"), scheduled_time: new Date(controller.scheduledTime).toISOString() }, () => {
      assertConfigured(env);
      ctx.waitUntil(withLogContext({}, () => runScheduled(controller, env)));
    }),
} satisfies ExportedHandler<Env>;
