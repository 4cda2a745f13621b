#!/usr/bin/env node
// `npm run stores:migrate [-- --port 8791] [--persist-to DIR]`
// Copies the local D1 rows of the tables that move to the per-company document stores (issue 16)
// into the stores, with the Worker's own code: it runs `wrangler dev` on the local state with
// DOCUMENT_STORE_MIGRATION=on and fires its cron until every table is copied (the Durable Objects
// live inside the Worker, so the copy must run there). Resumable and idempotent like the cron step.
// Stop `npm start` first (both would open the same local state). Prints one JSON summary on stdout.
import { parseArgs } from "node:util";
import { applyLocalMigrations, ensureDevVars, spawnWrangler, wrangler } from "./local-env.mjs";

const { values } = parseArgs({ options: { port: { type: "string", default: "8791" }, "persist-to": { type: "string" } } });
const port = values.port;
const persist = values["persist-to"] ? ["--persist-to", values["persist-to"]] : [];
const TABLES = 8; // src/operations/store-migration.ts MOVED_TABLES

ensureDevVars();
if (persist.length) wrangler(["d1", "migrations", "apply", "DB", "--local", ...persist]);
else applyLocalMigrations();

function progress() {
  const out = wrangler(["d1", "execute", "DB", "--local", ...persist, "--json", "--command", "SELECT table_name, copied, skipped, copied_at, finished_at FROM store_migration ORDER BY table_name"]);
  return JSON.parse(out)[0].results;
}

const child = spawnWrangler(
  ["dev", "--ip", "127.0.0.1", "--port", port, ...persist, "--var", "DOCUMENT_STORE_MIGRATION:on", "--show-interactive-dev-session=false", "--log-level", "warn"],
  { stdio: ["ignore", "ignore", "inherit"] },
);
const stop = () => child.kill("SIGTERM");
process.on("SIGINT", stop);
try {
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (await fetch(`${base}/health`).then(() => true, () => false)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  let rows = progress();
  // A table of a legacy group not yet switchable (src/db/document-store/legacy.ts) ends copied, not finished.
  const through = (r) => r.finished_at || r.copied_at;
  for (let run = 0; rows.filter(through).length < TABLES; run++) {
    if (run > 10_000) throw new Error("the store migration does not finish");
    await fetch(`${base}/cdn-cgi/local/scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
    await new Promise((r) => setTimeout(r, 1000));
    rows = progress();
    process.stderr.write(`copied ${rows.reduce((a, r) => a + r.copied, 0)} row(s), ${rows.filter(through).length}/${TABLES} tables done\n`);
  }
  process.stdout.write(`${JSON.stringify({ done: true, tables: rows })}\n`);
} finally {
  stop();
}
