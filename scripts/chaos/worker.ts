/**
 * The Worker as the chaos run and the tests build it: the production entry (src/index.ts) with the
 * fault hook (./hook.ts) around its fetch, queue and scheduled handlers and in its Durable Objects.
 * Production builds (wrangler.toml's main, src/index.ts) never import this file; `npm run chaos`
 * and vitest.config.ts name it as the entry.
 */
import { app } from "../../src/app";
import worker, { ControlDirectory, DocumentStore, FolioAllocator } from "../../src/index";
import { consumeQueue, onQueue, onScheduled } from "../../src/operations/handlers";
import { assertAlive, chaosBatch, chaosControl, chaosEnv, installChaosRestart } from "./hook";

export { ControlDirectory, DocumentStore, FolioAllocator };

installChaosRestart(FolioAllocator);
installChaosRestart(DocumentStore);
installChaosRestart(ControlDirectory);

export default {
  ...worker,
  async fetch(request, env, ctx) {
    const control = await chaosControl(request, env);
    return control ?? app.fetch(request, chaosEnv(env, "fetch").env, ctx);
  },
  queue: onQueue(async (batch, env, ctx) => {
    const { env: faulty, life } = chaosEnv(env, "queue");
    try {
      await consumeQueue(chaosBatch(batch, life), faulty, ctx, env);
    } finally {
      assertAlive(life);
    }
  }),
  scheduled: onScheduled((env) => chaosEnv(env, "scheduled").env),
} satisfies ExportedHandler<Env>;
