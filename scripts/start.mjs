#!/usr/bin/env node
// `npm start`: local D1 migrations, then `wrangler dev` on http://127.0.0.1:8787, offline and quiet,
// with local D1, R2, Queues, Durable Objects and the built-in SII simulator (SII_MODE=simulator).
import { applyLocalMigrations, ensureDevVars, spawnWrangler } from "./local-env.mjs";

const port = process.env.PORT ?? "8787";
ensureDevVars();
await import("./docs-assets.mjs"); // the API reference's renderer, served by /docs
console.log("Applying local D1 migrations…");
applyLocalMigrations();
console.log(`Starting the DTE API on http://127.0.0.1:${port} (docs: /docs). Ctrl+C stops it.`);
const child = spawnWrangler(["dev", "--ip", "127.0.0.1", "--port", port, "--show-interactive-dev-session=false", "--log-level", process.env.LOG_LEVEL ?? "info"]);
// wrangler dev never fires cron triggers by itself; tick them like Cloudflare does, so the sweep
// (stuck documents, certificate expiry) runs locally too. Every 5 minutes, as in wrangler.toml.
const cron = "*/5 * * * *";
const ticker = setInterval(() => {
  fetch(`http://127.0.0.1:${port}/cdn-cgi/local/scheduled?cron=${encodeURIComponent(cron)}`).catch(() => undefined);
}, 5 * 60_000);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    clearInterval(ticker);
    child.kill(sig);
  });
}
child.on("exit", (code) => process.exit(code ?? 0));
