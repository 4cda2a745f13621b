#!/usr/bin/env node
// Folio allocator throughput through the real FolioAllocator Durable Object (bench/folio/worker.ts
// under `wrangler dev`, local storage in a temp dir), driven over loopback by concurrent HTTP
// requests that each trigger a batch of allocations through the DO stub. Two modes, each on a fresh
// company with one range 1..N:
// - many:   each request splits its ids into chunks of FOLIO_BENCH_RPC_BATCH (10, the issuance
//           queue's batch size) and makes one allocateMany RPC per chunk, all concurrently: many
//           concurrent callers, each with a queue-sized batch. 100,000 allocations; must reach
//           FOLIO_BENCH_TARGET allocations/s.
// - single: each request makes one allocate(id) RPC per id, all concurrently (Promise.all).
//           20,000 allocations by default; reported, not held to the target: one RPC per
//           allocation is bound by per-call overhead (about 1,000 calls/s per object here, in line
//           with the platform's documented soft limit of ~1,000 requests/s per Durable Object).
// For each mode: every document got exactly one folio, 0 duplicates and 0 gaps (folios 1..N), a
// redelivered sample gets the same folios, status agrees, and the ENU outbox got one
// LOW_AVAILABILITY and one EXHAUSTED row. Stops wrangler (SIGTERM to the CLI process only) and
// removes the temp dir.
//
// Env knobs: FOLIO_BENCH_TOTAL (100000, mode many), FOLIO_BENCH_SINGLE_TOTAL (20000, mode single),
// FOLIO_BENCH_CONCURRENCY (8 requests in flight), FOLIO_BENCH_BATCH (500 ids per request),
// FOLIO_BENCH_RPC_BATCH (10 ids per allocateMany call),
// FOLIO_BENCH_MODES ("many,single"), FOLIO_BENCH_TARGET (2000 allocations/s). A smoke run
// (BENCH_SMOKE=1): both modes, 1,000 allocations each, 2 requests of 100 ids in flight; the target
// is not held, every check of exactness is.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, sleep } from "./lib.mjs";
import { knob, SMOKE, targets } from "./smoke.mjs";

const root = path.resolve(import.meta.dirname, "..");
const TOTALS = {
  many: knob("FOLIO_BENCH_TOTAL", 100_000, 1000),
  single: knob("FOLIO_BENCH_SINGLE_TOTAL", 20_000, 1000),
};
const CONCURRENCY = knob("FOLIO_BENCH_CONCURRENCY", 8, 2);
const BATCH = knob("FOLIO_BENCH_BATCH", 500, 100);
const RPC_BATCH = knob("FOLIO_BENCH_RPC_BATCH", 10, 10);
const MODES = (process.env.FOLIO_BENCH_MODES ?? "many,single").split(",").filter((m) => m in TOTALS);
const TARGET = Number(process.env.FOLIO_BENCH_TARGET ?? 2000);
const DEADLINE_MS = 10 * 60_000;

