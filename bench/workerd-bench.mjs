// Runs a benchmark that lives in a vitest config inside workerd (vitest + @cloudflare/vitest-plugin),
// prints what it prints, and writes the JSON it prints on a line starting with `RESULTS ` as the
// latest run of bench/results/<name>.json (not in a smoke run, BENCH_SMOKE=1). Used by the *.bench.mjs
// entry points.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { notWritten, SMOKE } from "./smoke.mjs";

const root = path.resolve(import.meta.dirname, "..");
const MARK = "RESULTS ";

export function runWorkerdBench(name, config) {
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const r = spawnSync(process.execPath, [vitest, "run", "--config", config, "--silent=false", "--reporter=dot"], {
    cwd: root,
    stdio: ["inherit", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 << 20,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  let json = null;
  for (const line of (r.stdout ?? "").split("\n")) {
    const at = line.indexOf(MARK);
    if (at >= 0) json = JSON.parse(line.slice(at + MARK.length));
    else process.stdout.write(line + "\n");
  }
  if (json && SMOKE) notWritten(`bench/results/${name}.json`);
  else if (json) {
    const out = path.join(root, `bench/results/${name}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ bench: name, date: new Date().toISOString(), ...json }, null, 2) + "\n");
    console.log(`written: ${path.relative(root, out)}`);
  }
  return r.status ?? 1;
}
