#!/usr/bin/env node
// Webhooks on the service as `npm start` runs it (wrangler dev, local queues, the SII simulator),
// delivering to a local receiver on 127.0.0.1 that verifies every signature with `standardwebhooks`:
// - the same number of facturas issued by a company without webhooks and by one with 3 endpoints
//   subscribed to every event, in the same run: end-to-end documents per second of each and their
//   ratio (target: webhooks cost <= 15 % of issuance throughput, i.e. ratio >= 0.85);
// - events delivered per second (2 events per document x 3 endpoints), from the first POST to the
//   last delivery, and that every delivery arrived once per endpoint and event with a valid signature.
// A smoke run (BENCH_SMOKE=1): 3 facturas per company from 2 clients, after 1 of warm-up.
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";
import { freePort, postInvoices, readyCompany, run, sleep, startService, untilAccepted } from "./lib.mjs";
import { knob, SMOKE, targets } from "./smoke.mjs";

const DOCS = knob("WEBHOOKS_BENCH_DOCS", 300, 3);
const CLIENTS = knob("WEBHOOKS_BENCH_CLIENTS", 16, 2);
const WARM_UP = SMOKE ? 1 : 5;
const DEADLINE_MS = Number(process.env.WEBHOOKS_BENCH_DEADLINE_MS ?? 6 * 60_000);

async function receiver() {
  const port = await freePort();
  const got = new Map(); // path -> Map(webhook-id -> body)
  let bad = 0;
  let duplicates = 0;
  let last = 0;
  const secrets = new Map();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c)).on("end", () => {
      try {
        new Webhook(secrets.get(req.url)).verify(body, req.headers);
      } catch {
        bad++;
      }
      const seen = got.get(req.url) ?? new Map();
      if (seen.has(req.headers["webhook-id"])) duplicates++;
      seen.set(req.headers["webhook-id"], body);
      got.set(req.url, seen);
      last = performance.now();
      res.end("ok");
    });
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  return { url: (p) => `http://127.0.0.1:${port}${p}`, secrets, got, stats: () => ({ bad, duplicates, last }), close: () => server.close() };
}

/** Issues `count` facturas and waits until the company has `already + count` accepted. */
async function issueAll(base, company, count, already, prefix) {
  const started = performance.now();
  await postInvoices(base, company.H, company.cid, company.invoice, count, CLIENTS, prefix);
  await untilAccepted(base, company.H, company.cid, already + count, DEADLINE_MS);
  return { started, seconds: (performance.now() - started) / 1000 };
}

const progress = (msg) => process.stderr.write(`[webhooks] ${msg}\n`);

async function main() {
  const rx = await receiver();
  const svc = await startService().catch((e) => {
    rx.close();
    throw e;
  });
  progress(`service up at ${svc.base}`);
  try {
    const plain = await readyCompany(svc.base, svc.key, DOCS + 10);
    const hooked = await readyCompany(svc.base, svc.key, DOCS + 10);
    for (const n of [1, 2, 3]) {
      const res = await fetch(`${svc.base}/api/companies/${hooked.cid}/webhooks`, { method: "POST", headers: hooked.H, body: JSON.stringify({ url: rx.url(`/hook-${n}`), events: ["*"] }) });
      if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
      rx.secrets.set(`/hook-${n}`, (await res.json()).secret);
    }
    progress("companies ready, 3 endpoints registered");
    await issueAll(svc.base, plain, WARM_UP, 0, "warm-"); // warm-up: the first requests compile the code paths
    const a = await issueAll(svc.base, plain, DOCS, WARM_UP, "a-");
    progress(`without webhooks: ${DOCS} documents in ${a.seconds.toFixed(1)} s`);
    const b = await issueAll(svc.base, hooked, DOCS, 0, "b-");
    progress(`with 3 endpoints: ${DOCS} documents in ${b.seconds.toFixed(1)} s`);
    const expected = DOCS * 2;
    for (let waited = 0; [1, 2, 3].some((n) => (rx.got.get(`/hook-${n}`)?.size ?? 0) < expected); waited += 250) {
      if (waited > DEADLINE_MS) {
        const count = async (status) => (await (await fetch(`${svc.base}/api/companies/${hooked.cid}/webhook-deliveries?status=${status}&per_page=1`, { headers: hooked.H })).json()).total;
        const log = { PENDING: await count("PENDING"), SUCCEEDED: await count("SUCCEEDED"), FAILED: await count("FAILED") };
        throw new Error(`deliveries received: ${[1, 2, 3].map((n) => rx.got.get(`/hook-${n}`)?.size ?? 0)} of ${expected} each; delivery log: ${JSON.stringify(log)}`);
      }
      if (waited % 5000 === 0) progress(`deliveries so far: ${[1, 2, 3].map((n) => rx.got.get(`/hook-${n}`)?.size ?? 0).join(", ")} of ${expected} each; bad signatures ${rx.stats().bad}`);
      await sleep(250);
    }
    const { bad, duplicates, last } = rx.stats();
    const deliveries = [1, 2, 3].reduce((s, n) => s + rx.got.get(`/hook-${n}`).size, 0);
    const r = {
      documents_per_company: DOCS,
      issuance_docs_per_s_without_webhooks: +(DOCS / a.seconds).toFixed(1),
      issuance_docs_per_s_with_3_endpoints: +(DOCS / b.seconds).toFixed(1),
      throughput_ratio: +(a.seconds / b.seconds).toFixed(3),
      webhook_events_delivered: deliveries,
      webhook_events_per_s: +(deliveries / ((last - b.started) / 1000)).toFixed(1),
      bad_signatures: bad,
      duplicate_deliveries: duplicates,
    };
    console.log(JSON.stringify(r, null, 2));
    targets(`target: webhooks cost <= 15 % of issuance throughput (ratio >= 0.85): ${r.throughput_ratio >= 0.85 ? "met" : "NOT met"}`);
    if (bad) process.exitCode = 1;
  } finally {
    await svc.stop();
    rx.close();
  }
}

run(main);
