// The capacity model's extrapolation (docs/capacity.md): from the per-document costs this run
// measured on each store kind, the load at 10 million documents a day across 100,000 companies, as a
// share of Cloudflare's published limits (docs/capacity.md, "Cloudflare's published limits").

/** The population of the extrapolation: an assumption, stated in the output. */
export const TARGET = {
  documents_per_day: 10_000_000,
  companies: 100_000,
  largest_company_per_day: 1_000_000,
  peak_factor: 3, // the busiest hour at 3x the day's average (assumed, as in docs/capacity.md)
};

/**
 * How long a Durable Object class that is not a document store keeps what grows with documents:
 * the folio allocator prunes its allocations after 7 days (ALLOCATION_RETENTION_MS in
 * src/folios/allocator/pruning.ts); a class not listed keeps everything (a year is
 * shown). SQLite reuses the freed pages, so the file stays at about that many days of growth.
 */
export const RETENTION_DAYS = { FolioAllocator: 7 };

export const LIMITS = {
  d1_bytes: 10e9, // D1 database size (Workers Paid)
  d1_statements_per_s: 1000, // single-threaded, the published 1 ms-per-query planning figure
  do_bytes: 10e9, // SQLite Durable Object storage per object
  do_requests_per_s: 1000, // soft limit per object
  queue_messages_per_s: 5000, // per queue
};

/**
 * The D1 statements of a document split in two (issue 16, docs/capacity.md "D1 per document: warm
 * and cold"), both measured by the capacity bench (`npm run bench -- capacity`, the run named in
 * `source`): what every document costs with its isolate's caches warm, and, per cache, the
 * statements one miss costs and how long a filled entry lives. How many misses 10 million documents
 * a day over 100,000 Zipf companies produce is projected (`projectedMisses`), not measured.
 */
export const D1_SPLIT_ISOLATE_CACHES = {
  source: "capacity bench of 2026-11-26 11:15 UTC on branch dir; the events' share from the scale run of 12:31 UTC on the merged tree",
  // Per document with warm caches: the service's own statements (the POST and the pipeline: none
  // since the legacy check is settled once per isolate), and the events' way through D1 (the relay's
  // outbox inserts, the fan-out's reads and dispatch marks: 11.55 per document in the 09:07 scale run).
  // Since a store's events stay in the store, what is left of them in D1 is the folio allocator's ENU
  // alerts (control-plane events): 1.49 inserts per document in the 12:31 run, whose companies get
  // small CAFs; a company with a CAF of ordinary size crosses its alert threshold rarely.
  warm_per_document: { service: 0, events: 1.49 },
  caches: [
    { name: "API key and company access (src/accounts/access/cache.ts)", statements: 2, ttl_s: 5 },
    { name: "company control data (src/accounts/companies/control-cache.ts)", statements: 4, ttl_s: 60 },
    { name: "open partition (src/storage/db/document-store/index.ts)", statements: 1, ttl_s: 600 },
    // A write, at most once a minute per key across isolates (a cold lookup reads the time another isolate wrote).
    { name: "API key last use (src/accounts/access/api-keys.ts)", statements: 1, ttl_s: 60, isolates: 1 },
  ],
  zipf_s: 1,
  isolates_per_company: 10, // assumed: the isolates a company's traffic is spread over, each with its own caches
};

/**
 * Since the control directory (docs/capacity.md, "Control data in Durable Objects"): an isolate's
 * miss asks a Durable Object (one per company, one per key), which reads D1 only when it does not
 * hold the entry; an entry lives until a control write makes the object forget, at most the
 * object's safety TTL (DIRECTORY_TTL_MS, 1 hour). So D1 sees one miss per company (or key) and TTL
 * across all isolates (`isolates: 1`, ttl 3600 s): a projection that assumes no control write in
 * the hour (a write costs one refill). The isolate caches in front decide the objects' requests
 * (`DIRECTORY_REQUESTS`).
 */
export const D1_SPLIT = {
  ...D1_SPLIT_ISOLATE_CACHES,
  source: "control directory (branch ctl, 2026-11-26; the company row read once, 2026-11-26 evening); the events' share from the scale run of 2026-11-26 15:37-15:49 UTC (1,000 companies, CAFs of ordinary size)",
  // Per document with warm caches: the service's none (capacity bench, every document kind warm: 0
  // statements); the events' D1 outbox, 0 statements per document in the 15:37 run (the ENU alerts'
  // 1.49 of the 12:31 run came from CAFs of exactly the documents issued, a bench artefact since
  // mended: bench/scale/load.mjs `ordinaryCaf`; a real company raises them once per CAF it uses up).
  warm_per_document: { service: 0, events: 0 },
  caches: [
    { name: "API key row and grants (key object)", statements: 2, ttl_s: 3600, isolates: 1 },
    // The company row for access: no statement of its own since the object's miss fills the control
    // data, which reads the row (one batch, below): ControlDirectory.company.
    { name: "company control data (company object)", statements: 4, ttl_s: 3600, isolates: 1 },
    { name: "open partition (company object)", statements: 1, ttl_s: 3600, isolates: 1 },
    { name: "CAF row (company object; the certificate row now comes with the control data)", statements: 1, ttl_s: 3600, isolates: 1 },
    // A write at most once an hour per key across isolates (the key's object skips one written within the hour).
    { name: "API key last use (key object)", statements: 1, ttl_s: 3600, isolates: 1 },
  ],
};

