import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";
import { webhookReceiver } from "../../test/webhooks/receiver.node";
import { knob } from "../smoke.mjs";

/**
 * The capacity benchmark runs inside workerd with real D1, R2 and Durable Objects, like the Worker
 * (see ../capacity.bench.mjs). Webhook deliveries go to the tests' recording receiver in Node. A
 * smoke run (BENCH_SMOKE=1): one measured document per kind after its warm-up, 5 boletas batched.
 */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { ENVIRONMENT: "test", MASTER_KEY: "dGVzdC1vbmx5LW1hc3Rlci1rZXktMzItYnl0ZXMhISE=", API_KEY_PEPPER: "test-only-pepper-0123456789", TEST_MIGRATIONS: await readD1Migrations("./migrations"), WEBHOOK_TIMEOUT_MS: "5000", CAPACITY_REPS: String(knob("CAPACITY_REPS", 5, 1)), CAPACITY_BATCH_DOCS: String(knob("CAPACITY_BATCH_DOCS", 200, 5)) },
        outboundService: webhookReceiver,
      },
    })),
  ],
  test: { include: [process.env.CAPACITY_BENCH_FILE ?? "bench/capacity/capacity.bench.test.ts"], setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/quiet-logs.ts"], testTimeout: 900_000 },
});
