// The reads measured on each company, and their latencies.
import { pct } from "../lib.mjs";

/**
 * The queries, each a function of a company's context ({ cid, H, ids, folios, refs, dates }) and
 * the sample number `i`, returning a path. The same query on both companies differs only in the
 * company and in which of its own documents it names.
 */
export const QUERIES = {
  "get one document": (c, i) => `/api/companies/${c.cid}/invoices/${c.ids[i % c.ids.length]}`,
  "list, first page": (c) => `/api/companies/${c.cid}/invoices?per_page=20`,
  "list, type 39": (c) => `/api/companies/${c.cid}/invoices?invoice_type=39&per_page=20`,
  "list, status ACCEPTED": (c) => `/api/companies/${c.cid}/invoices?status=ACCEPTED&per_page=20`,
  "list, status REJECTED (rare)": (c) => `/api/companies/${c.cid}/invoices?status=REJECTED&per_page=20`,
  "list, one issue day": (c, i) => {
    const d = c.dates[i % c.dates.length];
    return `/api/companies/${c.cid}/invoices?from_date=${d}&to_date=${d}&per_page=20`;
  },
  "list, type 33 in a month": (c, i) => {
    const d = c.dates[i % c.dates.length];
    return `/api/companies/${c.cid}/invoices?invoice_type=33&from_date=${d.slice(0, 8)}01&to_date=${d.slice(0, 8)}28&per_page=20`;
  },
  "list, folio": (c, i) => `/api/companies/${c.cid}/invoices?folio=${c.folios[i % c.folios.length]}`,
  "list, external_reference": (c, i) => `/api/companies/${c.cid}/invoices?external_reference=${c.refs[i % c.refs.length]}`,
  "list, page 500 of 20": (c) => `/api/companies/${c.cid}/invoices?per_page=20&page=500`,
  "reception list, first page": (c) => `/api/reception/invoices/list?company_id=${c.cid}&per_page=20`,
  "reception list, document type 33, page 50": (c) => `/api/reception/invoices/list?company_id=${c.cid}&document_type=33&per_page=20&page=50`,
};

/** Queries that name one of the company's documents: their answer must hold it (a 200 with no rows would time a miss). */
const NAMES_A_DOCUMENT = new Set(["list, folio", "list, external_reference"]);

async function timed(base, H, path, mustFind) {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, { headers: H });
  const body = await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  if (mustFind && !(JSON.parse(new TextDecoder().decode(body)).data?.length > 0)) throw new Error(`${path}: the document it names is not in the answer`);
  return ms;
}

/**
 * Each query `samples` times on each company, one request at a time, the companies alternating
 * (so both see the same machine), after `warm` unmeasured rounds. Returns per query and company
 * p50/p99 in ms.
 */
export async function measure(base, companies, samples, warm = 3) {
  const out = {};
  for (const [name, q] of Object.entries(QUERIES)) {
    const lat = Object.fromEntries(Object.keys(companies).map((k) => [k, []]));
    for (let i = 0; i < warm + samples; i++)
      for (const [k, c] of Object.entries(companies)) {
        const ms = await timed(base, c.H, q(c, i), NAMES_A_DOCUMENT.has(name));
        if (i >= warm) lat[k].push(ms);
      }
    out[name] = Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, { p50: +pct(v.sort((a, b) => a - b), 50).toFixed(1), p99: +pct(v, 99).toFixed(1) }]));
  }
  return out;
}
