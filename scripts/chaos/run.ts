// `npm run chaos [-- --documents N --companies C --clients K --concurrency W --seed S --timeout-minutes M]`
// The chaos run (issue 15) against the service as `npm start` runs it (wrangler dev, local D1, R2,
// Queues, Durable Objects, the SII simulator), in a temporary state directory, built with the fault
// hook (its own entry, scripts/chaos/worker.ts; production builds never contain it). Prints the figures and exits
// non-zero when an invariant fails. See docs/operations.md, "Chaos run".
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fakePfx, freePort, quietEnv, root, startWranglerDev, wranglerJs } from "../../bench/lib.mjs";
import { ensureDevVars } from "../local-env.mjs";
import { runChaos } from "./driver";
import { formatReport, type ReceivedEvent } from "./invariants";

const { values } = parseArgs({
  options: {
    documents: { type: "string", default: "10000" },
    companies: { type: "string", default: "6" },
    clients: { type: "string", default: "3" },
    concurrency: { type: "string", default: "24" },
    seed: { type: "string", default: String(Date.now() % 1_000_000) },
    "timeout-minutes": { type: "string", default: "30" },
  },
});
const n = (k: keyof typeof values) => Number(values[k]);

/** The webhook receiver: records every request; while faults run, 1 in 20 answers 500 (retried). */
async function receiver() {
  const events: ReceivedEvent[] = [];
  const state = { failing: true };
  const port = await freePort();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c)).on("end", () => {
      try {
        const json = JSON.parse(body) as { type: string; data?: { id?: string } };
        events.push({ webhook_id: String(req.headers["webhook-id"]), type: json.type, data_id: json.data?.id ?? null });
      } catch {}
      res.statusCode = state.failing && Math.random() < 0.05 ? 500 : 200;
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return { port, events, state, close: () => server.close() };
}

async function main() {
  ensureDevVars();
  const dir = mkdtempSync(path.join(tmpdir(), "dte-chaos-"));
  const tsx = path.join(root, "node_modules/tsx/dist/cli.mjs");
  spawnSync(process.execPath, [wranglerJs, "d1", "migrations", "apply", "DB", "--local", "--persist-to", dir], { cwd: root, env: quietEnv, stdio: "ignore" });
  const args = ["scripts/chaos/worker.ts", "--persist-to", dir, "--test-scheduled", "--var", "WEBHOOK_RETRY_SCHEDULE:1,2,5,10,20,30"];
  const service = await startWranglerDev({ args, readyPath: "/health" });
  const hooks = await receiver();
  try {
    const keys = Array.from({ length: n("clients") }, (_, i) => {
      const made = spawnSync(process.execPath, [tsx, "scripts/apikey-create.ts", "--client", `chaos-${i}`, "--role", "OWNER", "--persist-to", dir], { cwd: root, env: quietEnv, encoding: "utf8" });
      if (made.status !== 0) throw new Error(`apikey:create: ${made.stderr}`);
      return (JSON.parse(made.stdout) as { api_key: string }).api_key;
    });
    const started = Date.now();
    const result = await runChaos({
      fetch: (p, init) => fetch(`${service.base}${p}`, init),
      keys,
      companies: n("companies"),
      documents: n("documents"),
      concurrency: n("concurrency"),
      seed: n("seed"),
      pfx: fakePfx(),
      pfxPassword: "bench",
      receiver: { url: (id) => `http://127.0.0.1:${hooks.port}/hooks/${id}`, events: async () => hooks.events },
      faults: { d1: 0.01, r2: 0.01, store: 0.01, duplicate: 0.05, reorder: 0.05, kill: 0.005, do_restart: 0.02, after: 0.5, scopes: ["queue", "scheduled"] },
      siiScenarioEveryMs: 4000,
      quiescenceTimeoutMs: n("timeout-minutes") * 60_000,
      tick: async () => {
        hooks.state.failing = false;
        await fetch(`${service.base}/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`).catch(() => undefined);
      },
      log: (l) => console.error(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${l}`),
    });
    console.log(
      formatReport(result.report, {
        seed: n("seed"),
        "faults injected by the hook": result.injected,
        "SII scenarios": result.sii_scenarios,
        "client errors (4xx or 5xx after retries)": result.client_errors,
        "issuing took": `${result.issue_seconds.toFixed(1)} s`,
        "time to recover after the last fault": `${result.recovery_seconds.toFixed(1)} s`,
      }),
    );
    if (result.report.failures.length > 0) process.exitCode = 1;
  } finally {
    hooks.close();
    service.stop();
    await new Promise((r) => setTimeout(r, 1500));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
