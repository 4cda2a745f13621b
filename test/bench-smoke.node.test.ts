import { build, type Plugin } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every benchmark of `npm run bench -- NAME` builds and runs. Its entry point and the modules it
 * runs (the vitest configs and test files of the benches that run inside workerd, the worker of the
 * folio bench) bundle with every import of the repository resolved; and each bench runs as a smoke
 * run (BENCH_SMOKE=1, bench/smoke.mjs): its whole path at its smallest size, exit 0, a line of the
 * figures it measured, and nothing written to bench/results or docs. The benches whose smoke run
 * takes seconds run in `npm test`; those that start the service under `wrangler dev` (or a workerd
 * runtime for minutes) run in `npm run test:full` (TEST_FULL=1). Every bench is in one of the two lists.
 */
const root = path.resolve(import.meta.dirname, "..");
const bench = path.join(root, "bench");
const FULL = process.env.TEST_FULL === "1";

function benchModules(): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(bench, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(mjs|ts)$/.test(entry.name) || entry.name.endsWith(".d.mts")) continue;
    // A bench's own build output (not in the repository) is no entry point of it.
    if (entry.parentPath.split(path.sep).includes(".bundle")) continue;
    out.push(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

/** Vite's `?raw` imports (fixtures read as text): the file must exist; its text is the module. */
const raw: Plugin = {
  name: "raw",
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: path.resolve(args.resolveDir, args.path.slice(0, -4)), namespace: "raw" }));
    b.onLoad({ filter: /.*/, namespace: "raw" }, async (args) => ({ contents: await readFile(args.path, "utf8"), loader: "text" }));
  },
};

/**
 * A bench's own build output (bench/reception/.bundle, written by its global set-up before it runs):
 * not in the repository, so left as an import; the set-up that writes it is bundled and checked here.
 */
