import { app } from "./app";
import { runScheduled } from "./operations/scheduled";
import { assertConfigured, envForCompany } from "./config";
import { createDb } from "./storage/db/client";
import { handleIssuanceBatch } from "./invoices/pipeline/consumer";
import { handleDeadLetters } from "./invoices/pipeline/dead-letters";
import { issuingCountry } from "./countries";
import { idsOf, log, withLogContext } from "./lib/log";
import { newId } from "./lib/ids";
import { recordDeadLetters } from "./operations/dead-letters";
import { handleEmail } from "./reception/email";
import { useSimulatedRegister } from "./reception/test-register";
import { registerReceived } from "./countries/cl/simulator/received-register";
import { companyOfSendingEvent, handleSendingEvents } from "./reception/sending-events";
import { ackDeadWebhookMessages, handleWebhookBatch } from "./webhooks/consumer";

export { FolioAllocator } from "./folios/allocator";
export { DocumentStore } from "./operations/objects/document-store";
export { ControlDirectory } from "./operations/objects/control-directory";

// In simulator mode the SII client's requests are answered by this Worker's own app, in process.
issuingCountry().useInProcessSimulator((req, env, ctx) => app.fetch(req, env, ctx));
// In test mode the documents a company receives and verifies are registered in the simulated SII.
useSimulatedRegister(registerReceived);

/** The fault hook of the chaos run, only in builds with `__CHAOS__` (never in production: src/lib/chaos.ts). */
const chaosHook = () => (__CHAOS__ ? import("./lib/chaos") : null);

export default {
  async fetch(request, env, ctx) {
    const chaos = await chaosHook();
    if (!chaos) return app.fetch(request, env, ctx);
    const control = await chaos.chaosControl(request, env);
    return control ?? app.fetch(request, chaos.chaosEnv(env, "fetch").env, ctx);
  },
  queue(batch, env, ctx) {
    return withLogContext({ queue: batch.queue, batch_id: newId("req") }, async () => {
      assertConfigured(env); // throws: the batch is retried once the configuration is fixed
      // One line per message with the ids it carries (request, company, document...): every line of
      // the batch shares batch_id, so a document's work can be followed from its request onwards.
      for (const m of batch.messages) log("info", "queue message", { message_id: m.id, attempts: m.attempts, ...idsOf(m.body) });
      const chaos = await chaosHook();
      if (!chaos) return consume(batch, env, ctx);
      const { env: faulty, life } = chaos.chaosEnv(env, "queue");
      try {
        await consume(chaos.chaosBatch(batch, life), faulty, ctx, env);
      } finally {
        chaos.assertAlive(life);
      }
    });
  },
  /** Suppliers' mail to dte+<token>@<RECEPTION_DOMAIN> (Cloudflare Email Routing): reception intake. */
  email: (message, env) => withLogContext({ email_id: newId("req") }, () => handleEmail(message, env)),
  scheduled: (controller, env, ctx) =>
    withLogContext({ cron: controller.cron, cron_run_id: newId("req"), scheduled_time: new Date(controller.scheduledTime).toISOString() }, () => {
      assertConfigured(env);
      ctx.waitUntil(
        withLogContext({}, async () => {
          const chaos = await chaosHook();
          await runScheduled(controller, chaos ? chaos.chaosEnv(env, "scheduled").env : env);
        }),
      );
    }),
} satisfies ExportedHandler<Env>;

/** `siiEnv`: the SII client talks to the (simulated) authority with the real bindings; its faults come from the scenario control. */
async function consume(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext, siiEnv: Env = env): Promise<void> {
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
