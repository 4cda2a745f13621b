#!/usr/bin/env node
// The floor that `wrangler dev` sets on this machine, measured with a worker that does nothing but
// the operation under test (generated in a temporary directory, same wrangler/workerd as the
// service). For each operation: the CPU time the local runtime spends per call (the runtime's own
// process CPU, read from /proc, divided by the number of calls; all of it runs on one thread), and
// the latency of a no-op HTTP route at 64 concurrent clients. These explain the issuance figures:
// everything the service does per document is made of these calls. PLATFORM_BENCH_CALLS: calls per
// operation (500; 50 in a smoke run, BENCH_SMOKE=1, whose no-op route takes 200 requests).
import { run } from "./lib.mjs";
import { noopLatency, startProbe, totalCpu } from "./platform/probe.mjs";
import { knob, SMOKE } from "./smoke.mjs";

const N = knob("PLATFORM_BENCH_CALLS", 500, 50);

async function main() {
  const probe = await startProbe();
  const { base, pids } = probe;
  try {
    const ops = ["d1-read", "d1-write", "d1-batch-of-50", "r2-put-5kb", "r2-get-5kb", "queue-send", "queue-sendBatch-of-50", "durable-object-rpc", "rsa2048-sha1-sign"];
    const result = { calls_per_operation: N, cpu_ms_per_call: {}, noop_route_64_clients: {} };
    for (const op of ops) await fetch(`${base}/${op}?n=50`); // warm-up
    for (const op of ops) {
      const c0 = totalCpu(pids);
      const res = await fetch(`${base}/${op}?n=${N}`);
      if (!res.ok) throw new Error(`${op}: ${res.status}`);
      await res.text();
      result.cpu_ms_per_call[op] = +((totalCpu(pids) - c0) / N).toFixed(3);
    }
    result.noop_route_64_clients = await noopLatency(base, SMOKE ? 200 : undefined);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await probe.stop();
  }
}

run(main);
