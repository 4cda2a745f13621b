import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";
import { SMOKE } from "../smoke.mjs";

/** The reception benchmark runs inside workerd with real D1 and R2, like the Worker (see ../reception.bench.mjs). */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: { bindings: { ENVIRONMENT: "test", MASTER_KEY: "dGVzdC1vbmx5LW1hc3Rlci1rZXktMzItYnl0ZXMhISE=", API_KEY_PEPPER: "test-only-pepper-0123456789", TEST_MIGRATIONS: await readD1Migrations("./migrations"), BENCH_SMOKE: SMOKE ? "1" : "" } },
    })),
  ],
  test: { include: ["bench/reception/reception.bench.test.ts"], globalSetup: ["bench/reception/bundle.ts"], setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/quiet-logs.ts"], testTimeout: 600_000 },
});
