import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import path from "node:path";

/** The hostile-XML benchmark runs inside workerd like the Worker (see ../hostile.bench.mjs); it times the bundle of bench/reception/bundle.ts. */
export default defineConfig({
  root: path.resolve(import.meta.dirname, "../.."),
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { ENVIRONMENT: "test" } } })],
  test: { include: ["bench/hostile/hostile.bench.test.ts"], globalSetup: ["bench/reception/bundle.ts"], testTimeout: 3_600_000 },
});
