#!/usr/bin/env node
// CPU micro-benchmark of the Chilean engine inside workerd (vitest + @cloudflare/vitest-plugin):
// ms per buildSignedDte (2-line factura), per buildEnvioDte of 50 DTEs, and per simulator
// validation of that 50-document EnvioDTE (bench/engine/engine.bench.test.ts). No targets: it
// prints figures for before/after comparisons of the signing and validation code. A per-step
// breakdown: ENGINE_BENCH_FILE=bench/engine/parts.bench.test.ts npm run bench -- engine. A smoke run
// (BENCH_SMOKE=1): one round of one operation each, an envelope of 5 DTEs.
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
const r = spawnSync(process.execPath, [vitest, "run", "--config", "bench/engine/vitest.config.ts", "--silent=false", "--reporter=dot"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
});
process.exit(r.status ?? 1);
