// The simulated population and its load: companies with a Zipf-skewed number of documents, a mix
// of boletas (39) and facturas (33), set up concurrently, and a shuffled stream of POSTs from a
// fixed number of concurrent clients.
import { fakePfx, pct, readyCompany, rutDv } from "../lib.mjs";
// The seeded PRNG of the chaos run (mulberry32), so the same population and order come back in the
// baseline and the current run; Node (22.18+, the project's) strips the types of the .ts module.
import { seeded } from "../../src/lib/seeded.ts";

/**
 * Documents per company: Zipf with exponent `s` over `companies` ranks (rank 1 the largest), scaled
 * to `total` with largest remainders, at least 1 each.
 */
export function zipfCounts(companies, total, s) {
  if (total < companies) throw new Error(`at least one document per company: total ${total} < companies ${companies}`);
  const weights = Array.from({ length: companies }, (_, k) => 1 / (k + 1) ** s);
  const sum = weights.reduce((a, b) => a + b, 0);
  const spare = total - companies;
  const exact = weights.map((w) => (w / sum) * spare);
  const counts = exact.map((x) => 1 + Math.floor(x));
  let left = total - counts.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => [x - Math.floor(x), i]).sort((a, b) => b[0] - a[0]);
  for (let j = 0; left > 0; j++, left--) counts[byRemainder[j][1]]++;
  return counts;
}

/** What the distribution looks like: the share of the largest companies and the spread. */
export function describeDistribution(counts) {
  const total = counts.reduce((a, b) => a + b, 0);
  const sorted = [...counts].sort((a, b) => b - a);
  const share = (n) => +((100 * sorted.slice(0, n).reduce((a, b) => a + b, 0)) / total).toFixed(1);
  const asc = [...sorted].reverse();
  return {
    companies: counts.length,
    documents: total,
    largest: sorted[0],
    largest_share_pct: share(1),
    top_10_share_pct: share(10),
    top_1pct_share_pct: share(Math.max(1, Math.round(counts.length / 100))),
    median: pct(asc, 50),
    smallest: asc[0],
    companies_with_1_document: counts.filter((c) => c === 1).length,
  };
}

/** Splits a company's documents into boletas and facturas (`boletaShare` of them boletas, rounded). */
export function typesFor(count, boletaShare) {
  const boletas = Math.round(count * boletaShare);
  return Array.from({ length: count }, (_, i) => (i < boletas ? "39" : "33"));
}

/**
 * Folios to request for `used` documents of a type: a CAF of ordinary size (ten times what the run
 * uses, at least 100, at most the simulator's 10,000), so a company stays above its ENU alert
 * threshold (10 % of the loaded folios) as a real company with a fresh CAF does. A CAF of exactly
 * `used` folios crossed the threshold on a company's first document, so nearly every document of
 * the run raised ENU alerts (1.49 D1 inserts per document in the run of 2026-11-26 12:31 UTC).
 */
export function ordinaryCaf(used) {
  return used <= 0 ? 0 : Math.min(10_000, Math.max(100, used * 10));
}

/** Creates the companies concurrently: each with the shared certificate and a CAF per type it issues. */
export async function setupCompanies(base, key, counts, { boletaShare, concurrency = 16, progress = () => {} }) {
  const pfx = fakePfx();
  const companies = new Array(counts.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < counts.length) {
        const k = next++;
        const types = typesFor(counts[k], boletaShare);
        const cafs = { 33: ordinaryCaf(types.filter((t) => t === "33").length), 39: ordinaryCaf(types.filter((t) => t === "39").length) };
        const body = String(60_000_000 + k);
        const company = await readyCompany(base, key, 0, { rut: `${body}-${rutDv(body)}`, pfx, cafs });
        companies[k] = { ...company, rank: k + 1, types };
        if ((k + 1) % 100 === 0) progress(`${k + 1} companies ready`);
      }
    }),
  );
  return companies;
}

/** Every document of every company, in a seeded shuffled order. */
export function jobsFor(companies, seed) {
  const jobs = companies.flatMap((c) => c.types.map((type, i) => ({ c, type, i })));
  const random = seeded(seed);
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  return jobs;
}

/** POSTs every job from `clients` concurrent clients (`tag` makes a second round's references its own); returns the POST latencies (ms). */
export async function postAll(base, jobs, clients, tag = "") {
  const latencies = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < jobs.length) {
        const { c, type, i } = jobs[next++];
        const body = type === "39" ? c.boleta(`${tag}${type}-${i}`) : c.invoice(`${tag}${type}-${i}`);
        const t0 = performance.now();
        const res = await fetch(`${base}/api/companies/${c.cid}/invoices`, { method: "POST", headers: c.H, body: JSON.stringify(body) });
        latencies.push(performance.now() - t0);
        if (res.status !== 202) throw new Error(`POST ${c.cid} ${type} ${i}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

/**
 * Samples the service's no-op route (`/__scale/noop`, served by the same Worker as the POSTs) from
 * one extra client, one request every `gapMs`, until `done` resolves: what any request waited while
 * the load ran. Returns the sorted latencies.
 */
export async function sampleNoop(base, done, gapMs = 20) {
  const latencies = [];
  let over = false;
  done.then(() => (over = true), () => (over = true));
  while (!over) {
    const t0 = performance.now();
    const res = await fetch(`${base}/__scale/noop`);
    await res.arrayBuffer();
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return latencies.sort((a, b) => a - b);
}

const FINAL = new Set(["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"]);

/**
 * Through the API, after the run: every document of every company final and ACCEPTED, and its
 * folios distinct per document type (`rounds`: how many times the load ran). Returns the counts of problems found.
 */
export async function verify(base, companies, rounds = 1, concurrency = 8) {
  const out = { documents: 0, not_accepted: 0, not_final: 0, folio_duplicates: 0, missing: 0 };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < companies.length) {
        const c = companies[next++];
        const folios = { 33: new Set(), 39: new Set() };
        let seen = 0;
        for (let page = 1; ; page++) {
          const res = await (await fetch(`${base}/api/companies/${c.cid}/invoices?per_page=100&page=${page}`, { headers: c.H })).json();
          for (const d of res.data) {
            seen++;
            if (!FINAL.has(d.status)) out.not_final++;
            else if (!d.status.startsWith("ACCEPTED")) out.not_accepted++;
            const set = folios[d.invoice_type] ?? (folios[d.invoice_type] = new Set());
            if (set.has(d.folio)) out.folio_duplicates++;
            set.add(d.folio);
          }
          if (res.data.length < 100) break;
        }
        out.documents += seen;
        out.missing += Math.max(0, rounds * c.types.length - seen);
      }
    }),
  );
  return out;
}
