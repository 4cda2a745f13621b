#!/usr/bin/env node
// Capacity model measurements (docs/capacity.md), inside workerd (vitest + @cloudflare/vitest-plugin,
// real D1, R2, Durable Objects and the SII simulator): for one document of each common kind, what
// every pipeline step asks of D1 (round trips, statements, rows read and written, bytes written),
// R2, the folio Durable Object, the queues and the network, and the Worker's own time as ms and as
// a ratio to one RSA-2048 signature timed in the same run; the bytes each document leaves in D1 and
// R2; and the per-document averages when 200 boletas go through the real consumers in batches.
// See bench/capacity/capacity.bench.test.ts. Knobs: CAPACITY_REPS (5 measured documents per kind,
// after one warm-up), CAPACITY_BATCH_DOCS (200). A smoke run (BENCH_SMOKE=1): 1 measured document
// per kind, 5 boletas batched.
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
const r = spawnSync(process.execPath, [vitest, "run", "--config", "bench/capacity/vitest.config.ts", "--silent=false", "--reporter=dot"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", VITE_CONFIG_NATIVE_IGNORE_WARNING: "true" },
});
process.exit(r.status ?? 1);
