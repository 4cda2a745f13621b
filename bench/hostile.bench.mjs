#!/usr/bin/env node
// Hostile XML inside workerd (vitest + @cloudflare/vitest-plugin): verifyInbound on each hostile
// shape of bench/hostile/shapes.ts (attributes, nesting, huge values, names, comments, PIs,
// character references, tiny nodes, ...) at about 1 MB and at the 10 MiB received-file limit,
// against an ordinary signed EnvioDTE of the same length in the same run; target: every ratio at
// most 3. Prints the table and writes the latest run to bench/results/hostile.json.
// HOSTILE_SIZES=1000000 runs one size (comma-separated lengths).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
const r = spawnSync(process.execPath, [vitest, "run", "--config", "bench/hostile/vitest.config.ts", "--silent=false", "--reporter=dot"], {
  cwd: root,
  stdio: ["inherit", "pipe", "inherit"],
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
});
const MARK = "HOSTILE_JSON ";
let json = null;
for (const line of (r.stdout ?? "").split("\n")) {
  const at = line.indexOf(MARK);
  if (at >= 0) json = JSON.parse(line.slice(at + MARK.length));
  else process.stdout.write(line + "\n");
}
if (json) {
  const out = path.join(root, "bench/results/hostile.json");
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), ...json }, null, 2) + "\n");
  console.log(`written: ${path.relative(root, out)}`);
}
process.exit(r.status ?? 1);
