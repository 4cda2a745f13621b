import { defineConfig } from "drizzle-kit";

/** D1: the control plane's tables (src/db/schema/index.ts re-exports these and the document stores' ones). */
export default defineConfig({
  dialect: "sqlite",
  schema: [
    "./src/db/schema/control.ts",
    "./src/db/schema/shared.ts",
    "./src/db/schema/simulator.ts",
    "./src/db/schema/reception.ts",
    "./src/db/schema/webhooks.ts",
    "./src/db/schema/taxpayers.ts",
    "./src/db/schema/operations.ts",
    "./src/db/schema/partitions.ts",
  ],
  out: "./migrations",
});
