import { app } from "./app";
import { runScheduled } from "./cron";
import { assertConfigured, type Env } from "./env";
import { handleDeadLetters, handleIssuanceBatch } from "./pipeline/consumer";
import { siiAuthority } from "./pipeline/sii-authority";

export { FolioAllocator } from "./durable-objects/folio-allocator";

export default {
  fetch: app.fetch,
  async queue(batch, env, ctx) {
    assertConfigured(env); // throws: the batch is retried once the configuration is fixed
    // Queue names may carry an environment suffix in deployments; the dead-letter queues end in -dlq.
    if (batch.queue.endsWith("-dlq")) return handleDeadLetters(batch, env);
    if (batch.queue.startsWith("dte-issuance")) return handleIssuanceBatch(batch, env, siiAuthority(env, ctx));
    console.error(JSON.stringify({ level: "error", msg: "no consumer for this queue yet; messages kept for retry", queue: batch.queue, count: batch.messages.length }));
    batch.retryAll({ delaySeconds: 300 });
  },
  scheduled: (controller, env, ctx) => {
    assertConfigured(env);
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
