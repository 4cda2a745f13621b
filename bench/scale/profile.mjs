// Where the CPU goes during the scale load (SCALE_BENCH_PROFILE): V8 CPU profiles of the service's
// isolate and of every other isolate of its workerd (miniflare's local D1, Queues, R2...), taken over
// workerd's inspector (enabled by wrangler dev's `--inspector-port`; wrangler's own proxy on that
// port reaches the service's isolate only, so the runtime's inspector is found from the process's
// listening sockets; GET /json lists the isolates, then the Chrome DevTools Protocol's Profiler
// domain over each websocket), and the CPU seconds of each process of the run from /proc.
import { copyFileSync, existsSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One CDP session over a websocket: `send(method, params)` resolves with the result. */
async function cdpSession(wsUrl) {
  // The inspector proxy wants a local Origin (Node's WebSocket takes headers as a second argument).
  const ws = new WebSocket(wsUrl, { headers: { Origin: "http://localhost" } });
  await new Promise((resolve, reject) => {
    // 15 s: once it did not open within 5 s after a first load (2026-11-26, the service's isolate through wrangler's proxy).
    const timer = setTimeout(() => reject(new Error(`inspector websocket ${wsUrl} did not open in 15 s`)), 15_000);
    ws.onopen = () => (clearTimeout(timer), resolve());
    ws.onerror = () => (clearTimeout(timer), reject(new Error(`inspector websocket ${wsUrl} did not open`)));
  });
  let nextId = 1;
  const pending = new Map();
  ws.onmessage = (event) => {
    const msg = JSON.parse(String(event.data));
    const waiter = msg.id !== undefined && pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(`${waiter.method}: ${msg.error.message}`));
    else waiter.resolve(msg.result);
  };
  return {
    /** One command; refused after `timeoutMs` (an isolate that never answers must not hold the bench). */
    send(method, params = {}, timeoutMs = 10_000) {
      const id = nextId++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => pending.delete(id) && reject(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
        const done = (f) => (v) => (clearTimeout(timer), f(v));
        pending.set(id, { resolve: done(resolve), reject: done(reject), method });
      });
    },
    close: () => ws.close(),
  };
}

/** The ports a process listens on (loopback TCP), from /proc/net/tcp and its socket fds. */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {}
  }
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && inodes.has(f[9]))
    .map((f) => parseInt(f[1].split(":")[1], 16));
}

/**
 * The inspector targets of the workerd that runs the service (miniflare's, started with
 * `--inspector-addr`, below the wrangler CLI `servicePid`): one per isolate, the service's
 * (`core:user:<name>`) and miniflare's own (the local D1, Queues, R2, rate limits...).
 */
async function inspectorTargets(servicePid) {
  const runtime = processTree(servicePid).filter((p) => p.name === "workerd" && readFileSync(`/proc/${p.pid}/cmdline`, "utf8").includes("--inspector-addr"));
  for (const p of runtime) {
    for (const port of listeningPorts(p.pid)) {
      try {
        const list = await (await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(2000) })).json();
        if (Array.isArray(list) && list.some((t) => String(t.id).startsWith("core:user:"))) return list;
      } catch {}
    }
  }
  throw new Error("no workerd inspector found (is wrangler dev running with --inspector-port?)");
}

/**
 * Starts sampling every isolate of the service's workerd. `stop(file)` writes the service
 * isolate's profile to `file`, each other isolate's to `file` + `.<target>.cpuprofile`, and a copy
 * of the service's bundle beside it (`<file>.bundle.js`, whose `// src/…` comments let the report
 * name files); it returns each isolate's busy milliseconds (samples that are not idle).
 */
export async function startProfile(servicePid, inspectorPort, tree, { intervalUs = 1000 } = {}) {
  // The service's isolate through wrangler's proxy (which holds the runtime's one session to it),
  // every other isolate straight from the runtime.
  const [proxied] = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const others = (await inspectorTargets(servicePid)).filter((t) => !isService(t.id));
  const sessions = [];
  for (const t of [{ ...proxied, id: "service" }, ...others]) {
    try {
      const session = await cdpSession(t.webSocketDebuggerUrl);
      await session.send("Profiler.enable");
      await session.send("Profiler.setSamplingInterval", { interval: intervalUs });
      await session.send("Profiler.start");
      sessions.push({ id: t.id, session });
    } catch (e) {
      if (t.id === "service") throw e;
      process.stderr.write(`profile: ${t.id} left out (${e.message})\n`); // a helper isolate that cannot be profiled
    }
  }
  return {
    async stop(file) {
      const busy = {};
      let bundle = null;
      for (const { id, session } of sessions) {
        const { profile } = await session.send("Profiler.stop");
        session.close();
        busy[id] = busyMs(profile);
        if (id === "service") {
          writeFileSync(file, JSON.stringify(profile));
          bundle = bundleOf(profile, tree);
          if (bundle) copyFileSync(bundle, `${file}.bundle.js`);
        } else if (busy[id] > 0) writeFileSync(`${file}.${id.replace(/[^\w.-]+/g, "_")}.cpuprofile`, JSON.stringify(profile));
      }
      const isolates = Object.fromEntries(Object.entries(busy).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]));
      return { file, bundle, isolates_busy_ms: isolates };
    },
  };
}

