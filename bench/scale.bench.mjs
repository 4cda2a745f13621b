#!/usr/bin/env node
// Load simulation: SCALE_BENCH_COMPANIES simulated companies (default 1,000),
// each with its certificate and CAFs, issue SCALE_BENCH_DOCS documents (default 2,000; a mix of
// boletas and facturas, Zipf-skewed over the companies) through the service as `npm start` runs
// it, posted by 64 concurrent clients. Measured: end-to-end throughput (first POST to the last
// document final, then every document checked through the API: final, accepted, folios distinct per
// company and type), POST p50/p95/p99, and per store (the D1 database, each Durable Object) the
// documents, bytes and requests the load added. The same load runs on a baseline (the code at
// SCALE_BASELINE_REF, default HEAD, in a temporary git worktree) and on this tree, one after the
// other: throughput ratio after/before (target >= 1.5) and each POST p99 over a no-op route's p99
// at 64 clients measured in the same run (target <= 2). Each tree then runs the same load a second
// time on the same companies, measured apart (SCALE_BENCH_STEADY=0 skips it): the first load is
// mostly new companies' first documents (half the companies issue one), whose one-time costs (a new
// store's schema, the certificate opened, the caches filled) it carries; the second is what a
// service sees on an ordinary day, companies that have issued before. Then the model's extrapolation to 10 million
// documents a day across 100,000 companies (target: no store above 50 % of a limit).
// SCALE_BENCH_WRITE_DOC=1 writes the tables to bench/results/scale.md (the latest run only).
// Each run also reports the CPU seconds of workerd, the wrangler CLI and this bench during the
// measured load; SCALE_BENCH_PROFILE=file.cpuprofile takes a V8 CPU profile of the Worker's isolate
// over the first load (SCALE_BENCH_PROFILE_PHASE=steady: the second; the baseline's goes to
// file.baseline.cpuprofile); `node bench/scale/profile-top.mjs
// file.cpuprofile` prints where it went. A smoke run (BENCH_SMOKE=1): 3 companies, 8 documents, 4
// clients, no baseline and no second load (each still runs when SCALE_BASELINE_REF or
// SCALE_BENCH_STEADY=1 asks for it), the targets not held, nothing written.
import { freePort, pct, root, run, sleep, startService, untilAccepted, postInvoices, readyCompany } from "./lib.mjs";
import { noopLatency, startProbe } from "./platform/probe.mjs";
import { describeDistribution, jobsFor, postAll, sampleNoop, setupCompanies, verify, zipfCounts } from "./scale/load.mjs";
import { layoutOf, layouts, storeDelta } from "./scale/layouts.mjs";
import { extrapolate, modelTable, TARGET } from "./scale/model.mjs";
import { partitionTable, perKind, runTable, writeDoc } from "./scale/report.mjs";
import { checkoutBaseline, cleanTree, currentCommit, prepareTree } from "./scale/tree.mjs";
import { cpuDelta, cpuNow, startProfile } from "./scale/profile.mjs";
import { knob, notWritten, SMOKE, targets } from "./smoke.mjs";

const env = process.env;
const COMPANIES = knob("SCALE_BENCH_COMPANIES", 1000, 3);
const DOCS = knob("SCALE_BENCH_DOCS", 2000, 8);
const ZIPF_S = Number(env.SCALE_BENCH_ZIPF_S ?? 1);
const BOLETA_SHARE = Number(env.SCALE_BENCH_BOLETA_SHARE ?? 0.7);
const CLIENTS = knob("SCALE_BENCH_CLIENTS", 64, 4);
const SETUP_CONCURRENCY = knob("SCALE_BENCH_SETUP_CONCURRENCY", 16, 3);
const BASELINE_REF = env.SCALE_BASELINE_REF ?? (SMOKE ? "none" : "HEAD");
const DEADLINE_MS = Number(env.SCALE_BENCH_DEADLINE_MS ?? 15 * 60_000);
const SEED = Number(env.SCALE_BENCH_SEED ?? 16);
const PROFILE = env.SCALE_BENCH_PROFILE;
/** Which load the profile covers: the first (`cold`, default) or the second (`steady`). */
const PROFILE_PHASE = env.SCALE_BENCH_PROFILE_PHASE ?? "cold";
/** Whether the load runs a second time on the same companies, measured apart (default on; 0: off). */
const STEADY = SMOKE ? env.SCALE_BENCH_STEADY === "1" : env.SCALE_BENCH_STEADY !== "0";
const WARM_UP = SMOKE ? 2 : 10;
/** Requests to the probe's no-op route at 64 clients: its warm-up and its measure. */
const NOOP = SMOKE ? { warm: 64, measured: 256 } : { warm: 500, measured: 5000 };

