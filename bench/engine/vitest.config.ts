import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";

/** The engine micro-benchmark runs inside workerd like the Worker itself (see ../engine.bench.mjs). */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { ENVIRONMENT: "test" } } })],
  test: { include: [process.env.ENGINE_BENCH_FILE ?? "bench/engine/engine.bench.test.ts"], testTimeout: 600_000 },
});
