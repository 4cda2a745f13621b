#!/usr/bin/env node
// Where a .cpuprofile's time went: `node bench/scale/profile-top.mjs file.cpuprofile [N=30]` prints
// the top N functions by self time and by total time (a function counted once per sample however
// often it recurs in the stack), then self time by source file and by group (our src/, the SII
// simulator, node_modules, the runtime). Files come from the `// path` comments esbuild leaves in
// the bundle (saved beside the profile as <file>.bundle.js by SCALE_BENCH_PROFILE).
import { existsSync, readFileSync } from "node:fs";

const [file, topArg] = process.argv.slice(2).filter((a, i, all) => a !== "--callers" && all[i - 1] !== "--callers");
if (!file) {
  console.error("usage: node bench/scale/profile-top.mjs file.cpuprofile [N]");
  process.exit(1);
}
const TOP = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, "utf8"));

/** Bundle line (0-based) → source file, from esbuild's `// src/x.ts` module comments. */
function lineToSource(bundleFile) {
  if (!existsSync(bundleFile)) return () => null;
  const marks = [];
  readFileSync(bundleFile, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const m = /^\/\/ ((?:\.\.\/)*[\w@.\-/]+\.(?:[cm]?[jt]sx?|json))$/.exec(line);
      // Relative to the tree; a baseline checkout's linked node_modules shows as a longer path.
      if (m) marks.push([i, m[1].replace(/^(\.\.\/)+/, "").replace(/^.*?(?=node_modules\/)/, "")]);
    });
  return (line) => {
    let lo = 0;
    let hi = marks.length - 1;
    let found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid][0] <= line) {
        found = marks[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

const sourceOf = lineToSource(`${file}.bundle.js`);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/**
 * Self microseconds per node: each sample counts one sampling interval (the median time delta).
 * A sample's own delta is not used: workerd runs other isolates on the same thread (the local D1,
 * R2 and Queues simulators of miniflare), and while one of them runs, or the thread waits with no
 * isolate entered, this isolate is not sampled, so the next sample's delta would charge that gap
 * to whatever ran next here.
 */
// The interval: the median of the deltas that look like sampling steps (an isolate that ran
// rarely has mostly long gaps between its samples).
const steps = profile.timeDeltas.filter((d) => d > 0 && d < 5000).sort((a, b) => a - b);
const interval = steps[Math.floor(steps.length / 2)] ?? 1000;
const selfUs = new Map();
for (const id of profile.samples) selfUs.set(id, (selfUs.get(id) ?? 0) + interval);
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
const wallUs = profile.endTime - profile.startTime;

function where(cf) {
  if (!cf.url) return "(runtime)";
  // The bundle's url is its bare file name (entry.js) or a file:// path; workerd's own modules are `cloudflare-internal:…`, `node:…`.
  const inBundle = !/^[a-z-]+:(?!\/\/)/.test(cf.url);
  return (inBundle && sourceOf(cf.lineNumber)) || cf.url.replace(/^file:\/\//, "").split("/").slice(-2).join("/");
}
const keyOf = (cf) => `${cf.functionName || "(anonymous)"}  ${where(cf)}:${cf.lineNumber + 1}`;

const self = new Map();
const total = new Map();
const byFile = new Map();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  const k = keyOf(node.callFrame);
  self.set(k, (self.get(k) ?? 0) + us);
  const f = where(node.callFrame);
  byFile.set(f, (byFile.get(f) ?? 0) + us);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const ck = keyOf(byId.get(cur).callFrame);
    if (seen.has(ck)) continue;
    seen.add(ck);
    total.set(ck, (total.get(ck) ?? 0) + us);
  }
}

function group(f) {
  if (f.startsWith("src/countries/cl/simulator/")) return "SII simulator (src/countries/cl/simulator)";
  if (f.startsWith("src/")) return "our code (src/, outside the simulator)";
  if (f.startsWith("node_modules/")) return `library ${f.split("/")[1].startsWith("@") ? f.split("/").slice(1, 3).join("/") : f.split("/")[1]}`;
  if (f.startsWith("(")) return f;
  // The meter's wrappers: their self time is mostly the native binding call they forward (a Durable Object RPC, a D1 call).
  if (f.endsWith("worker-meter.js")) return "bench meter wrappers (the binding calls they forward)";
  if (/^[a-z-]+:/.test(f)) return `runtime module ${f.split(":")[0]}`;
  return `other: ${f}`;
}
const groups = new Map();
for (const [f, us] of byFile) groups.set(group(f), (groups.get(group(f)) ?? 0) + us);

const ms = (us) => (us / 1000).toFixed(0).padStart(7);
const pctOf = (us) => `${((100 * us) / totalUs).toFixed(1).padStart(5)} %`;
function print(title, map, n) {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${ms(us)} ms ${pctOf(us)}  ${k}`);
}
const idleUs = [...selfUs].filter(([id]) => byId.get(id).callFrame.functionName === "(idle)").reduce((a, [, us]) => a + us, 0);
console.log(`${file}: ${profile.samples.length} samples every ${interval} µs over ${(wallUs / 1e6).toFixed(1)} s: this isolate busy ${((totalUs - idleUs) / 1e6).toFixed(1)} s, idle ${(idleUs / 1e6).toFixed(1)} s, not sampled (workerd's thread in another isolate, e.g. the local D1, or waiting with none entered) ${((wallUs - totalUs) / 1e6).toFixed(1)} s`);
print("by group, self time", groups, 40);
print(`top ${TOP} functions by self time`, self, TOP);
print(`top ${TOP} functions by total time`, total, TOP);
print(`top ${TOP} files by self time`, byFile, TOP);

// `--callers NAME`: the call paths (up to 8 frames) into functions named NAME, by their total time.
const callersOf = process.argv.indexOf("--callers") > 0 ? process.argv[process.argv.indexOf("--callers") + 1] : null;
if (callersOf) {
  const subtotal = new Map();
  const sum = (id) => (selfUs.get(id) ?? 0) + (byId.get(id).children ?? []).reduce((a, c) => a + sum(c), 0);
  const paths = new Map();
  for (const n of profile.nodes) {
    if (n.callFrame.functionName !== callersOf) continue;
    const frames = [];
    for (let cur = parent.get(n.id); cur !== undefined && frames.length < 8; cur = parent.get(cur)) frames.push(keyOf(byId.get(cur).callFrame));
    const k = frames.join("\n      ← ");
    subtotal.set(n.id, sum(n.id));
    paths.set(k, (paths.get(k) ?? 0) + subtotal.get(n.id));
  }
  print(`call paths into ${callersOf} (total time)`, paths, 12);
}
