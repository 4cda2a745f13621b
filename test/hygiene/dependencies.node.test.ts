/** package.json tells the truth: runtime dependencies are exactly what src/ imports. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Package names of the bare imports in src/ (static, dynamic and type-only alike). */
function importedPackages(): Set<string> {
  const out = new Set<string>();
  const pattern = /(?:^|\n)\s*(?:(?:import|export)\b[^;]*?\bfrom\s+|import\s+)["']([^"'./][^"']*)["']|\bimport\(\s*["']([^"'./][^"']*)["']\s*\)/g;
  for (const file of files(path.join(root, "src"))) {
    for (const m of readFileSync(file, "utf8").matchAll(pattern)) {
      const spec = (m[1] ?? m[2])!;
      if (/^(node|cloudflare):/.test(spec)) continue;
      out.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
  }
  return out;
}

describe("package.json", () => {
  it("lists as dependencies exactly the packages src/ imports; everything else is a devDependency", () => {
    const imported = [...importedPackages()].sort();
    expect(imported.length).toBeGreaterThan(5);
    expect(Object.keys(pkg.dependencies).sort()).toEqual(imported);
    for (const name of Object.keys(pkg.devDependencies)) expect(imported, `${name} is imported by src/: make it a dependency`).not.toContain(name);
  });
});
