import { app } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";

export { FolioAllocator } from "./durable-objects/folio-allocator";

export default {
  fetch: app.fetch,
  scheduled: (controller, env, ctx) => {
    ctx.waitUntil(runScheduled(controller, env));
  },
} satisfies ExportedHandler<Env>;
