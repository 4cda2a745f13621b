import { app } from "./app";
import { runScheduled } from "./cron";
import { assertConfigured, envForMode } from "./config";
import { handleDeadLetters, handleIssuanceBatch } from "./pipeline/consumer";
import { siiAuthority } from "./countries/cl";
import { log } from "./lib/log";
import { handleEmail } from "./reception/email";
import { ackDeadWebhookMessages, handleWebhookBatch } from "./webhooks/consumer";

export { FolioAllocator } from "./durable-objects/folio-allocator";

export default {
  fetch: app.fetch,
  async queue(batch, env, ctx) {
    assertConfigured(env); // throws: the batch is retried once the configuration is fixed
    // Queue names may carry an environment suffix in deployments; the dead-letter queues end in -dlq.
    if (batch.queue.startsWith("dte-webhooks")) {
      // Dead-lettered webhook messages need nothing more: the cron sweep re-drives what they carried.
      if (batch.queue.endsWith("-dlq")) return ackDeadWebhookMessages(batch);
      return handleWebhookBatch(batch, env);
    }
    if (batch.queue.endsWith("-dlq")) return handleDeadLetters(batch, env);
    if (batch.queue.startsWith("dte-issuance")) return handleIssuanceBatch(batch, env, (livemode) => siiAuthority(envForMode(env, livemode), ctx));
    log("error", "no consumer for this queue yet; messages kept for retry", { queue: batch.queue, count: batch.messages.length });
    batch.retryAll({ delaySeconds: 300 });
  },
  /** Suppliers' mail to dte+<token>@<RECEPTION_DOMAIN> (Cloudflare Email Routing): reception intake. */
  email: (message, env) => handleEmail(message, env),
  scheduled: (controller, env, ctx) => {
    assertConfigured(env);
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
