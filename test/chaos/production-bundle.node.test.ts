import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { CHAOS_MARKER } from "../../src/lib/chaos";

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
  it("wrangler.toml defines __CHAOS__ false at the top level and in [env.production]", () => {
    const config = parse(readFileSync(path.join(root, "wrangler.toml"), "utf8")) as any;
    expect(config.define.__CHAOS__).toBe("false");
    expect(config.env.production.define.__CHAOS__).toBe("false");
  });

  it("the production bundle does not contain it; the same build with __CHAOS__ true does (the check can fail)", () => {
    const production = bundle([]);
    expect(production).toContain("FolioAllocator");
    expect(production).not.toContain(CHAOS_MARKER);
    expect(production).not.toContain("/__chaos/plan");
    expect(bundle(["--define", "__CHAOS__:true"])).toContain(CHAOS_MARKER);
  });
});
