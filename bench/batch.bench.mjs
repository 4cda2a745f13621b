#!/usr/bin/env node
// Batch issuance, the two figures of the batch work in one run:
// 1. intake inside workerd (bench/batch/intake.bench.test.ts): Worker time per document of a
//    batch of BATCH_BENCH_DOCS (500) boletas, against one RSA-2048 signature timed in the same run,
//    and the same for single POSTs (target: the batch ≤ 3 signatures per document);
// 2. end to end under `wrangler dev` (local D1, R2, Queues, Durable Objects, the built-in SII
//    simulator): BATCH_BENCH_E2E_DOCS (1,000) boletas through single POSTs from 64 concurrent
//    clients, then the same number in one batch, each from its first request to every document
//    ACCEPTED, in documents per second (target: the batch ≥ 3× the single POSTs).
// Writes the latest run to bench/results/batch.json. BENCH_SMOKE=1 (bench/smoke.mjs): 5 boletas at
// intake, 10 end to end from 4 clients, nothing written, targets not held.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fakePfx, postInvoices, quietEnv, readyCompany, root, run, sleep, startService } from "./lib.mjs";
import { runWorkerdBench } from "./workerd-bench.mjs";
import { knob, notWritten, SMOKE, targets } from "./smoke.mjs";

const DOCS = knob("BATCH_BENCH_E2E_DOCS", 1000, 10);
const CLIENTS = knob("BATCH_BENCH_CLIENTS", 64, 4);
const DEADLINE_MS = Number(process.env.BATCH_BENCH_DEADLINE_MS ?? 8 * 60_000);
const out = path.join(root, "bench/results/batch.json");

/**
 * Until `count` documents of the company are ACCEPTED (none FAILED or REJECTED), reading one total
 * a second: the API key's rate limit (1,200 a minute) also counts these reads.
 */
async function untilAccepted(base, H, cid, count) {
  const started = performance.now();
  const total = async (status) => (await (await fetch(`${base}/api/companies/${cid}/invoices?status=${status}&per_page=1`, { headers: H })).json()).total;
  for (;;) {
    const accepted = await total("ACCEPTED");
    if (accepted >= count) return;
    if (performance.now() - started > DEADLINE_MS) throw new Error(`only ${accepted}/${count} accepted (failed: ${await total("FAILED")}, rejected: ${await total("REJECTED")})`);
    await sleep(1000);
  }
}

/**
 * The single POSTs' company on the high-volume tier: 1,000 POSTs in well under a minute pass the
 * standard issuance limit (600 a minute). The tier is set before the company is first read.
 */
function highVolume(dir, cid) {
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/companies-tier.ts", "--company", cid, "--tier", "HIGH_VOLUME", "--persist-to", dir], { cwd: root, env: quietEnv, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`companies:tier: ${r.stderr}`);
}

async function singles(svc, pfx) {
  const { base, key } = svc;
  const { H, cid, boleta } = await readyCompany(base, key, 0, { pfx, cafs: { 39: DOCS + 10 }, beforeUse: (cid) => highVolume(svc.dir, cid) });
  for (let i = 0; i < 3; i++) await fetch(`${base}/api/companies/${cid}/invoices`, { method: "POST", headers: H, body: JSON.stringify(boleta(`warm-${i}`)) });
  await untilAccepted(base, H, cid, 3);
  const started = performance.now();
  await postInvoices(base, H, cid, (i) => boleta(`s-${i}`), DOCS, CLIENTS);
  await untilAccepted(base, H, cid, DOCS + 3);
  return (performance.now() - started) / 1000;
}

async function batch({ base, key }, pfx) {
  const { H, cid, boleta } = await readyCompany(base, key, 0, { pfx, cafs: { 39: DOCS + 10 } });
  const warm = await fetch(`${base}/api/companies/${cid}/invoice-batches`, { method: "POST", headers: H, body: JSON.stringify({ rows: [0, 1, 2].map((i) => boleta(`warm-${i}`)) }) });
  if (warm.status !== 202) throw new Error(`warm-up batch: ${warm.status} ${await warm.text()}`);
  await untilAccepted(base, H, cid, 3);
  const started = performance.now();
  const res = await fetch(`${base}/api/companies/${cid}/invoice-batches`, { method: "POST", headers: H, body: JSON.stringify({ rows: Array.from({ length: DOCS }, (_, i) => boleta(`b-${i}`)) }) });
  const posted = await res.json();
  if (res.status !== 202 || posted.documents !== DOCS) throw new Error(`batch: ${res.status} ${JSON.stringify(posted).slice(0, 500)}`);
  const postSeconds = (performance.now() - started) / 1000;
  for (;;) {
    const b = await (await fetch(`${base}/api/companies/${cid}/invoice-batches/${posted.id}?per_page=1`, { headers: H })).json();
    if (b.status === "COMPLETED") {
      if (b.counts.ACCEPTED !== DOCS) throw new Error(`batch completed with ${JSON.stringify(b.counts)}`);
      break;
    }
    if (performance.now() - started > DEADLINE_MS) throw new Error(`batch still ${JSON.stringify(b.counts)} after ${DEADLINE_MS} ms`);
    await sleep(500);
  }
  return { seconds: (performance.now() - started) / 1000, postSeconds };
}

async function main() {
  const intakeStatus = runWorkerdBench("batch", "bench/batch/vitest.config.ts");
  if (intakeStatus !== 0) throw new Error("the intake part failed");
  const svc = await startService();
  let e2e;
  try {
    const pfx = fakePfx();
    const singleSeconds = await singles(svc, pfx);
    const b = await batch(svc, pfx);
    const single = DOCS / singleSeconds;
    const batched = DOCS / b.seconds;
    e2e = {
      documents: DOCS,
      single_clients: CLIENTS,
      single_seconds: +singleSeconds.toFixed(1),
      single_docs_per_s: +single.toFixed(1),
      batch_seconds: +b.seconds.toFixed(1),
      batch_post_seconds: +b.postSeconds.toFixed(2),
      batch_docs_per_s: +batched.toFixed(1),
      ratio: +(batched / single).toFixed(2),
      target_met: batched / single >= 3,
    };
  } finally {
    await svc.stop();
  }
  console.log(JSON.stringify(e2e, null, 2));
  if (SMOKE) {
    notWritten("bench/results/batch.json");
    targets("");
    return;
  }
  const results = JSON.parse(readFileSync(out, "utf8"));
  writeFileSync(out, JSON.stringify({ ...results, end_to_end: e2e }, null, 2) + "\n");
  console.log(`targets: intake per document ≤ 3× RSA: ${results.intake.intake_target_met ? "met" : "NOT met"} (${results.intake.batch_rsa_ratio_per_document}×); end to end ≥ 3× single POSTs: ${e2e.target_met ? "met" : "NOT met"} (${e2e.ratio}×)`);
}

run(main);