const generated: Plugin = {
  name: "generated",
  setup(b) {
    b.onResolve({ filter: /(^|\/)\.bundle\// }, (args) => ({ path: args.path, external: true }));
  },
};

async function bundles(file: string): Promise<string[]> {
  const result = await build({
    entryPoints: [path.join(root, file)],
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    packages: "external",
    external: ["cloudflare:*"],
    plugins: [raw, generated],
    logLevel: "silent",
  }).catch((e: { errors?: { text: string }[] }) => ({ errors: e.errors ?? [{ text: String(e) }] }));
  return result.errors.map((e) => `${file}: ${e.text}`);
}

interface Smoke {
  /** Lines of its output that show it measured (and checked) something. */
  shows: RegExp[];
  /** How long its smoke run may take on a busy 2-core machine. */
  minutes: number;
}

/** Seconds each: in `npm test`. */
const CHEAP: Record<string, Smoke> = {
  pdf: { shows: [/ours: renderPdf A4 1 page \+ logo .* [\d.]+ ms CPU\/PDF/], minutes: 2 },
  engine: { shows: [/buildSignedDte \(2-line factura\)\s+[\d.]+ ms\/op/, /simulator: precheck \+ validateEnvio \(5 DTEs\)\s+[\d.]+ ms\/op/], minutes: 4 },
  folio: { shows: [/allocateMany .*: 1000 allocations in [\d.]+ s = \d+ allocations\/s; duplicates 0, gaps 0, failures 0, redelivery mismatches 0/, /folio bench: OK/], minutes: 4 },
  platform: { shows: [/"d1-write": [\d.]+/, /"p99_ms": [\d.]+/], minutes: 4 },
  hostile: { shows: [/verifyInbound, \d+ bytes: hostile shape vs an ordinary signed EnvioDTE/, /comment\s+\d+ ms\s+\d+ ms\s+[\d.]+\s+verified/], minutes: 4 },
  reception: { shows: [/verifyInbound, envelope of 1\s+DTEs.*: [\d.]+ ms\/DTE/, /e-mail of 1\s+DTEs through email\(\)\s+\d+ ms/], minutes: 4 },
};

/** Minutes each (the service under `wrangler dev`, or many documents through workerd): in `npm run test:full`. */
const COSTLY: Record<string, Smoke> = {
  batch: { shows: [/intake per document: single POST [\d.]+ ms .* batch of 5 [\d.]+ ms/, /"batch_docs_per_s": [\d.]+/], minutes: 8 },
  capacity: { shows: [/\| factura 33, 1 line \| \d+ \| \d+ \|/, /### 5 boletas through the real consumers/], minutes: 8 },
  issuance: { shows: [/"end_to_end_docs_per_s": [\d.]+/, /"folio_duplicates": 0,\s+"folio_gaps": 0/], minutes: 6 },
  webhooks: { shows: [/"webhook_events_delivered": 18,/, /"bad_signatures": 0/], minutes: 6 },
  reads: { shows: [/\| get one document \| [\d.]+ \/ [\d.]+ \| [\d.]+ \/ [\d.]+ \|/, /"reception list \(company's store\)"|"reception list"/], minutes: 8 },
  scale: { shows: [/"docs_per_s": [\d.]+/, /"verified": \{\s+"documents": 8,\s+"not_accepted": 0,\s+"not_final": 0,\s+"folio_duplicates": 0,\s+"missing": 0/], minutes: 8 },
  taxpayers: { shows: [/\[2000 rows\] query plan: primary-key seek/, /lookup p50 [\d.]+ ms at 2000 rows vs [\d.]+ ms at 200 rows/], minutes: 10 },
};

/** Names, sizes and times of what a run may not write: bench/results and docs. */
function written(): string[] {
  return ["bench/results", "docs"].flatMap((dir) =>
    readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })
      .map((f) => path.join(dir, f))
      .filter((f) => statSync(path.join(root, f)).isFile())
      .map((f) => `${f} ${statSync(path.join(root, f)).size} ${statSync(path.join(root, f)).mtimeMs}`)
      .sort(),
  );
}

/** The environment of a bench started from this test: vitest's own variables left out (the workerd benches start a vitest of their own). */
function benchEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env, BENCH_SMOKE: "1" };
  for (const k of Object.keys(env)) if (k.startsWith("VITEST") || k === "NODE_ENV" || k === "TEST_FULL") Reflect.deleteProperty(env, k);
  return env;
}

function smokeRun(name: string, smoke: Smoke) {
  it(`${name} runs its whole path at its smallest size`, () => {
    const before = written();
    const r = spawnSync(process.execPath, [path.join(root, "scripts/bench.mjs"), name], { cwd: root, encoding: "utf8", env: benchEnv(), maxBuffer: 64 << 20 });
    const output = `${r.stdout}\n${r.stderr}`;
    expect(r.status, output.slice(-6000)).toBe(0);
    for (const line of smoke.shows) expect(r.stdout).toMatch(line);
    expect(written()).toEqual(before);
  }, smoke.minutes * 60_000);
}

describe("benchmarks", () => {
  it("every entry point of npm run bench and every module it runs bundles", async () => {
    const files = benchModules();
    expect(files.filter((f) => f.endsWith(".bench.mjs")).length).toBeGreaterThanOrEqual(10);
    const errors = (await Promise.all(files.map(bundles))).flat();
    expect(errors).toEqual([]);
  });

  it("every bench has a smoke run, in npm test or in npm run test:full", () => {
    const benches = readdirSync(bench).filter((f) => f.endsWith(".bench.mjs")).map((f) => f.slice(0, -".bench.mjs".length));
    expect([...Object.keys(CHEAP), ...Object.keys(COSTLY)].sort()).toEqual(benches.sort());
  });

  for (const [name, smoke] of Object.entries(CHEAP)) smokeRun(name, smoke);
  if (FULL) for (const [name, smoke] of Object.entries(COSTLY)) smokeRun(name, smoke);
});
