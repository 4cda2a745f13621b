#!/usr/bin/env node
// Reads stay fast: one company with READS_BENCH_DOCS issued documents (default
// 1,000,000) and READS_BENCH_RECEIVED received ones (default 100,000), and one with a handful of
// each, on the same service in the same run. Both first issue and receive a few documents through
// the API; the large one is then grown by cloning those rows in the local state while the service
// is stopped (bench/reads/seed.mjs, one seeder per layout; issued and received documents each where
// the tree keeps them: D1 or the company's document store). Measured with the service restarted on
// that state: p50/p99 of getting one document, listing with filters and pages, and the reception
// list, READS_BENCH_SAMPLES times each (default 100) on each company, one request at a time,
// alternating; the ratio large/small of each p99 (target <= 2). Then the query plans of the list
// queries on the large company (EXPLAIN QUERY PLAN, SQL as src/invoices/queries.ts builds it;
// totals of counted filters come from the store's counters, src/storage/db/document-store/counters.ts).
// READS_BENCH_WRITE_DOC=1 writes the table to bench/results/reads.md (the latest run only). A smoke
// run (BENCH_SMOKE=1): 2 facturas, 2 boletas and 2 received through the API per company, the large
// one grown to 2,000 issued and 200 received, 3 samples per query; it writes nothing.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { readyCompany, root, run, startService, untilAccepted } from "./lib.mjs";
import { measure } from "./reads/queries.mjs";
import { hasCompanyStore, seeders, withCompanyStore } from "./reads/seed.mjs";
import { d1File, layoutOf, receptionLayoutOf } from "./scale/layouts.mjs";
import { writeDoc } from "./scale/report.mjs";
import { cleanTree, prepareTree } from "./scale/tree.mjs";
import { knob, notWritten, SMOKE, targets } from "./smoke.mjs";

const DOCS = knob("READS_BENCH_DOCS", 1_000_000, 2_000);
const RECEIVED = knob("READS_BENCH_RECEIVED", 100_000, 200);
const SAMPLES = knob("READS_BENCH_SAMPLES", 100, 3);
const HANDFUL = SMOKE ? 2 : 10; // facturas and as many boletas issued through the API by each company
const RECEIVED_HANDFUL = SMOKE ? 2 : 5;