/** The isolate caches in front of the objects: each of their misses is one request to an object (the auth miss asks two: key and company). */
export const DIRECTORY_REQUESTS = {
  caches: [
    { name: "key and company access (2 objects)", requests: 2, ttl_s: 5 },
    { name: "company control data", requests: 1, ttl_s: 60 },
    { name: "open partition", requests: 1, ttl_s: 600 },
    { name: "last use (key object, when the isolate's row is an hour old)", requests: 1, ttl_s: 3600 },
  ],
  zipf_s: 1,
  isolates_per_company: 10,
};

/** Requests per document to the control directory at the target's peak, and the largest company's object rate (its company object; its busiest key's is at most the same). */
export function projectedDirectory(split = DIRECTORY_REQUESTS, isolates = split.isolates_per_company) {
  const peak = (TARGET.documents_per_day / 86_400) * TARGET.peak_factor;
  const largest = (TARGET.largest_company_per_day / 86_400) * TARGET.peak_factor;
  const perDocument = split.caches.reduce((a, c) => a + (c.requests * projectedMisses(c.ttl_s, { peak, companies: TARGET.companies, s: split.zipf_s, isolates })) / peak, 0);
  // The largest company alone: its rate over `isolates` isolates, each missing once per TTL and wait.
  const largestObject = split.caches.reduce((a, c) => a + (c.requests === 2 ? 1 : c.requests) * (largest / (1 + (largest * c.ttl_s) / isolates)), 0);
  return { peak, perDocument, perSecond: perDocument * peak, largestObjectPerSecond: largestObject, largestObjectShare: share(largestObject, LIMITS.do_requests_per_s) };
}

/**
 * Projected cache misses per second at peak, summed over the companies: company k (Zipf rank) issues
 * λk = peak × k^-s / H documents a second, spread evenly over `isolates` isolates; an entry filled at
 * a miss lives `ttl` seconds, so one isolate misses once per ttl + (time to its next document), i.e.
 * μ/(1 + μ·ttl) a second at a rate μ = λk/isolates (Poisson arrivals), and the company
 * λk/(1 + λk·ttl/isolates). A company issuing less than once per ttl in an isolate misses on nearly
 * every document.
 */
export function projectedMisses(ttl, { peak, companies, s = 1, isolates = 1 }) {
  let h = 0;
  for (let k = 1; k <= companies; k++) h += k ** -s;
  let misses = 0;
  for (let k = 1; k <= companies; k++) {
    const rate = (peak * k ** -s) / h;
    misses += rate / (1 + (rate * ttl) / isolates);
  }
  return misses;
}

/** The split's figures at the target's peak: per cache, misses per document and statements per document. */
export function projectedD1(split = D1_SPLIT) {
  const peak = (TARGET.documents_per_day / 86_400) * TARGET.peak_factor;
  const caches = split.caches.map((c) => {
    const missesPerDoc = projectedMisses(c.ttl_s, { peak, companies: TARGET.companies, s: split.zipf_s, isolates: c.isolates ?? split.isolates_per_company }) / peak;
    return { ...c, misses_per_document: missesPerDoc, statements_per_document: missesPerDoc * c.statements };
  });
  const cold = caches.reduce((a, c) => a + c.statements_per_document, 0);
  const warm = split.warm_per_document.service + split.warm_per_document.events;
  return { peak, caches, cold, warm, perDocument: warm + cold, withoutEvents: split.warm_per_document.service + cold };
}

const GB = 1e9;
const share = (x, limit) => +((100 * x) / limit).toFixed(2);

/**
 * `run`: { documents, stores (delta per store: kind, name, documents, bytes, requests, statements),
 * queues (messages per producer binding), largest: { cid, documents, types: documents per type } (the
 * run's largest company) }. Per-object costs of a Durable Object class are charged
 * to one company (each object serves one company: a folio allocator per company and type, a store per
 * company and month), so they scale with the largest company's rate; D1 and the queues are shared by
 * all companies and scale with the total rate.
 */
