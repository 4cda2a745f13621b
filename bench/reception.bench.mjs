#!/usr/bin/env node
// Reception benchmark inside workerd (vitest + @cloudflare/vitest-plugin, real D1 and R2): received
// DTEs verified and stored per second from e-mails of 1, 50 and 500 DTEs through the Worker's email()
// handler, and the verification CPU per DTE against its crypto floor (bench/reception/fixture.ts
// cryptoFloor: the verifies and digests it cannot do without, under keys of the sizes that sign them)
// measured in the same run. See bench/reception/reception.bench.test.ts. The figures of the latest
// run are written to bench/results/reception.json.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
const r = spawnSync(process.execPath, [vitest, "run", "--config", "bench/reception/vitest.config.ts", "--silent=false", "--reporter=dot"], {
  cwd: root,
  stdio: ["inherit", "pipe", "inherit"],
  encoding: "utf8",
  maxBuffer: 64 << 20,
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
});
process.stdout.write(r.stdout ?? "");
const line = (r.stdout ?? "").split("\n").find((l) => l.startsWith("RESULTS "));
if (line) {
  mkdirSync(path.join(root, "bench/results"), { recursive: true });
  const out = { bench: "reception", date: new Date().toISOString(), ...JSON.parse(line.slice("RESULTS ".length)) };
  writeFileSync(path.join(root, "bench/results/reception.json"), JSON.stringify(out, null, 2) + "\n");
}
process.exit(r.status ?? 1);