const progress = (msg) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const meterOf = async (base) => (await fetch(`${base}/__scale/meter`)).json();

async function untilFinal(layout, dir, tree, total) {
  const started = performance.now();
  for (let logged = started; ; ) {
    const p = layout.progress(dir, tree);
    if (p.final >= total) return;
    if (performance.now() - started > DEADLINE_MS) throw new Error(`only ${p.final}/${total} documents final after ${DEADLINE_MS} ms`);
    if (performance.now() - logged > 10_000) {
      progress(`${p.final}/${total} final`);
      logged = performance.now();
    }
    await sleep(500);
  }
}

/** The whole load on one tree: set-up, warm-up, the measured load, the checks, per-store figures. */
async function runOnce(tree, label, commit, counts) {
  const layoutName = layoutOf(tree);
  const layout = layouts[layoutName];
  const inspectorPort = PROFILE ? await freePort() : null;
  const svc = await startService({ cwd: tree, args: [...prepareTree(tree), ...(PROFILE ? ["--inspector-port", String(inspectorPort)] : [])] });
  svc.inspectorPort = inspectorPort;
  progress(`${label}: service up (${layoutName} layout); setting up ${counts.length} companies`);
  try {
    const t0 = performance.now();
    const companies = await setupCompanies(svc.base, svc.key, counts, { boletaShare: BOLETA_SHARE, concurrency: SETUP_CONCURRENCY, progress: (m) => progress(`${label}: ${m}`) });
    const setupSeconds = (performance.now() - t0) / 1000;
    const warm = await readyCompany(svc.base, svc.key, WARM_UP);
    await postInvoices(svc.base, warm.H, warm.cid, warm.invoice, WARM_UP, 4, "warm-");
    await untilAccepted(svc.base, warm.H, warm.cid, WARM_UP, DEADLINE_MS);
    progress(`${label}: ${counts.length} companies set up in ${setupSeconds.toFixed(1)} s; load starts`);

    const cold = await measuredLoad(svc, tree, layout, label, jobsFor(companies, SEED), "", DOCS + WARM_UP);
    const { stores, queues, calls, cpu, seconds } = cold;
    // The same load again, on companies that have issued before (stores made, certificates open, caches filled): a service's ordinary day.
    const steady = STEADY ? await measuredLoad(svc, tree, layout, `${label} steady`, jobsFor(companies, SEED + 1), "s", 2 * DOCS + WARM_UP) : null;
    progress(`${label}: checking every document through the API`);
    const verified = await verify(svc.base, companies, STEADY ? 2 : 1);
    return {
      label,
      commit,
      layout: layoutName,
      setup_seconds: +setupSeconds.toFixed(1),
      documents: DOCS,
      seconds: +seconds.toFixed(1),
      ...cold.figures,
      cpu_during_load: cpu,
      ...calls,
      steady: steady && { seconds: steady.seconds, ...steady.figures, cpu_during_load: steady.cpu, ...steady.calls },
      verified,
      stores,
      queues,
      largest: { cid: companies[0].cid, documents: counts[0], types: { 33: companies[0].types.filter((t) => t === "33").length, 39: companies[0].types.filter((t) => t === "39").length } },
    };
  } finally {
    await svc.stop();
    cleanTree(tree);
  }
}

/**
 * One measured load of `jobs` on a running service (set up and warmed): posted by CLIENTS clients
 * while a no-op route is sampled, until `finalTotal` documents of the store are final; its timings,
 * CPU, per-store and per-call figures.
 */
