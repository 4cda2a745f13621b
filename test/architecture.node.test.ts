/**
 * The layering of src/, checked over the import graph (static and dynamic relative imports):
 * - the business layer (domain/) knows nothing of transport, queue consumers, schedules, Durable
 *   Object classes or the simulated SII;
 * - outside src/countries only the country port and the country module's single entry are imported
 *   (the HTTP layer only the port); the simulated SII (src/simulator) is the one exception: it is the
 *   SII's twin and speaks the same wire protocol with the Chilean wire and crypto machinery;
 * - no two top-level folders import each other, directly or through others (no folder cycle);
 * - nothing inside a folder imports the composition root (src/app.ts, src/index.ts), even
 *   dynamically: what a lower layer needs from it is handed in by src/index.ts;
 * - no file imports itself back through others (no import cycle, static or dynamic; imports of
 *   types only are erased at build time and do not count).
 */
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../src");

interface Edge {
  from: string;
  to: string;
  dynamic: boolean;
  /** `import type …` / `export type …`: erased at build time. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function resolveImport(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, base, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function importGraph(): Edge[] {
  const edges: Edge[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+["'](\.{1,2}\/[^"']+)["']|\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
  for (const file of sourceFiles(SRC)) {
    for (const m of readFileSync(file, "utf8").matchAll(pattern)) {
      const target = resolveImport(file, m[1] ?? m[2]!);
      if (target) edges.push({ from: path.relative(SRC, file), to: path.relative(SRC, target), dynamic: m[2] !== undefined, typeOnly: /^\s*(?:import|export)\s+type\b/.test(m[0]) });
    }
  }
  return edges;
}

/** The strongly connected groups of more than one file (Tarjan's algorithm), each sorted. */
function importCycles(list: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of list) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return groups;
}

const folderOf = (rel: string) => (rel.includes(path.sep) ? rel.split(path.sep)[0]! : null);
const edges = importGraph();
const show = (list: Edge[]) => list.map((e) => `${e.from} -> ${e.to}`);

describe("import graph of src/", () => {
  it("is read from the sources (sanity: the known entry points and layers are there)", () => {
    expect(edges.some((e) => e.from === "app.ts" && e.to.startsWith(`http${path.sep}`))).toBe(true);
    expect(edges.some((e) => e.from.startsWith(`domain${path.sep}`) && e.to.startsWith(`db${path.sep}`))).toBe(true);
    expect(edges.length).toBeGreaterThan(200);
  });

  it("domain/ imports nothing from http/, pipeline/, cron/, durable-objects/ or simulator/", () => {
    const bad = edges.filter((e) => folderOf(e.from) === "domain" && ["http", "pipeline", "cron", "durable-objects", "simulator"].includes(folderOf(e.to) ?? ""));
    expect(show(bad)).toEqual([]);
  });

  it("outside src/countries only the port and the country entry are imported; http/ only the port", () => {
    const port = path.join("countries", "port.ts");
    const entry = path.join("countries", "cl", "index.ts");
    const bad = edges.filter((e) => {
      const from = folderOf(e.from);
      if (from === "countries" || from === "simulator" || folderOf(e.to) !== "countries") return false;
      if (from === "http") return e.to !== port;
      return e.to !== port && e.to !== entry;
    });
    expect(show(bad)).toEqual([]);
  });

  it("has no cycle between top-level folders", () => {
    const next = new Map<string, Set<string>>();
    for (const e of edges) {
      const a = folderOf(e.from);
      const b = folderOf(e.to);
      if (a && b && a !== b) next.set(a, (next.get(a) ?? new Set()).add(b));
    }
    const reaches = (from: string, target: string, seen = new Set<string>()): boolean =>
      [...(next.get(from) ?? [])].some((n) => n === target || (!seen.has(n) && (seen.add(n), reaches(n, target, seen))));
    const cycles = [...next.keys()].filter((f) => reaches(f, f)).sort();
    expect(cycles).toEqual([]);
  });

  it("no folder imports the composition root, statically or dynamically", () => {
    const bad = edges.filter((e) => folderOf(e.from) && !folderOf(e.to) && ["app.ts", "index.ts"].includes(e.to) && !e.typeOnly);
    expect(show(bad)).toEqual([]);
  });

  it("has no import cycle between files (static or dynamic imports of values)", () => {
    expect(importCycles(edges.filter((e) => !e.typeOnly)).map((c) => c.join(" -> "))).toEqual([]);
  });
});
