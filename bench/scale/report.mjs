// Per-partition figures of one run and the Markdown the bench prints and writes to docs/capacity.md.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pct, root } from "../lib.mjs";
import { modelTable } from "./model.mjs";

/** Per store kind: how many stores, and the sum, median and largest of documents, bytes, requests. */
export function perKind(stores) {
  const kinds = [...new Set(stores.map((s) => s.kind))];
  return kinds.map((kind) => {
    const of = stores.filter((s) => s.kind === kind);
    const stat = (f) => {
      const v = of.map((s) => s[f] ?? 0).sort((a, b) => a - b);
      return { sum: v.reduce((a, b) => a + b, 0), median: pct(v, 50), max: v[v.length - 1] };
    };
    const busiest = [...of].sort((a, b) => b.requests - a.requests).slice(0, 3).map((s) => `${s.name}: ${s.requests} requests, ${s.documents} documents, ${(s.bytes / 1024).toFixed(0)} KiB`);
    return { kind, stores: of.length, documents: stat("documents"), bytes: stat("bytes"), requests: stat("requests"), busiest };
  });
}

export function partitionTable(kinds) {
  const lines = ["| store kind | stores | documents: total / median / largest | bytes added: total / median / largest | requests: total / median / largest |", "|---|---|---|---|---|"];
  const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
  for (const k of kinds) lines.push(`| ${k.kind} | ${k.stores} | ${k.documents.sum} / ${k.documents.median} / ${k.documents.max} | ${kb(k.bytes.sum)} / ${kb(k.bytes.median)} / ${kb(k.bytes.max)} | ${k.requests.sum} / ${k.requests.median} / ${k.requests.max} |`);
  return lines.join("\n");
}

export function runTable(runs, noop) {
  const lines = ["| run | layout | documents/s end to end | POST p50 / p95 / p99 (ms) | POST p99 ÷ no-op p99 (idle probe) | no-op p50 / p99 under the load (ms) | POST p99 ÷ that no-op p99 | verified |", "|---|---|---|---|---|---|---|---|"];
  const row = (r, name, f, verified) =>
    `| ${name} | ${r.layout} | ${f.docs_per_s} | ${f.post_p50_ms} / ${f.post_p95_ms} / ${f.post_p99_ms} | ${(f.post_p99_ms / noop.p99_ms).toFixed(2)} | ${f.noop_under_load ? `${f.noop_under_load.p50_ms} / ${f.noop_under_load.p99_ms}` : "—"} | ${f.noop_under_load ? (f.post_p99_ms / f.noop_under_load.p99_ms).toFixed(2) : "—"} | ${verified} |`;
  for (const r of runs) {
    const v = r.verified;
    lines.push(row(r, `${r.label} (${r.commit})${r.steady ? ", new companies' first documents" : ""}`, r, `${v.documents} documents, ${v.not_final} not final, ${v.not_accepted} not accepted, ${v.folio_duplicates} duplicate folios, ${v.missing} missing`));
    // The second load on the same companies (its documents are in the count above).
    if (r.steady) lines.push(row(r, `${r.label}, the same load again (companies that have issued before)`, r.steady, "(with the above)"));
  }
  return lines.join("\n");
}

/** Writes a run's tables to bench/results/<block>.md (`scale` or `reads`), the latest run only. */
export function writeDoc(markdown, block = "scale") {
  const file = path.join(root, `bench/results/${block}.md`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${markdown}\n`);
}

export { modelTable };