async function measuredLoad(svc, tree, layout, label, jobs, tag, finalTotal) {
  const meter0 = await meterOf(svc.base);
  const stores0 = layout.stores(svc.dir, tree, meter0);
  const profiler = PROFILE && (PROFILE_PHASE === "steady") === (tag !== "") ? await startProfile(svc.pid, svc.inspectorPort, tree) : null;
  const cpu0 = cpuNow(svc.pid);
  const started = performance.now();
  const posting = postAll(svc.base, jobs, CLIENTS, tag);
  const [latencies, noopUnderLoad] = await Promise.all([posting, sampleNoop(svc.base, posting)]);
  const postSeconds = (performance.now() - started) / 1000;
  await untilFinal(layout, svc.dir, tree, finalTotal);
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuDelta(cpu0, cpuNow(svc.pid), jobs.length);
  // Named by the tree's label whichever load it covers (`current steady` → the `current` file).
  if (profiler) progress(`${label}: profile ${JSON.stringify(await profiler.stop(profileFile(label.replace(/ steady$/, ""))))}`);
  const meter1 = await meterOf(svc.base);
  const stores = storeDelta(stores0, layout.stores(svc.dir, tree, meter1));
  const queues = Object.fromEntries(Object.entries(meter1.queues).map(([k, v]) => [k, v - (meter0.queues[k] ?? 0)]));
  progress(`${label}: all final after ${seconds.toFixed(1)} s`);
  const figures = {
    docs_per_s: +(jobs.length / seconds).toFixed(1),
    post_rate_per_s: +(jobs.length / postSeconds).toFixed(1),
    post_p50_ms: +pct(latencies, 50).toFixed(1),
    post_p95_ms: +pct(latencies, 95).toFixed(1),
    post_p99_ms: +pct(latencies, 99).toFixed(1),
    noop_under_load: { samples: noopUnderLoad.length, p50_ms: +pct(noopUnderLoad, 50).toFixed(1), p99_ms: +pct(noopUnderLoad, 99).toFixed(1) },
  };
  return { stores, queues, calls: callsPerDocument(meter0, meter1), cpu, seconds: +seconds.toFixed(1), figures };
}

/**
 * What the load added per document (a tree's meter without these counts, an older one, gives
 * nothing): the 15 D1 statements run most (the simulator's `sim_*` ones included, marked), the
 * statements on D1's event outbox, and the Durable Object calls per binding and method.
 */
function callsPerDocument(before, after) {
  const delta = (a = {}, b = {}) => Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]);
  const per = (n) => +(n / DOCS).toFixed(2);
  return {
    d1_top_statements_per_document: delta(before.d1_by_sql, after.d1_by_sql).slice(0, 15).map(([sql, n]) => `${per(n)}  ${sql.replace(/\s+/g, " ").slice(0, 160)}`),
    object_calls_per_document: Object.fromEntries(delta(before.object_methods, after.object_methods).map(([k, n]) => [k, per(n)])),
    // D1's event outbox, whatever its rank: the control-plane events (ENU alerts) left on D1's path.
    d1_event_outbox_statements_per_document: per(delta(before.d1_by_sql, after.d1_by_sql).filter(([sql]) => /event_outbox/i.test(sql)).reduce((a, [, n]) => a + n, 0)),
  };
}

/** The current run's profile goes to SCALE_BENCH_PROFILE, another run's beside it, named by its label. */
const profileFile = (label) => (label === "current" ? PROFILE : PROFILE.replace(/(\.cpuprofile)?$/, `.${label}$1`));

async function measureNoop() {
  const probe = await startProbe();
  try {
    await noopLatency(probe.base, NOOP.warm); // warm-up
    return await noopLatency(probe.base, NOOP.measured);
  } finally {
    await probe.stop();
  }
}

function summary(r) {
  const { stores, largest, ...rest } = r;
  return { ...rest, per_document: perDocument(r), per_store_kind: perKind(stores) };
}

/** Every run's service share of D1 per document (the simulator's `sim_*` left out) and its queue messages per document, so runs compare side by side. */
function perDocument(r) {
  const d1 = r.stores.find((s) => s.kind === "D1");
  const per = (n) => +((n ?? 0) / r.documents).toFixed(2);
  return {
    d1_service_statements: d1 ? per(d1.statements - (d1.sim_statements ?? 0)) : null,
    d1_service_round_trips: d1 ? per(d1.requests - (d1.sim_requests ?? 0)) : null,
    d1_service_bytes: d1 ? Math.round(Math.max(0, d1.bytes - (d1.sim_bytes ?? 0)) / r.documents) : null,
    webhook_queue_messages: per(r.queues?.WEBHOOK_QUEUE),
    issuance_queue_messages: per(r.queues?.ISSUANCE_QUEUE),
  };
}

