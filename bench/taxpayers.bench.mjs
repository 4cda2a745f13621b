// `npm run bench -- taxpayers`: generates the SII taxpayer list at full size (1.7 million rows by
// default, TAXPAYER_BENCH_ROWS to change it), imports it into a throw-away local D1 with the real
// import command (`npm run taxpayers:import`), and measures the lookup by RUT on the loaded table:
// the query plan (primary-key seek, not a scan) and the time of 1,000 lookups in one statement
// batch minus the time of one (wrangler's own start-up cancels out).
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { root, wrangler } from "../scripts/local-env.mjs";

// Default 500,000 rows keeps the run under two minutes on a shared 2-core machine; set
// TAXPAYER_BENCH_ROWS=1700000 for the SII list's full size (about 3 minutes there).
const ROWS = Number(process.env.TAXPAYER_BENCH_ROWS ?? 500_000);
const dir = mkdtempSync(path.join(tmpdir(), "taxpayer-bench-"));
const file = path.join(dir, "ce_empresas.csv");

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

async function generate() {
  const out = createWriteStream(file, { encoding: "latin1" });
  const write = (s) => (out.write(s) ? undefined : new Promise((r) => out.once("drain", r)));
  await write("RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\n");
  let buf = "";
  for (let i = 0; i < ROWS; i++) {
    buf += `${rutOf(i)};EMPRESA NÚMERO ${i} SPA;${i % 200};${String((i % 28) + 1).padStart(2, "0")}-0${(i % 9) + 1}-20${10 + (i % 15)};dte${i}@empresa${i % 1000}.cl;\n`;
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = "";
    }
  }
  await write(buf);
  await new Promise((r) => out.end(r));
}

const where = ["--local", "--persist-to", path.join(dir, "state")];
let sqlFiles = 0;
function timedSql(sql) {
  const f = path.join(dir, `q${sqlFiles++}.sql`);
  writeFileSync(f, sql);
  const t = performance.now();
  const out = wrangler(["d1", "execute", "DB", ...where, "--yes", "--file", f]);
  return { ms: performance.now() - t, out };
}

try {
  let t = performance.now();
  await generate();
  console.log(`generated ${ROWS} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/taxpayers-import.ts", file, ...where.slice(1), "--chunk-rows", "250000"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) throw new Error(`import failed (${r.status})`);
  const summary = JSON.parse(r.stdout.trim().split("\n").pop());
  console.log(`import: ${summary.loaded} rows, parse ${summary.parse_seconds} s, load ${summary.load_seconds} s → ${summary.rows_per_second} rows/s into D1 (end to end ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const lookup = (i) => `SELECT t.legal_name, t.exchange_email FROM taxpayer_directory d JOIN taxpayers t ON t.load_id = d.load_id AND t.rut = '${rutOf(i)}' WHERE d.id = 1`;
  const plan = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", `EXPLAIN QUERY PLAN ${lookup(12345)}`]);
  console.log(`query plan: ${plan.includes("SEARCH t USING PRIMARY KEY") || plan.includes("USING PRIMARY KEY") ? "primary-key seek (no scan)" : plan}`);
  const one = timedSql(lookup(1) + ";");
  const many = timedSql(Array.from({ length: 1000 }, (_, k) => lookup((k * 1699) % ROWS)).join(";\n") + ";");
  console.log(`lookup: ${(((many.ms - one.ms) / 999) * 1000).toFixed(0)} µs per lookup (1,000 lookups ${many.ms.toFixed(0)} ms vs 1 lookup ${one.ms.toFixed(0)} ms, wrangler start-up included in both)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
