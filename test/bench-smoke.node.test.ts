import { build, type Plugin } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every benchmark of `npm run bench -- NAME` still builds: its entry point and the modules it runs
 * (the vitest configs and test files of the benches that run inside workerd, the worker of the folio
 * bench) bundle with every import of the repository resolved. The PDF bench, which compiles the
 * renderer itself when it starts, runs once at its smallest size. Running the others takes a
 * runtime or `wrangler dev` each and minutes at their smallest sizes: `npm run bench` does that.
 */
const root = path.resolve(import.meta.dirname, "..");
const bench = path.join(root, "bench");

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

describe("benchmarks", () => {
  it("every entry point of npm run bench and every module it runs bundles", async () => {
    const files = benchModules();
    expect(files.filter((f) => f.endsWith(".bench.mjs")).length).toBeGreaterThanOrEqual(10);
    const errors = (await Promise.all(files.map(bundles))).flat();
    expect(errors).toEqual([]);
  });

  it("the PDF bench runs at its smallest size", () => {
    const r = spawnSync(process.execPath, [path.join(root, "scripts/bench.mjs"), "pdf"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, PDF_BENCH_RUNS: "1" },
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/ours: renderPdf A4 1 page \+ logo .* ms CPU\/PDF/);
  });
});
