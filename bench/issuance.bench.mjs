#!/usr/bin/env node
// End-to-end issuance against the service as `npm start` runs it (wrangler dev: local D1, R2,
// Queues, Durable Objects and the built-in SII simulator), in a temporary state directory:
// - POST latency: ISSUANCE_BENCH_TOTAL facturas (default 2,000) posted by 64 concurrent clients;
//   p50/p95/p99 of the POST round trip (target p99 <= 30 ms);
// - throughput: documents per second from the first POST to the last ACCEPTED (target >= 300/s);
// - exactness: every document ACCEPTED, folios distinct and consecutive (1..N).
// It starts and stops wrangler itself (SIGTERM to the CLI process only) and deletes its data.
// A smoke run (BENCH_SMOKE=1): 10 facturas from 4 clients.
import { pct, postInvoices, readyCompany, run, startService, untilAccepted } from "./lib.mjs";
import { knob, targets } from "./smoke.mjs";

const TOTAL = knob("ISSUANCE_BENCH_TOTAL", 2000, 10);
const CLIENTS = knob("ISSUANCE_BENCH_CLIENTS", 64, 4);
const DEADLINE_MS = Number(process.env.ISSUANCE_BENCH_DEADLINE_MS ?? 8 * 60_000);

async function main() {
  const svc = await startService();
  const { base, key } = svc;
  try {
    const { H, cid, invoice } = await readyCompany(base, key, TOTAL);

    // Warm-up (first requests compile the bundle's code paths).
    for (let i = 0; i < 3; i++) await fetch(`${base}/api/companies/${cid}/invoices`, { method: "POST", headers: H, body: JSON.stringify(invoice(`warm-${i}`)) });

    const started = performance.now();
    const latencies = await postInvoices(base, H, cid, invoice, TOTAL - 3, CLIENTS);
    const postedMs = performance.now() - started;
    await untilAccepted(base, H, cid, TOTAL, DEADLINE_MS);
    const totalMs = performance.now() - started;
    const folios = [];
    for (let page = 1; folios.length < TOTAL; page++) {
      const res = await (await fetch(`${base}/api/companies/${cid}/invoices?per_page=100&page=${page}`, { headers: H })).json();
      if (res.data.length === 0) break;
      for (const d of res.data) folios.push(d.folio);
    }
    const sortedF = [...folios].sort((a, b) => a - b);
    const duplicates = sortedF.length - new Set(sortedF).size;
    const gaps = sortedF.filter((f, i) => f !== i + 1).length;
    latencies.sort((a, b) => a - b);
    const r = {
      documents: TOTAL,
      clients: CLIENTS,
      post_p50_ms: +pct(latencies, 50).toFixed(1),
      post_p95_ms: +pct(latencies, 95).toFixed(1),
      post_p99_ms: +pct(latencies, 99).toFixed(1),
      post_rate_per_s: +((TOTAL - 3) / (postedMs / 1000)).toFixed(1),
      end_to_end_docs_per_s: +(TOTAL / (totalMs / 1000)).toFixed(1),
      end_to_end_seconds: +(totalMs / 1000).toFixed(1),
      folio_duplicates: duplicates,
      folio_gaps: gaps,
    };
    console.log(JSON.stringify(r, null, 2));
    targets(`targets: end-to-end >= 300 docs/s: ${r.end_to_end_docs_per_s >= 300 ? "met" : "NOT met"}; POST p99 <= 30 ms: ${r.post_p99_ms <= 30 ? "met" : "NOT met"}`);
    if (duplicates || gaps) process.exitCode = 1;
  } finally {
    await svc.stop();
  }
}

run(main);
