import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";
import { SMOKE } from "../smoke.mjs";

/** The batch bench's intake part runs inside workerd with real D1, R2 and Durable Objects (see ../batch.bench.mjs). */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { ENVIRONMENT: "test", MASTER_KEY: "dGVzdC1vbmx5LW1hc3Rlci1rZXktMzItYnl0ZXMhISE=", API_KEY_PEPPER: "test-only-pepper-0123456789", TEST_MIGRATIONS: await readD1Migrations("./migrations"), BATCH_BENCH_DOCS: process.env.BATCH_BENCH_DOCS || (SMOKE ? "5" : "") },
      },
    })),
  ],
  test: { include: ["bench/batch/intake.bench.test.ts"], setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/quiet-logs.ts"], testTimeout: 900_000 },
});
