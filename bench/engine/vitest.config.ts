import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";
import { SMOKE } from "../smoke.mjs";

/**
 * The engine micro-benchmark runs inside workerd like the Worker itself (see ../engine.bench.mjs).
 * Its knobs reach the Worker as bindings.
 */
const knobs = { ENGINE_BENCH_ROUNDS: process.env.ENGINE_BENCH_ROUNDS ?? "", BENCH_SMOKE: SMOKE ? "1" : "" };

export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { ENVIRONMENT: "test", ...knobs } } })],
  test: { include: [process.env.ENGINE_BENCH_FILE ?? "bench/engine/engine.bench.test.ts"], testTimeout: 600_000 },
});