/** The service's own worker among the runtime's targets (miniflare names user workers core:user:<name>, its helpers too). */
const isService = (id) => id.startsWith("core:user:") && !id.includes("dev-registry") && !id.includes("observability");

/** Milliseconds an isolate ran JavaScript or its runtime: samples that are not `(idle)`, times the interval. */
function busyMs(profile) {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const steps = profile.timeDeltas.filter((d) => d > 0 && d < 5000).sort((a, b) => a - b);
  const interval = steps[Math.floor(steps.length / 2)] ?? 1000;
  return Math.round((profile.samples.filter((id) => !idle.has(id)).length * interval) / 1000);
}

/**
 * The bundle wrangler built and the profile sampled most (its url is the bare file name, e.g.
 * `entry.js`, found under the tree's .wrangler/tmp/dev-*; deleted when wrangler stops).
 */
function bundleOf(profile, tree) {
  const hits = new Map();
  for (const n of profile.nodes) if (n.callFrame.url) hits.set(n.callFrame.url, (hits.get(n.callFrame.url) ?? 0) + (n.hitCount ?? 0));
  const url = [...hits].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!url) return null;
  if (url.startsWith("file://")) return existsSync(fileURLToPath(url)) ? fileURLToPath(url) : null;
  const tmp = path.join(tree, ".wrangler/tmp");
  const candidates = existsSync(tmp) ? readdirSync(tmp).map((d) => path.join(tmp, d, url)).filter((f) => existsSync(f)) : [];
  return candidates.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null;
}

const TICK = 100; // clock ticks per second of /proc/<pid>/stat (USER_HZ on Linux)

function procStat(pid) {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    const name = raw.slice(raw.indexOf("(") + 1, raw.lastIndexOf(")"));
    return { pid, name, ppid: Number(rest[1]), cpu: (Number(rest[11]) + Number(rest[12])) / TICK };
  } catch {
    return null;
  }
}

/** `pid` and every process below it, with their CPU seconds so far (user + system). */
function processTree(pid) {
  if (!existsSync("/proc")) return [];
  const all = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map((d) => procStat(Number(d))).filter(Boolean);
  const out = [];
  const walk = (p) => {
    const me = all.find((s) => s.pid === p);
    if (me) out.push(me);
    for (const child of all.filter((s) => s.ppid === p)) walk(child.pid);
  };
  walk(pid);
  return out;
}

/**
 * What a process of the service is: the workerd that runs the Worker and miniflare's bindings (the
 * one with an inspector address), wrangler's own workerd (the dev proxy every request passes
 * through first), the wrangler CLI (node), esbuild.
 */
function roleOf(p) {
  if (p.name !== "workerd") return p.name === "node" ? "wrangler" : p.name;
  try {
    return readFileSync(`/proc/${p.pid}/cmdline`, "utf8").includes("--inspector-addr") ? "workerd" : "workerd_proxy";
  } catch {
    return "workerd";
  }
}

/** CPU seconds so far of the service's processes (by role, see `roleOf`) and of this bench. */
export function cpuNow(servicePid) {
  const byName = {};
  for (const p of processTree(servicePid)) {
    const name = roleOf(p);
    byName[name] = (byName[name] ?? 0) + p.cpu;
  }
  const own = process.cpuUsage();
  return { ...byName, bench: (own.user + own.system) / 1e6 };
}

/** What each process spent between two `cpuNow` readings, in seconds and ms per document. */
export function cpuDelta(before, after, documents) {
  const out = {};
  for (const k of Object.keys(after)) {
    const s = after[k] - (before[k] ?? 0);
    out[k] = { seconds: +s.toFixed(2), ms_per_document: +((1000 * s) / documents).toFixed(1) };
  }
  return out;
}
