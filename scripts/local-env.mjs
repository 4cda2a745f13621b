// Shared by the local scripts: quiet, offline wrangler invocations and the .dev.vars bootstrap.
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "..");
export const wranglerJs = path.join(root, "node_modules/wrangler/bin/wrangler.js");
export const quietEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" };

/** Local secrets have working defaults: .dev.vars is created from .dev.vars.example on first use. */
export function ensureDevVars() {
  const target = path.join(root, ".dev.vars");
  if (!existsSync(target)) {
    copyFileSync(path.join(root, ".dev.vars.example"), target);
    process.stderr.write("Created .dev.vars from .dev.vars.example (development-only secrets).\n");
  }
  return Object.fromEntries(
    readFileSync(target, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#") && l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")).trim(), l.slice(l.indexOf("=") + 1).trim().replace(/^"(.*)"$/, "$1")]),
  );
}

/** Runs wrangler synchronously on this Node (22); output is captured unless `inherit`. */
export function wrangler(args, { inherit = false } = {}) {
  const r = spawnSync(process.execPath, [wranglerJs, ...args], { cwd: root, env: quietEnv, stdio: inherit ? "inherit" : "pipe", encoding: "utf8" });
  if (r.status !== 0) {
    if (!inherit) process.stderr.write(`${r.stdout ?? ""}${r.stderr ?? ""}`);
    throw new Error(`wrangler ${args.join(" ")} failed with exit code ${r.status}`);
  }
  return r.stdout ?? "";
}

export function spawnWrangler(args, options = {}) {
  return spawn(process.execPath, [wranglerJs, ...args], { cwd: root, env: quietEnv, stdio: "inherit", ...options });
}

export function applyLocalMigrations({ inherit = false } = {}) {
  return wrangler(["d1", "migrations", "apply", "DB", "--local"], { inherit });
}
