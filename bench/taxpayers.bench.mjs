// `npm run bench -- taxpayers`: generates the SII taxpayer list at full size (1.7 million rows by
// default, TAXPAYER_BENCH_ROWS to change it), imports it into a throw-away local D1 with the real
// import command (`npm run taxpayers:import`), and measures the lookup by RUT on the loaded table:
// the query plan (primary-key seek, not a scan) and the latency of 1,000 lookups through the API
// (wrangler dev on the loaded local D1), against the same lookups on a small list in the same run.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureDevVars, root, wrangler } from "../scripts/local-env.mjs";
import { pct, sleep, startWranglerDev } from "./lib.mjs";
import { knob } from "./smoke.mjs";

// The SII list's full size, 1.7 million rows, by default (about 3 minutes on the shared 2-core
// machine); TAXPAYER_BENCH_ROWS changes it. The same lookups run first on a small list
// (TAXPAYER_BENCH_SMALL_ROWS, 1,000) so the run reports the ratio of the two latencies: with an
// index that ratio stays near 1, with a scan it would grow with the table. A smoke run
// (BENCH_SMOKE=1): lists of 200 and 2,000 rows, 20 lookups on each.
const ROWS = knob("TAXPAYER_BENCH_ROWS", 1_700_000, 2_000);
const SMALL = knob("TAXPAYER_BENCH_SMALL_ROWS", 1_000, 200);
const LOOKUPS = knob("TAXPAYER_BENCH_LOOKUPS", 1_000, 20);
const dir = mkdtempSync(path.join(tmpdir(), "taxpayer-bench-"));

function dv(body) {
  let sum = 0;
  let m = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * m;
    m = m === 7 ? 2 : m + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? "0" : r === 10 ? "K" : String(r);
}
const rutOf = (i) => {
  const body = String(50_000_000 + i * 7);
  return `${body}-${dv(body)}`;
};

async function generate(file, rows) {
  const out = createWriteStream(file, { encoding: "latin1" });
  const write = (s) => (out.write(s) ? undefined : new Promise((r) => out.once("drain", r)));
  await write("RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\n");
  let buf = "";
  for (let i = 0; i < rows; i++) {
    buf += `${rutOf(i)};EMPRESA NÚMERO ${i} SPA;${i % 200};${String((i % 28) + 1).padStart(2, "0")}-0${(i % 9) + 1}-20${10 + (i % 15)};dte${i}@empresa${i % 1000}.cl;\n`;
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = "";
    }
  }
  await write(buf);
  await new Promise((r) => out.end(r));
}

/** Generates a list of `rows`, imports it into its own local D1, and times LOOKUPS GETs by RUT. */
async function run(rows) {
  const file = path.join(dir, `ce_empresas_${rows}.csv`);
  const state = path.join(dir, `state_${rows}`);
  const where = ["--local", "--persist-to", state];
  let t = performance.now();
  await generate(file, rows);
  console.log(`[${rows} rows] generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/taxpayers-import.ts", file, ...where.slice(1), "--chunk-rows", "250000"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) throw new Error(`import failed (${r.status})`);
  const summary = JSON.parse(r.stdout.trim().split("\n").pop());
  console.log(`[${rows} rows] import: ${summary.loaded} rows, parse ${summary.parse_seconds} s, load ${summary.load_seconds} s → ${summary.rows_per_second} rows/s into D1 (end to end ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const lookup = (i) => `SELECT t.legal_name FROM taxpayer_directory d JOIN taxpayers t ON t.load_id = d.load_id AND t.rut = '${rutOf(i)}' WHERE d.id = 1`;
  const plan = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", `EXPLAIN QUERY PLAN ${lookup(Math.min(12345, rows - 1))}`]);
  console.log(`[${rows} rows] query plan: ${/USING PRIMARY KEY/.test(plan) && !/SCAN t\b/.test(plan) ? "primary-key seek on taxpayers (no scan)" : plan}`);
  // Lookup through the API, on the loaded local D1: the service under wrangler dev.
  ensureDevVars();
  const made = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/apikey-create.ts", "--client", "bench", "--role", "MEMBER", "--persist-to", state], { cwd: root, encoding: "utf8" });
  if (made.status !== 0) throw new Error(`apikey:create failed: ${made.stderr}`);
  const key = JSON.parse(made.stdout).api_key;
  const dev = await startWranglerDev({ args: ["--persist-to", state], readyPath: "/health" });
  try {
    const times = [];
    for (let k = 0; k < LOOKUPS; k++) {
      const i = (k * 7919) % rows;
      const t0 = performance.now();
      const res = await fetch(`${dev.base}/api/catalogs/CL/taxpayers/${rutOf(i)}`, { headers: { "X-Api-Key": key } });
      const body = await res.json();
      times.push(performance.now() - t0);
      if (res.status !== 200 || body.legal_name !== `EMPRESA NÚMERO ${i} SPA`) throw new Error(`lookup ${rutOf(i)}: ${res.status} ${JSON.stringify(body)}`);
    }
    times.sort((x, y) => x - y);
    const out = { p50: pct(times, 50), p99: pct(times, 99), rowsPerSecond: summary.rows_per_second };
    console.log(`[${rows} rows] lookup via GET /api/catalogs/CL/taxpayers/{rut} (${LOOKUPS} sequential calls): p50 ${out.p50.toFixed(1)} ms, p99 ${out.p99.toFixed(1)} ms`);
    return out;
  } finally {
    dev.stop();
    await sleep(1500);
  }
}

try {
  const small = await run(SMALL);
  const big = await run(ROWS);
  console.log(
    `taxpayers: import ${big.rowsPerSecond} rows/s at ${ROWS} rows; lookup p50 ${big.p50.toFixed(1)} ms at ${ROWS} rows vs ${small.p50.toFixed(1)} ms at ${SMALL} rows: ratio ${(big.p50 / small.p50).toFixed(2)} (p99 ratio ${(big.p99 / small.p99).toFixed(2)})`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
