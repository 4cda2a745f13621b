import { app } from "./app";
import { runScheduled } from "./cron";
import { assertConfigured } from "./config";
import { handleDeadLetters, handleIssuanceBatch } from "./pipeline/consumer";
import { siiAuthority } from "./countries/cl";
import { log } from "./lib/log";
import { handleEmail } from "./reception/email";
import { ackDeadWebhookMessages, handleWebhookBatch } from "./webhooks/consumer";

export { FolioAllocator } from "./durable-objects/folio-allocator";

/** The fault hook of the chaos run, only in builds with `__CHAOS__` (never in production: src/chaos/hook.ts). */
const chaosHook = () => (__CHAOS__ ? import("./chaos/hook") : null);

export default {
  async fetch(request, env, ctx) {
    const chaos = await chaosHook();
    if (!chaos) return app.fetch(request, env, ctx);
    const control = await chaos.chaosControl(request, env);
    return control ?? app.fetch(request, chaos.chaosEnv(env, "fetch").env, ctx);
  },
  async queue(batch, env, ctx) {
    assertConfigured(env); // throws: the batch is retried once the configuration is fixed
    const chaos = await chaosHook();
    if (!chaos) return consume(batch, env, ctx);
    const { env: faulty, life } = chaos.chaosEnv(env, "queue");
    try {
      await consume(chaos.chaosBatch(batch, life), faulty, ctx, env);
    } finally {
      chaos.assertAlive(life);
    }
  },
  /** Suppliers' mail to dte+<token>@<RECEPTION_DOMAIN> (Cloudflare Email Routing): reception intake. */
  email: (message, env) => handleEmail(message, env),
  scheduled: (controller, env, ctx) => {
    assertConfigured(env);
    ctx.waitUntil(
      (async () => {
        const chaos = await chaosHook();
        await runScheduled(controller, chaos ? chaos.chaosEnv(env, "scheduled").env : env);
      })(),
    );
  },
} satisfies ExportedHandler<Env>;

/** `siiEnv`: the SII client talks to the (simulated) authority with the real bindings; its faults come from the scenario control. */
async function consume(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext, siiEnv: Env = env) {
  // Queue names may carry an environment suffix in deployments; the dead-letter queues end in -dlq.
  if (batch.queue.startsWith("dte-webhooks")) {
    // Dead-lettered webhook messages need nothing more: the cron sweep re-drives what they carried.
    if (batch.queue.endsWith("-dlq")) return ackDeadWebhookMessages(batch);
    return handleWebhookBatch(batch, env);
  }
  if (batch.queue.endsWith("-dlq")) return handleDeadLetters(batch, env);
  if (batch.queue.startsWith("dte-issuance")) return handleIssuanceBatch(batch, env, siiAuthority(siiEnv, ctx));
  log("error", "no consumer for this queue yet; messages kept for retry", { queue: batch.queue, count: batch.messages.length });
  batch.retryAll({ delaySeconds: 300 });
}
