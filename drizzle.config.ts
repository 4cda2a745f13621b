import { defineConfig } from "drizzle-kit";

/** D1: the control plane's tables (src/storage/db/schema/index.ts re-exports these and the document stores' ones). */
export default defineConfig({
  dialect: "sqlite",
  schema: [
    "./src/storage/db/schema/control.ts",
    "./src/storage/db/schema/shared.ts",
    "./src/storage/db/schema/simulator.ts",
    "./src/storage/db/schema/reception.ts",
    "./src/storage/db/schema/webhooks.ts",
    "./src/storage/db/schema/taxpayers.ts",
    "./src/storage/db/schema/operations.ts",
    "./src/storage/db/schema/partitions.ts",
  ],
  out: "./migrations",
});
