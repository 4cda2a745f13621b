import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { CHAOS_MARKER } from "../../scripts/chaos/hook";

const root = path.resolve(import.meta.dirname, "../..");
const wranglerJs = path.join(root, "node_modules/wrangler/bin/wrangler.js");
const node = path.join(root, "node_modules/node/bin/node"); // wrangler needs Node 22 (a dev dependency)

/** Bundles the Worker as `npm run build` does, into a temporary folder; returns the JavaScript. */
function bundle(extra: string[]): string {
  const out = mkdtempSync(path.join(tmpdir(), "dte-bundle-"));
  try {
    const r = spawnSync(node, [wranglerJs, "deploy", "--dry-run", "--outdir", out, "--env", "production", ...extra], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" },
    });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    return readdirSync(out)
      .filter((f) => f.endsWith(".js"))
      .map((f) => readFileSync(path.join(out, f), "utf8"))
      .join("\n");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe("the chaos fault hook is test-only", () => {
  it("wrangler.toml's entry is the production Worker, which imports nothing of the chaos run", () => {
    const config = parse(readFileSync(path.join(root, "wrangler.toml"), "utf8")) as { main: string };
    expect(config.main).toBe("src/index.ts");
    expect(readFileSync(path.join(root, "src/index.ts"), "utf8")).not.toMatch(/chaos/i);
  });

  it("the production bundle does not contain the hook; the chaos entry's bundle does (the check can fail)", () => {
    const production = bundle([]);
    expect(production).toContain("FolioAllocator");
    expect(production).not.toContain(CHAOS_MARKER);
    expect(production).not.toContain("/__chaos/plan");
    expect(bundle(["scripts/chaos/worker.ts"])).toContain(CHAOS_MARKER);
  });
});