/**
 * A document store's fixed size and growth per document, from one run's deltas: the fixed size is
 * the median size of the stores the run made that hold no document (created empty, e.g. index
 * stores; 0 when there are none); the growth, over the largest company's stores that hold documents
 * (made during the run, so their delta is their whole size), what they hold beyond the fixed size
 * per document; every store holding documents when the largest company has none here.
 */
export function storeGrowth(objects, own) {
  const empty = objects.filter((s) => s.documents === 0 && s.bytes > 0).map((s) => s.bytes).sort((a, b) => a - b);
  const fixed = empty.length ? empty[Math.floor(empty.length / 2)] : 0;
  const holding = (own.some((s) => s.documents > 0) ? own : objects).filter((s) => s.documents > 0);
  const docs = holding.reduce((a, s) => a + s.documents, 0);
  const beyond = holding.reduce((a, s) => a + Math.max(0, s.bytes - fixed), 0);
  return { fixed, growth: docs > 0 ? beyond / docs : 0 };
}

export function extrapolate(run, { partitionCloseBytes = 4 * GB } = {}) {
  const { documents } = run;
  const peakTotal = (TARGET.documents_per_day / 86_400) * TARGET.peak_factor;
  const peakLargest = (TARGET.largest_company_per_day / 86_400) * TARGET.peak_factor;
  const rows = [];
  const d1 = run.stores.find((s) => s.kind === "D1");
  // The service's own share: the local SII simulator's `sim_*` rows and statements are left out (the
  // real SII is not in our database); they are shown beside it.
  const sim = { bytes: d1.sim_bytes ?? 0, statements: d1.sim_statements ?? 0, requests: d1.sim_requests ?? 0 };
  const d1BytesPerDoc = Math.max(0, d1.bytes - sim.bytes) / documents;
  const d1StatementsPerDoc = (d1.statements - sim.statements) / documents;
  const simNote = `; the SII simulator's, left out: ${Math.round(sim.bytes / documents)} B and ${(sim.statements / documents).toFixed(2)} statements (${(sim.requests / documents).toFixed(2)} round trips)`;
  rows.push({
    store: "D1 database (the one, shared)",
    measured: `service: ${Math.round(d1BytesPerDoc)} B and ${d1StatementsPerDoc.toFixed(2)} statements (${((d1.requests - sim.requests) / documents).toFixed(2)} round trips) per document${simNote}`,
    load: `${((d1BytesPerDoc * TARGET.documents_per_day) / GB).toFixed(2)} GB a day; ${Math.round(d1StatementsPerDoc * peakTotal)} statements/s at peak`,
    size_share_pct: share(d1BytesPerDoc * TARGET.documents_per_day, LIMITS.d1_bytes),
    size_basis: "after one day",
    rate_share_pct: share(d1StatementsPerDoc * peakTotal, LIMITS.d1_statements_per_s),
    // Judged by the split row below: this run's companies are all cold (issued once or twice in a
    // load of about a minute), so every document here pays its company's fills, which a day of
    // traffic pays once per company and TTL (docs/capacity.md, "Control data in Durable Objects").
    rate_judged_by: "the split row",
  });
  // The same D1 rate split (projected): warm per-document statements plus the company cache misses
  // that a Zipf population produces with the caches' TTLs; the raw figure above stays beside it
  // (every document of a run of small companies pays its company's cold reads).
  const p = projectedD1();
  rows.push({
    store: "D1 database, statements split (projected: warm part + company cache misses)",
    measured: `${p.warm.toFixed(2)} statements per document with warm caches (${D1_SPLIT.warm_per_document.service} the service's, ${D1_SPLIT.warm_per_document.events} the events'; ${D1_SPLIT.source}); cold, per miss: ${D1_SPLIT.caches.map((c) => `${c.statements} (${c.name.split(" (")[0]}, ttl ${c.ttl_s} s)`).join(", ")}`,
    load: `projected misses per document at peak (Zipf s=${D1_SPLIT.zipf_s} over ${TARGET.companies.toLocaleString("en")} companies, ${D1_SPLIT.isolates_per_company} isolates per company, assumed): ${p.caches.map((c) => c.misses_per_document.toFixed(3)).join(" + ")}, so ${p.cold.toFixed(2)} cold statements per document; ${p.perDocument.toFixed(2)} in all (${p.withoutEvents.toFixed(2)} without the events'), ${Math.round(p.perDocument * peakTotal)} statements/s at peak`,
    size_share_pct: null,
    size_basis: "",
    rate_share_pct: share(p.perDocument * peakTotal, LIMITS.d1_statements_per_s),
  });
  const kinds = [...new Set(run.stores.filter((s) => s.kind !== "D1").map((s) => s.kind))];
  for (const kind of kinds) {
    const objects = run.stores.filter((s) => s.kind === kind);
    const requests = objects.reduce((a, s) => a + s.requests, 0);
    const bytes = objects.reduce((a, s) => a + Math.max(0, s.bytes), 0);
    const holdsDocuments = objects.some((s) => s.documents > 0);
    // The requests per document of the run's largest company on its busiest object of this class
    // (objects are addressed by names carrying the company id); the class's average if none is.
    const own = objects.filter((s) => run.largest && String(s.name).includes(run.largest.cid));
    const perDoc = own.length ? Math.max(...own.map((s) => s.requests)) / run.largest.documents : requests / documents;
    const rate = perDoc * peakLargest;
    if (holdsDocuments) {
      // A document store grows with its company's documents; it closes its partition at
      // `partitionCloseBytes` (docs/capacity.md, "Target layout"), a month at the latest. Its size is
      // a fixed part (an empty store: schema, indexes, pages; most stores of a run with many small
      // companies are nearly that) plus a growth per document; the two are extrapolated apart.
      const { fixed, growth: bytesPerDoc } = storeGrowth(objects, own);
      const month = fixed + bytesPerDoc * TARGET.largest_company_per_day * 30;
      const capped = Math.min(month, partitionCloseBytes);
      rows.push({
        store: `${kind} (${objects.length} objects in this run; the largest company's open store)`,
        measured: `${Math.round(bytesPerDoc)} B per document beyond an empty store of ${Math.round(fixed / 1024)} KiB (all stores: ${Math.round(bytes / documents)} B per document); ${perDoc.toFixed(3)} requests per document of the largest company (${(requests / documents).toFixed(3)} over all)`,
        load: `${(month / GB).toFixed(2)} GB a month${capped < month ? ` (a partition closes at ${(partitionCloseBytes / GB).toFixed(0)} GB)` : ""}; ${rate.toFixed(1)} requests/s at peak`,
        size_share_pct: share(capped, LIMITS.do_bytes),
        size_basis: "a partition of the largest company",
        rate_share_pct: share(rate, LIMITS.do_requests_per_s),
      });
    } else {
      // Not a document store (the folio allocator, an index store): whether it grows with documents
      // is measured, not assumed: the growth of the largest company's busiest object per document
      // of its type (objects are named `<company>:<type>` or carry the company id), kept for a year.
      const docsOf = (s) => run.largest.types?.[String(s.name).split(":")[1]] ?? run.largest.documents;
      const growth = own.length ? Math.max(...own.map((s) => Math.max(0, s.bytes) / docsOf(s))) : bytes / documents;
      const days = RETENTION_DAYS[kind] ?? 365;
      const kept = growth * TARGET.largest_company_per_day * days;
      rows.push({
        store: `${kind} (${objects.length} objects in this run; the largest company's busiest)`,
        measured: `${perDoc.toFixed(3)} requests per document of the largest company on its busiest object (${(requests / documents).toFixed(3)} over all); it grew ${Math.round(growth)} B per document (SQLite pages of 4 KiB: a coarse figure)`,
        load: `${rate.toFixed(1)} requests/s at peak; ${(kept / GB).toFixed(1)} GB ${RETENTION_DAYS[kind] ? `kept (${days} days: older rows are pruned)` : "after a year if nothing is deleted"}`,
        size_share_pct: share(kept, LIMITS.do_bytes),
        size_basis: RETENTION_DAYS[kind] ? `${days} days of the largest company` : "a year of the largest company",
        rate_share_pct: share(rate, LIMITS.do_requests_per_s),
      });
    }
  }
  for (const [binding, messages] of Object.entries(run.queues)) {
    rows.push({
      store: `queue ${binding}`,
      measured: `${(messages / documents).toFixed(2)} messages per document`,
      load: `${Math.round((messages / documents) * peakTotal)} messages/s at peak`,
      size_share_pct: null,
      size_basis: "",
      rate_share_pct: share((messages / documents) * peakTotal, LIMITS.queue_messages_per_s),
    });
  }
  const over = (r) => (r.size_share_pct ?? 0) > 50 || (!r.rate_judged_by && r.rate_share_pct > 50);
  return { target: TARGET, limits: LIMITS, rows, over_50_pct: rows.filter(over).map((r) => r.store) };
}

/** The table as Markdown. */
export function modelTable(model) {
  const lines = ["| store | measured in this run | at 10 million documents/day (peak 3×) | size, share of limit | rate, share of limit |", "|---|---|---|---|---|"];
  for (const r of model.rows) lines.push(`| ${r.store} | ${r.measured} | ${r.load} | ${r.size_share_pct === null ? "—" : `${r.size_share_pct} % (${r.size_basis})`} | ${r.rate_share_pct} %${r.rate_judged_by ? ` (every company cold; judged by ${r.rate_judged_by})` : ""} |`);
  return lines.join("\n");
}
