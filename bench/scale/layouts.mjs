// Where the documents live, read from the local state of `wrangler dev --persist-to DIR` (SQLite
// files, read-only through node:sqlite while the service runs) plus the run's meter. One
// implementation per layout, chosen by what the tree's wrangler.toml binds:
// - `d1`: issue 16 before item 2 (trees before the POST wrote to the stores): every document in the
//   one D1 database;
// - `stores`: issue 16 item 2 (this tree): documents in per-company Durable Object stores (a store
//   per company and month, a per-company index store), the partition directory in D1.
// Each has `progress(dir)` (documents issued and final so far) and `stores(dir, meter)` (per store:
// documents, bytes, requests). The `stores` side reads every SQLite Durable Object of every class
// and counts the rows of DOCUMENT_TABLE where a store has it; if item 2 names its table otherwise
// or keeps documents elsewhere, change it here.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { durableObjectClasses } from "./tree.mjs";

const DOCUMENT_TABLE = "invoices";
const RECEIVED_TABLE = "received_documents";
const FINAL = "('ACCEPTED','ACCEPTED_WITH_OBJECTIONS','REJECTED','FAILED')";

const sqliteFiles = (dir) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite").map((f) => path.join(dir, f)) : []);

/**
 * Runs `fn` on a read-only connection. workerd keeps some SQLite files locked while their Durable
 * Object is alive (SQLITE_BUSY): then `fn` reads a copy of the file and its write-ahead log, taken
 * at that instant (retried if the copy was caught mid-write).
 */
function withDb(file, fn) {
  for (let attempt = 0; ; attempt++) {
    let db;
    const copy = attempt > 0 ? snapshot(file) : null;
    try {
      db = new DatabaseSync(copy ?? file, copy ? {} : { readOnly: true });
      return fn(db);
    } catch (e) {
      if (attempt > 20 || !/locked|busy|malformed|not a database/i.test(String(e))) throw e;
    } finally {
      db?.close();
      if (copy) rmSync(path.dirname(copy), { recursive: true, force: true });
    }
  }
}

function snapshot(file) {
  const dir = mkdtempSync(path.join(tmpdir(), "dte-scale-copy-"));
  const copy = path.join(dir, "db.sqlite");
  copyFileSync(file, copy);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
  return copy;
}

const hasTable = (db, t) => !!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t);
const bytesOf = (db) => db.prepare("PRAGMA page_count").get().page_count * db.prepare("PRAGMA page_size").get().page_size;
const countOf = (db, t) => (hasTable(db, t) ? db.prepare(`SELECT count(*) AS n FROM ${t}`).get().n : 0);
function progressOf(db) {
  if (!hasTable(db, DOCUMENT_TABLE)) return { total: 0, final: 0 };
  const r = db.prepare(`SELECT count(*) AS total, coalesce(sum(status IN ${FINAL}), 0) AS final FROM ${DOCUMENT_TABLE}`).get();
  return { total: r.total, final: r.final };
}

/**
 * A file's progress, read again only when the file or its write-ahead log changed since the last
 * read (size or modification time). The bench polls every 500 ms while the load runs; reading every
 * store of a thousand companies each time (and copying those workerd holds locked) cost the bench
 * process 25 ms of CPU per document in the run of 2026-11-26 19:23 UTC, on the machine the service
 * runs on, where the D1 layout's one file cost 1.7 ms.
 */
const lastProgress = new Map();
function progressUnlessUnchanged(file) {
  const stamp = [file, `${file}-wal`].map((f) => statSync(f, { throwIfNoEntry: false })).map((st) => (st ? `${st.mtimeMs}/${st.size}` : "-")).join(" ");
  const last = lastProgress.get(file);
  if (last?.stamp === stamp) return last.progress;
  const progress = withDb(file, progressOf);
  lastProgress.set(file, { stamp, progress });
  return progress;
}

/** The local D1 database's file (the one database of the service). */
export function d1File(dir) {
  const files = sqliteFiles(path.join(dir, "v3/d1/miniflare-D1DatabaseObject"));
  if (files.length !== 1) throw new Error(`expected one local D1 database under ${dir}, found ${files.length}`);
  return files[0];
}

/** Bytes of the pages of the SII simulator's tables and indexes (`sim_*`) in the D1 file (SQLite's dbstat). */
const simBytesOf = (db) => db.prepare("SELECT coalesce(sum(pgsize), 0) AS b FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name LIKE 'sim\\_%' ESCAPE '\\')").get().b;

