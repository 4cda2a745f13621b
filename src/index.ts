import { app } from "./app";
import type { Env } from "./env";

export { FolioAllocator } from "./durable-objects/folio-allocator";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