const progress = (msg) => process.stderr.write(`[reads ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** A company that issued HANDFUL facturas and HANDFUL boletas through the API, all accepted. */
async function issuingCompany(base, key) {
  const c = await readyCompany(base, key, 0, { cafs: { 33: HANDFUL, 39: HANDFUL } });
  for (let i = 0; i < HANDFUL; i++)
    for (const body of [c.invoice(`api-f${i}`), c.boleta(`api-b${i}`)]) {
      const res = await fetch(`${base}/api/companies/${c.cid}/invoices`, { method: "POST", headers: c.H, body: JSON.stringify(body) });
      if (res.status !== 202) throw new Error(`POST: ${res.status} ${await res.text()}`);
    }
  await untilAccepted(base, c.H, c.cid, 2 * HANDFUL, 5 * 60_000);
  return c;
}

/** `to` receives, by upload, the signed XML of RECEIVED_HANDFUL facturas `from` issued. */
async function receiveFrom(base, from, to) {
  const list = await (await fetch(`${base}/api/companies/${from.cid}/invoices?invoice_type=33&per_page=${RECEIVED_HANDFUL}`, { headers: from.H })).json();
  for (const d of list.data) {
    const xml = await (await fetch(`${base}/api/companies/${from.cid}/invoices/${d.id}/xml`, { headers: from.H })).arrayBuffer();
    const form = new FormData();
    form.append("file", new Blob([xml], { type: "application/xml" }), `${d.id}.xml`);
    const res = await fetch(`${base}/api/reception/invoices/upload?company_id=${to.cid}`, { method: "POST", headers: { "X-Api-Key": to.H["X-Api-Key"] }, body: form });
    if (res.status !== 201) throw new Error(`reception upload: ${res.status} ${await res.text()}`);
  }
}

const SAMPLE = "SELECT id, folio, external_reference, issue_date FROM invoices WHERE company_id = ? ORDER BY random() LIMIT 200";

/** What the queries name for a company: some of its ids, folios, references and issue dates (from its store when one holds its issued documents, else D1). */
function contextOf(dir, c) {
  let rows;
  if (hasCompanyStore(dir, c.cid, "invoices")) rows = withCompanyStore(dir, c.cid, "invoices", (db) => db.prepare(SAMPLE).all(c.cid));
  else {
    const db = new DatabaseSync(d1File(dir), { readOnly: true });
    try {
      rows = db.prepare(SAMPLE).all(c.cid);
    } finally {
      db.close();
    }
  }
  return { ...c, ids: rows.map((r) => r.id), folios: rows.map((r) => r.folio), refs: rows.map((r) => r.external_reference), dates: rows.map((r) => r.issue_date.slice(0, 10)) };
}

/** EXPLAIN QUERY PLAN of the list queries (page and total) as src/invoices/queries.ts builds them. */
function plans(dir, cid) {
  const db = new DatabaseSync(d1File(dir), { readOnly: true });
  const filters = { "": [], "document_type = 39": [], "status = 'REJECTED'": [], "issue_date >= '2026-06-01' AND issue_date <= '2026-06-01'": [], "folio = 5": [], "external_reference = 'seed-5'": [] };
  const out = {};
  const issuedPlans = (idb) => {
    for (const f of Object.keys(filters)) {
      const where = `company_id = ?${f ? ` AND ${f}` : ""}`;
      const plan = (sql) => idb.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(cid).map((r) => r.detail).join("; ");
      out[f || "(no filter)"] = {
        page: plan(`SELECT * FROM invoices WHERE id IN (SELECT id FROM invoices WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 0) ORDER BY created_at DESC, id DESC`),
        // In a store, totals of counted filters come from invoice_counts; this is the fallback's plan (and D1's).
        total: plan(`SELECT count(*) FROM invoices WHERE ${where}`),
      };
    }
  };
  try {
    // Issued documents: their plans where the large company's live (its store once seeded there).
    if (hasCompanyStore(dir, cid, "invoices")) withCompanyStore(dir, cid, "invoices", issuedPlans);
    else issuedPlans(db);
  } finally {
    db.close();
  }
  const receptionPlan = (rdb) => ({ page: rdb.prepare("EXPLAIN QUERY PLAN SELECT * FROM received_documents WHERE company_id = ? ORDER BY created_at, id LIMIT 20").all(cid).map((r) => r.detail).join("; ") });
  if (receptionLayoutOf(root) === "stores") out["reception list (company's store)"] = withCompanyStore(dir, cid, "received_documents", receptionPlan);
  else {
    const rdb = new DatabaseSync(d1File(dir), { readOnly: true });
    try {
      out["reception list"] = receptionPlan(rdb);
    } finally {
      rdb.close();
    }
  }
  return out;
}

async function main() {
  const layout = layoutOf(root);
  const receptionLayout = receptionLayoutOf(root);
  const dir = mkdtempSync(path.join(tmpdir(), "dte-reads-bench-"));
  const args = prepareTree(root, { meter: false });
  try {
    let svc = await startService({ dir, args });
    let big, small;
    try {
      [big, small] = [await issuingCompany(svc.base, svc.key), await issuingCompany(svc.base, svc.key)];
      await receiveFrom(svc.base, small, big);
      await receiveFrom(svc.base, big, small);
      progress(`two companies issued ${2 * HANDFUL} documents each and received ${RECEIVED_HANDFUL}`);
    } finally {
      await svc.stop({ keep: true });
    }
    const t0 = performance.now();
    // While the POST writes D1, the stores seeder moves a company's issued documents into its store as
    // clones (bench/reads/seed.mjs): the large company gets DOCS, the small one its HANDFUL again.
    const moved = layout === "stores" && !hasCompanyStore(dir, big.cid, "invoices");
    seeders[layout].issued(dir, big.cid, moved ? DOCS : DOCS - 2 * HANDFUL, { progress: (m) => progress(`issued: ${m}`) });
    if (moved) seeders.stores.issued(dir, small.cid, 2 * HANDFUL);
    seeders[receptionLayout].received(dir, big.cid, RECEIVED - RECEIVED_HANDFUL, { progress: (m) => progress(`received: ${m}`) });
    const seedSeconds = (performance.now() - t0) / 1000;
    progress(`seeded ${DOCS} issued and ${RECEIVED} received documents in ${seedSeconds.toFixed(0)} s (issued: ${layout} layout, received: ${receptionLayout})`);
    const companies = { large: contextOf(dir, big), small: contextOf(dir, small) };
    svc = await startService({ dir, args });
    let results;
    try {
      results = await measure(svc.base, companies, SAMPLES);
    } finally {
      await svc.stop({ keep: true });
    }
    const lines = [`| query | small company p50 / p99 (ms) | large company p50 / p99 (ms) | p50 ratio | p99 ratio (target ≤ 2) |`, "|---|---|---|---|---|"];
    for (const [q, r] of Object.entries(results)) lines.push(`| ${q} | ${r.small.p50} / ${r.small.p99} | ${r.large.p50} / ${r.large.p99} | ${(r.large.p50 / r.small.p50).toFixed(2)} | ${(r.large.p99 / r.small.p99).toFixed(2)} |`);
    console.log(JSON.stringify({ layout, reception_layout: receptionLayout, large_company: { issued: DOCS, received: RECEIVED }, small_company: { issued: 2 * HANDFUL, received: RECEIVED_HANDFUL }, samples: SAMPLES, seed_seconds: +seedSeconds.toFixed(1) }, null, 2));
    console.log(`\n${lines.join("\n")}\n`);
    const failing = Object.entries(results).filter(([, r]) => r.large.p99 > 2 * r.small.p99).map(([q]) => q);
    targets(`target p99 <= 2x the small company's: ${failing.length ? `NOT met for ${failing.join("; ")}` : "met for every query"}`);
    console.log("query plans on the large company:", JSON.stringify(plans(dir, big.cid), null, 2));
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    const load = (await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" / ");
    const intro = `Run of ${when} UTC (load average ${load} at the end; issued documents: ${layout} layout, received: ${receptionLayout}): ${DOCS.toLocaleString("en")} issued and ${RECEIVED.toLocaleString("en")} received documents in the large company (seeded in ${seedSeconds.toFixed(0)} s), ${SAMPLES} samples per query and company, one request at a time.`;
    if (process.env.READS_BENCH_WRITE_DOC === "1" && SMOKE) notWritten("bench/results/reads.md");
    else if (process.env.READS_BENCH_WRITE_DOC === "1") writeDoc(`${intro}\n\n${lines.join("\n")}`, "reads");
  } finally {
    cleanTree(root);
    if (process.env.BENCH_KEEP_STATE) console.error(`state kept in ${dir}`);
    else (await import("node:fs")).rmSync(dir, { recursive: true, force: true });
  }
}

run(main);