function d1Store(dir, meter) {
  return withDb(d1File(dir), (db) => ({
    kind: "D1",
    name: "DB",
    documents: countOf(db, DOCUMENT_TABLE),
    received: countOf(db, RECEIVED_TABLE),
    bytes: bytesOf(db),
    requests: meter.d1.round_trips,
    statements: meter.d1.statements,
    // The local SII simulator's share (its `sim_*` tables share the binding; the real SII is not in our database).
    sim_bytes: simBytesOf(db),
    sim_requests: meter.d1.sim_round_trips ?? 0,
    sim_statements: meter.d1.sim_statements ?? 0,
  }));
}

/** Every SQLite Durable Object of the tree's classes, with the calls the meter saw on it. */
function objectStores(dir, tree, meter) {
  const calls = new Map();
  for (const perId of Object.values(meter.objects)) for (const [id, r] of Object.entries(perId)) calls.set(id, r);
  return durableObjectClasses(tree).flatMap((cls) =>
    sqliteFiles(path.join(dir, `v3/do/dte-api-${cls}`)).map((file) => {
      const id = path.basename(file, ".sqlite");
      const seen = calls.get(id);
      return withDb(file, (db) => ({ kind: cls, name: seen?.name ?? id.slice(0, 12), documents: countOf(db, DOCUMENT_TABLE), received: countOf(db, RECEIVED_TABLE), bytes: bytesOf(db), requests: seen?.calls ?? 0 }));
    }),
  );
}

export const layouts = {
  d1: {
    description: "before issue 16 item 2: every document in the one D1 database",
    progress: (dir) => withDb(d1File(dir), progressOf),
    stores: (dir, tree, meter) => [d1Store(dir, meter), ...objectStores(dir, tree, meter)],
  },
  stores: {
    description: "per-company document stores (Durable Objects per company and month) and a partition directory in D1",
    progress(dir, tree) {
      const files = [d1File(dir), ...durableObjectClasses(tree).flatMap((cls) => sqliteFiles(path.join(dir, `v3/do/dte-api-${cls}`)))];
      return files.map(progressUnlessUnchanged).reduce((a, b) => ({ total: a.total + b.total, final: a.final + b.final }), { total: 0, final: 0 });
    },
    stores: (dir, tree, meter) => [d1Store(dir, meter), ...objectStores(dir, tree, meter)],
  },
};

/**
 * The layout of a tree: `stores` when its issuance writes documents into the per-company stores
 * (`openStore(` in src/invoices/issue.ts: this tree and later ones, so issued documents are
 * counted in the stores' `invoices` tables, D1's partition 0 beside them). A tree that has the
 * DocumentStore class but still keeps issued documents in D1 (issue 16 part-way: idempotency records
 * and webhook deliveries moved first) is `d1` for the documents these benches count and seed.
 * `SCALE_BENCH_LAYOUT` forces one.
 */
export function layoutOf(tree) {
  const forced = process.env.SCALE_BENCH_LAYOUT;
  if (forced) return forced;
  const issue = path.join(tree, "src/invoices/issue.ts");
  const documentsInStores = existsSync(issue) && /\bopenStore\(/.test(readFileSync(issue, "utf8"));
  return documentsInStores ? "stores" : "d1";
}

/** `after - before` of two store lists (matched by kind and name): what the measured load added. */
export function storeDelta(before, after) {
  const key = (s) => `${s.kind}/${s.name}`;
  const was = new Map(before.map((s) => [key(s), s]));
  return after.map((s) => {
    const b = was.get(key(s)) ?? {};
    const d = { ...s };
    for (const f of ["documents", "received", "bytes", "requests", "statements", "sim_bytes", "sim_requests", "sim_statements"]) if (typeof s[f] === "number") d[f] = s[f] - (b[f] ?? 0);
    return d;
  });
}

/**
 * Where a tree keeps received documents, which may differ from issued ones while issue 16 is part-way:
 * `stores` when reception's intake writes them into the company's open store (`openStore(` in
 * src/reception/intake.ts), else `d1`. `RECEPTION_BENCH_LAYOUT` forces one.
 */
export function receptionLayoutOf(tree) {
  const forced = process.env.RECEPTION_BENCH_LAYOUT;
  if (forced) return forced;
  const intake = path.join(tree, "src/reception/intake.ts");
  return existsSync(intake) && /\bopenStore\(/.test(readFileSync(intake, "utf8")) ? "stores" : "d1";
}
