// Shared by the benchmarks that run the service (or a probe worker) under `wrangler dev`.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "..");
export const wranglerJs = path.join(root, "node_modules/wrangler/bin/wrangler.js");
/** Offline and quiet wrangler (no telemetry, no Request.cf download). */
export const quietEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The p-th percentile of an ascending list. */
export function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Starts `wrangler dev` on a free loopback port in `cwd` (extra CLI `args`, e.g. --persist-to) and
 * waits until `readyPath` answers 200. `stop()` sends SIGTERM to the wrangler CLI only, which shuts
 * workerd down cleanly; it also runs when the process exits.
 */
export async function startWranglerDev({ cwd = root, args = [], readyPath = "/" } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dev = spawn(process.execPath, [wranglerJs, "dev", "--ip", "127.0.0.1", "--port", String(port), "--log-level", "error", "--show-interactive-dev-session=false", ...args], {
    cwd,
    env: quietEnv,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const stop = () => {
    if (dev.exitCode === null) dev.kill("SIGTERM");
  };
  process.on("exit", stop);
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}${readyPath}`)).ok) break;
    } catch {}
    if (i > 120) {
      stop();
      throw new Error("wrangler dev did not start");
    }
    await sleep(500);
  }
  return { base, stop };
}

/** Runs a benchmark's main, printing a failure and setting the exit code. */
export function run(main) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