async function post(base, route, body) {
  const res = await fetch(`${base}${route}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

async function get(base, route) {
  const res = await fetch(`${base}${route}`);
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

function migrationStatements() {
  const dir = path.join(root, "migrations");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .flatMap((f) => readFileSync(path.join(dir, f), "utf8").split("--> statement-breakpoint"))
    .map((s) => s.trim())
    .filter(Boolean);
}

async function runMode(base, mode) {
  const TOTAL = TOTALS[mode];
  const company = `cmp_bench_${mode}_${Date.now()}`;
  const range = await post(base, "/range", { company, cafId: `caf_${mode}`, from: 1, to: TOTAL });
  if (!range.ok) throw new Error(`addRange failed: ${JSON.stringify(range)}`);
  // Warm-up outside the clock (object creation, first compile): one tiny batch on another company.
  await post(base, "/alloc", { company: `${company}_warm`, ids: ["w"], mode });

  const folioOf = new Map();
  const failures = [];
  let next = 0;
  const started = performance.now();
  async function worker() {
    while (next < TOTAL) {
      const start = next;
      const n = Math.min(BATCH, TOTAL - start);
      next += n;
      const ids = Array.from({ length: n }, (_, i) => `doc-${start + i}`);
      const out = await post(base, "/alloc", { company, ids, mode, rpcBatch: RPC_BATCH });
      out.forEach((f, i) => {
        if (typeof f === "number") folioOf.set(ids[i], f);
        else failures.push([ids[i], f]);
      });
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;

  // Redelivery of a sample: the same documents must get the same folios.
  const sampleIds = Array.from({ length: 200 }, (_, i) => `doc-${Math.floor((i * TOTAL) / 200)}`);
  const again = await post(base, "/alloc", { company, ids: sampleIds, mode, rpcBatch: RPC_BATCH });
  const redeliveryMismatches = again.filter((f, i) => f !== folioOf.get(sampleIds[i])).length;

  const folios = [...folioOf.values()].sort((a, b) => a - b);
  let duplicates = 0;
  for (let i = 1; i < folios.length; i++) if (folios[i] === folios[i - 1]) duplicates++;
  const distinct = new Set(folios);
  let gaps = 0;
  for (let f = 1; f <= TOTAL; f++) if (!distinct.has(f)) gaps++;
  const status = await get(base, `/status?company=${company}`);
  // ENU rows are written right after the allocation that raised them; allow the alarm a moment.
  let outbox = [];
  for (let i = 0; i < 20; i++) {
    outbox = await get(base, `/outbox?company=${company}`);
    if (outbox.length >= 2) break;
    await sleep(250);
  }
  return {
    mode,
    total: TOTAL,
    allocations: folioOf.size,
    seconds,
    perSecond: folioOf.size / seconds,
    duplicates,
    gaps,
    failures: failures.length,
    redeliveryMismatches,
    statusAllocated: status.allocated,
    statusAvailable: status.total_available,
    enu: outbox.map((r) => r.dedupe_key),
  };
}

async function main() {
  const port = await freePort();
  const persist = mkdtempSync(path.join(tmpdir(), "folio-bench-"));
  const base = `http://127.0.0.1:${port}`;
  const args = [
    path.join(root, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    "-c",
    path.join(root, "bench/folio/wrangler.toml"),
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--persist-to",
    persist,
    "--log-level",
    "warn",
    "--show-interactive-dev-session=false",
  ];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const killTimer = setTimeout(() => {
    console.error("folio bench: deadline reached, stopping");
    child.kill("SIGTERM");
  }, DEADLINE_MS);

  let ok = false;
  try {
    const t0 = Date.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler exited early:\n${log}`);
      try {
        const r = await fetch(`${base}/health`);
        if (r.ok) break;
      } catch {
        /* not up yet */
      }
      if (Date.now() - t0 > 60_000) throw new Error(`wrangler did not start within 60 s:\n${log}`);
      await sleep(200);
    }
    await post(base, "/setup", { statements: migrationStatements() });
    console.log(
      `folio bench: ${CONCURRENCY} concurrent HTTP requests x ${BATCH} ids; mode many: allocateMany of ${RPC_BATCH} ids per RPC, ` +
        `${Math.ceil(BATCH / RPC_BATCH)} RPCs in flight per request; mode single: ${BATCH} allocate RPCs in flight per request`,
    );
    ok = true;
    for (const mode of MODES) {
      const r = await runMode(base, mode);
      const label = mode === "many" ? `allocateMany (${RPC_BATCH} ids per RPC, concurrent)` : "allocate (one RPC per document, concurrent)";
      console.log(
        `${label}: ${r.allocations} allocations in ${r.seconds.toFixed(2)} s = ${Math.round(r.perSecond)} allocations/s; ` +
          `duplicates ${r.duplicates}, gaps ${r.gaps}, failures ${r.failures}, redelivery mismatches ${r.redeliveryMismatches}; ` +
          `status allocated ${r.statusAllocated}, available ${r.statusAvailable}; ENU rows ${JSON.stringify(r.enu)}`,
      );
      const pass =
        r.allocations === r.total &&
        r.duplicates === 0 &&
        r.gaps === 0 &&
        r.failures === 0 &&
        r.redeliveryMismatches === 0 &&
        r.statusAllocated === r.total &&
        r.statusAvailable === 0 &&
        r.enu.length === 2;
      if (!pass) ok = false;
      if (mode === "many") {
        targets(`  target ${TARGET}/s: ${r.perSecond >= TARGET ? "met" : "NOT met"}`);
        if (r.perSecond < TARGET && !SMOKE) ok = false;
      }
    }
  } catch (err) {
    ok = false;
    console.error(err instanceof Error ? err.message : err);
  } finally {
    clearTimeout(killTimer);
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, sleep(15_000)]);
    if (child.exitCode === null && child.signalCode === null) console.error("folio bench: wrangler did not stop after SIGTERM");
    rmSync(persist, { recursive: true, force: true });
  }
  console.log(ok ? "folio bench: OK" : "folio bench: FAILED");
  process.exit(ok ? 0 : 1);
}

await main();
