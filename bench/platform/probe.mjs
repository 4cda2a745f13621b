// The platform bench's probe: a worker that does nothing but the operation under test (generated in
// a temporary directory, same wrangler/workerd as the service), and the no-op route's latency at 64
// concurrent clients. Used by the platform bench and, for its no-op reference, by the scale bench.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pct, sleep, startWranglerDev } from "../lib.mjs";

const WORKER = `
import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject { ping(i) { return i; } }
export default {
  async fetch(req, env) {
    const u = new URL(req.url); const n = Number(u.searchParams.get("n") ?? 0); const op = u.pathname.slice(1);
    const body = "x".repeat(5000);
    if (op === "d1-read") for (let i = 0; i < n; i++) await env.DB.prepare("SELECT ?1 AS v").bind(i).first();
    if (op === "d1-write") { await env.DB.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)"); for (let i = 0; i < n; i++) await env.DB.prepare("INSERT INTO t (v) VALUES (?1)").bind(body).run(); }
    if (op === "d1-batch-of-50") for (let i = 0; i < n / 50; i++) await env.DB.batch(Array.from({ length: 50 }, (_, j) => env.DB.prepare("SELECT ?1 AS v").bind(j)));
    if (op === "r2-put-5kb") for (let i = 0; i < n; i++) await env.R2.put("k" + i, body);
    if (op === "r2-get-5kb") for (let i = 0; i < n; i++) await (await env.R2.get("k" + (i % 50)))?.arrayBuffer();
    if (op === "queue-send") for (let i = 0; i < n; i++) await env.Q.send({ i });
    if (op === "queue-sendBatch-of-50") for (let i = 0; i < n / 50; i++) await env.Q.sendBatch(Array.from({ length: 50 }, (_, j) => ({ body: { j } })));
    if (op === "durable-object-rpc") { const s = env.C.get(env.C.idFromName("a")); for (let i = 0; i < n; i++) await s.ping(i); }
    if (op === "rsa2048-sha1-sign") { const k = await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-1" }, false, ["sign"]); for (let i = 0; i < n; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", k.privateKey, new TextEncoder().encode(body + i)); }
    return new Response("ok");
  },
  async queue(batch) { for (const m of batch.messages) m.ack(); },
};`;

const CONFIG = `name = "platform-bench"
main = "index.js"
compatibility_date = "2026-10-01"
compatibility_flags = ["nodejs_compat"]
[[d1_databases]]
binding = "DB"
database_name = "platform-bench"
database_id = "00000000-0000-0000-0000-000000000000"
[[r2_buckets]]
binding = "R2"
bucket_name = "platform-bench"
[[queues.producers]]
binding = "Q"
queue = "platform-bench-q"
[[queues.consumers]]
queue = "platform-bench-q"
max_batch_size = 100
max_batch_timeout = 1
[[durable_objects.bindings]]
name = "C"
class_name = "Counter"
[[migrations]]
tag = "v1"
new_sqlite_classes = ["Counter"]
`;

export const workerdPids = () =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("workerd\0serve");
      } catch {
        return false;
      }
    })
    .map(Number);
/** utime + stime of a process, in ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
export const totalCpu = (pids) => pids.reduce((s, p) => s + cpuMs(p), 0);

/** Starts the probe worker; `pids` are its workerd processes, `stop()` removes it. */
export async function startProbe() {
  const dir = mkdtempSync(path.join(tmpdir(), "dte-platform-bench-"));
  writeFileSync(path.join(dir, "index.js"), WORKER);
  writeFileSync(path.join(dir, "wrangler.toml"), CONFIG);
  const before = new Set(workerdPids());
  const { base, stop } = await startWranglerDev({ cwd: dir });
  return {
    base,
    pids: workerdPids().filter((p) => !before.has(p)),
    async stop() {
      stop();
      await sleep(1500);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `total` requests to the probe's no-op route from `clients` concurrent clients. */
export async function noopLatency(base, total = 5000, clients = 64) {
  const latencies = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        const s = performance.now();
        await (await fetch(`${base}/`)).text();
        latencies.push(performance.now() - s);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { requests: total, per_s: Math.round(total / ((performance.now() - t0) / 1000)), p50_ms: +pct(latencies, 50).toFixed(1), p99_ms: +pct(latencies, 99).toFixed(1) };
}
