#!/usr/bin/env node
// `npm run bench`: runs every benchmark in bench/*.bench.mjs one after the other and prints their
// figures. A single one can be run with `npm run bench -- <name>` (e.g. `npm run bench -- folio`).
// BENCH_SMOKE=1 runs each at its smallest size and writes no results (bench/smoke.mjs).
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";

const dir = path.resolve(import.meta.dirname, "../bench");
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
if (files.length === 0) {
  console.error("no benchmark matched");
  process.exit(1);
}
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const r = spawnSync(process.execPath, [path.join(dir, f)], { stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" } });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
