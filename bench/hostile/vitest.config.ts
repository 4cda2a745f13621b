import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";
import { SMOKE } from "../smoke.mjs";

/**
 * The hostile-XML benchmark runs inside workerd like the Worker (see ../hostile.bench.mjs); it times
 * the bundle of bench/reception/bundle.ts. Its knobs reach the Worker as bindings.
 */
const knobs = { HOSTILE_SIZES: process.env.HOSTILE_SIZES ?? "", BENCH_SMOKE: SMOKE ? "1" : "" };

export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { ENVIRONMENT: "test", ...knobs } } })],
  test: { include: ["bench/hostile/hostile.bench.test.ts"], globalSetup: ["bench/reception/bundle.ts"], testTimeout: 3_600_000 },
});