async function main() {
  const counts = zipfCounts(COMPANIES, DOCS, ZIPF_S);
  const distribution = describeDistribution(counts);
  console.log(`population (Zipf s=${ZIPF_S}, ${Math.round(BOLETA_SHARE * 100)} % boletas):`, JSON.stringify(distribution));
  const noop = await measureNoop();
  progress(`no-op route at 64 clients: p50 ${noop.p50_ms} ms, p99 ${noop.p99_ms} ms`);

  const runs = [];
  if (BASELINE_REF !== "none") {
    const baseline = checkoutBaseline(BASELINE_REF);
    try {
      runs.push(await runOnce(baseline.dir, "baseline", `${BASELINE_REF} = ${baseline.commit.slice(0, 7)}`, counts));
    } finally {
      baseline.remove();
    }
  }
  const current = await runOnce(root, "current", currentCommit(), counts);
  runs.push(current);

  const model = extrapolate(current);
  const before = runs.length > 1 ? runs[0] : null;
  const result = {
    population: distribution,
    noop_route_64_clients: noop,
    runs: runs.map(summary),
    throughput_ratio_after_over_before: before ? +(current.docs_per_s / before.docs_per_s).toFixed(2) : null,
    steady_throughput_ratio_after_over_before: before?.steady && current.steady ? +(current.steady.docs_per_s / before.steady.docs_per_s).toFixed(2) : null,
    post_p99_over_noop_p99: Object.fromEntries(runs.map((r) => [r.label, +(r.post_p99_ms / noop.p99_ms).toFixed(2)])),
    steady_post_p99_over_noop_p99: Object.fromEntries(runs.filter((r) => r.steady).map((r) => [r.label, +(r.steady.post_p99_ms / noop.p99_ms).toFixed(2)])),
    extrapolation: { target: TARGET, over_50_pct: model.over_50_pct },
  };
  console.log(JSON.stringify(result, null, 2));
  const markdown = [
    `Run of ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC: ${COMPANIES} companies, ${DOCS} documents (Zipf s=${ZIPF_S}: the largest company ${distribution.largest} documents, ${distribution.largest_share_pct} %; the ten largest ${distribution.top_10_share_pct} %; median ${distribution.median}), ${Math.round(BOLETA_SHARE * 100)} % boletas, ${CLIENTS} clients. No-op route at 64 clients in the same run: p50 ${noop.p50_ms} ms, p99 ${noop.p99_ms} ms.`,
    "",
    runTable(runs, noop),
    "",
    before ? `Throughput after ÷ before: **${result.throughput_ratio_after_over_before}** on new companies' first documents, **${result.steady_throughput_ratio_after_over_before ?? "—"}** on companies that have issued before (target ≥ 1.5).` : "No baseline run (SCALE_BASELINE_REF=none).",
    "",
    `Per store, what the measured load added (${current.layout} layout, the current tree):`,
    "",
    partitionTable(perKind(current.stores)),
    "",
    `Extrapolated with the per-document costs of this run (${current.layout} layout) to ${TARGET.documents_per_day.toLocaleString("en")} documents a day across ${TARGET.companies.toLocaleString("en")} companies, the largest issuing ${TARGET.largest_company_per_day.toLocaleString("en")} a day, peak hour ${TARGET.peak_factor}× the average:`,
    "",
    modelTable(model),
    "",
    model.over_50_pct.length ? `Over 50 % of a limit: ${model.over_50_pct.join("; ")}.` : "No store above 50 % of any limit.",
  ].join("\n");
  console.log(`\n${markdown}`);
  for (const k of perKind(current.stores)) console.log(`busiest ${k.kind}: ${k.busiest.join(" | ")}`);
  const met = (ok) => (ok ? "met" : "NOT met");
  const steadyMet = current.steady ? `; on companies that have issued before: throughput ${before?.steady ? met(result.steady_throughput_ratio_after_over_before >= 1.5) : "no baseline"}, POST p99 ${met(current.steady.post_p99_ms <= 2 * noop.p99_ms)}` : "";
  targets(`targets: throughput after/before >= 1.5: ${before ? met(result.throughput_ratio_after_over_before >= 1.5) : "no baseline"}; POST p99 <= 2x no-op p99: ${met(current.post_p99_ms <= 2 * noop.p99_ms)}${steadyMet}; no store above 50 %: ${met(model.over_50_pct.length === 0)}`);
  if (env.SCALE_BENCH_WRITE_DOC === "1" && SMOKE) notWritten("bench/results/scale.md");
  else if (env.SCALE_BENCH_WRITE_DOC === "1") writeDoc(markdown);
  const bad = runs.some((r) => r.verified.not_final || r.verified.not_accepted || r.verified.folio_duplicates || r.verified.missing);
  if (bad) process.exitCode = 1;
}

run(main);
