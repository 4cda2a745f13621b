// Seeding a company with many documents directly into the local state while the service is stopped
// (the pipeline would take hours for a million): every seeded row is a clone of a real row the
// service wrote for that company (issued or received through the API first), with a new id, folio,
// dates and external reference, so every column is realistic. One implementation per layout
// (bench/scale/layouts.mjs tells which):
// - `d1`: rows into the one local D1 database (node:sqlite on its file);
// - `stores`: rows into the company's document store that already holds its real rows
//   (the SQLite file of that Durable Object under `v3/do/<script>-DocumentStore/`, found by looking
//   for the company's rows, since the file is named by the object's id, not by the store's name):
//   the clones get ids of that store's partition (`rcv_p<n>_…`, `inv_p<n>_…`), so reads by id find
//   them there. The twin tables have the same columns as D1's (test/stores/schema-twins.test.ts).
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { d1File } from "../scale/layouts.mjs";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** `<prefix>_<ULID>` for time `ms`, as src/lib/ids.ts makes them (48-bit time, 80 random bits). */
function ulid(prefix, ms) {
  let time = "";
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const r = randomBytes(10);
  let bits = 0n;
  for (const b of r) bits = (bits << 8n) | BigInt(b);
  let rand = "";
  for (let i = 0; i < 16; i++, bits >>= 5n) rand = ALPHABET[Number(bits & 31n)] + rand;
  return `${prefix}_${time}${rand}`;
}
/** What comes before the ULID: `inv`, or `rcv_p3` for an id of partition 3 (the clone stays in that partition). */
const prefixOf = (id) => id.slice(0, id.lastIndexOf("_"));
const iso = (ms) => new Date(ms).toISOString();

function insertAll(db, table, rows) {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const stmt = db.prepare(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
  for (const r of rows) stmt.run(...cols.map((c) => r[c]));
}

/** Runs `make(k)` for k < n in transactions of `chunk`, inserting what it returns ({ table: rows }). */
function inChunks(db, n, make, progress, chunk = 20_000) {
  for (let start = 0; start < n; start += chunk) {
    db.exec("BEGIN");
    const batch = {};
    for (let k = start; k < Math.min(n, start + chunk); k++) for (const [table, rows] of Object.entries(make(k))) (batch[table] ??= []).push(...rows);
    for (const [table, rows] of Object.entries(batch)) insertAll(db, table, rows);
    db.exec("COMMIT");
    if ((start / chunk) % 10 === 9) progress(`${Math.min(n, start + chunk)} of ${n}`);
  }
}

/** Creation times spread evenly over the `days` before `endMs`, oldest first. */
const timeOf = (k, n, days, endMs) => endMs - Math.round(((n - k) * days * 86_400_000) / n);

/**
 * `n` more issued documents for `companyId` in `db` (D1 or its store), cloned from its rows (and
 * their history rows, when `events`), created over the `days` before its first real document,
 * folios after its highest. A small share is REJECTED (1 in 50), the rest keep the template's status.
 */
function cloneIssued(db, companyId, n, { days = 365, events = true, progress = () => {}, from = db, prefix } = {}) {
  const templates = from.prepare("SELECT * FROM invoices WHERE company_id = ? ORDER BY created_at").all(companyId);
  if (templates.length === 0) throw new Error(`no documents of ${companyId} to clone`);
  const history = new Map(templates.map((t) => [t.id, from.prepare("SELECT * FROM invoice_events WHERE invoice_id = ? ORDER BY created_at, id").all(t.id)]));
  const folio = {};
  for (const t of templates) folio[t.document_type] = Math.max(folio[t.document_type] ?? 0, t.folio ?? 0);
  const endMs = Date.parse(templates[0].created_at) - 60_000;
  inChunks(db, n, (k) => {
    const t = templates[k % templates.length];
    const ms = timeOf(k, n, days, endMs);
    const id = ulid(prefix ?? prefixOf(t.id), ms);
    const ref = `seed-${k}`;
    const body = JSON.parse(t.body);
    body.external_reference = ref;
    body.invoice_date = iso(ms).slice(0, 10);
    const evs = events ? (history.get(t.id) ?? []).map((e, j) => ({ ...e, id: ulid(prefixOf(e.id), ms + j), invoice_id: id, created_at: iso(ms + j * 1000) })) : [];
    const row = {
      ...t,
      id,
      folio: ++folio[t.document_type],
      external_reference: ref,
      issue_date: iso(ms).slice(0, 10),
      body: JSON.stringify(body),
      status: k % 50 === 49 ? "REJECTED" : t.status,
      stamped_at: t.stamped_at ? iso(ms).slice(0, 19) : null,
      last_event_id: evs.length ? evs[evs.length - 1].id : t.last_event_id,
      created_at: iso(ms),
      updated_at: iso(ms + 60_000),
    };
    return { invoices: [row], invoice_events: evs };
  }, progress);
}

/** `n` more received documents for `companyId` in `db` (D1 or its store), cloned from its rows, received over the `days` before them. */
function cloneReceived(db, companyId, n, { days = 365, progress = () => {} } = {}) {
  const templates = db.prepare("SELECT * FROM received_documents WHERE company_id = ? ORDER BY created_at").all(companyId);
  if (templates.length === 0) throw new Error(`no received documents of ${companyId} to clone`);
  const endMs = Date.parse(templates[0].created_at) - 60_000;
  inChunks(db, n, (k) => {
    const t = templates[k % templates.length];
    const ms = timeOf(k, n, days, endMs);
    return { received_documents: [{ ...t, id: ulid(prefixOf(t.id), ms), folio: 1_000_000 + k, issue_date: iso(ms).slice(0, 10), created_at: iso(ms), updated_at: iso(ms) }] };
  }, progress);
}

export const seeders = {
  d1: {
    /** `cloneIssued` into the local D1 database. */
    issued(dir, companyId, n, opts = {}) {
      const db = new DatabaseSync(d1File(dir));
      try {
        cloneIssued(db, companyId, n, opts);
      } finally {
        db.close();
      }
    },
    /** `cloneReceived` into the local D1 database. */
    received(dir, companyId, n, opts = {}) {
      const db = new DatabaseSync(d1File(dir));
      try {
        cloneReceived(db, companyId, n, opts);
      } finally {
        db.close();
      }
    },
  },
  stores: {
    /**
     * As `d1.issued`, into the company's store that holds its issued documents (the newest, if
     * several). While the POST still writes issued documents to D1 (no store holds any), the clones
     * of its D1 rows go to the store of its received documents, with that partition's ids
     * (`inv_p<n>_…`), where reads by id and lists find them as they will find documents the POST
     * writes to the stores.
     */
    issued(dir, companyId, n, opts = {}) {
      if (hasCompanyStore(dir, companyId, "invoices")) return withCompanyStore(dir, companyId, "invoices", (db) => cloneIssued(db, companyId, n, opts));
      // The company's D1 rows are then deleted: all its issued documents are in its store, as they
      // will be when the POST writes there (a company's reads then touch one store, not D1 too).
      const d1 = new DatabaseSync(d1File(dir));
      try {
        withCompanyStore(dir, companyId, "received_documents", (db, _file, ordinal) => cloneIssued(db, companyId, n, { ...opts, from: d1, prefix: `inv_p${ordinal}` }));
        d1.prepare("DELETE FROM invoice_events WHERE invoice_id IN (SELECT id FROM invoices WHERE company_id = ?)").run(companyId);
        d1.prepare("DELETE FROM cancellations WHERE cancelled_invoice_id IN (SELECT id FROM invoices WHERE company_id = ?)").run(companyId);
        d1.prepare("DELETE FROM invoices WHERE company_id = ?").run(companyId);
      } finally {
        d1.close();
      }
    },
    /** As `d1.received`, into the company's store that holds its received documents (the newest, if several). */
    received(dir, companyId, n, opts = {}) {
      withCompanyStore(dir, companyId, "received_documents", (db) => cloneReceived(db, companyId, n, opts));
    },
  },
};

/** The SQLite files of the local DocumentStore objects (one per company and partition, plus index stores). */
export function storeFiles(dir) {
  const doDir = path.join(dir, "v3/do");
  if (!existsSync(doDir)) return [];
  return readdirSync(doDir)
    .filter((d) => d.endsWith("-DocumentStore"))
    .flatMap((d) => readdirSync(path.join(doDir, d)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite").map((f) => path.join(doDir, d, f)));
}

/** The ordinal of the newest partition of `companyId` whose store has rows in `table` (read from their ids), or -1. */
function newestOrdinal(db, companyId, table) {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) return -1;
  const row = db.prepare(`SELECT id FROM ${table} WHERE company_id = ? LIMIT 1`).get(companyId);
  if (!row) return -1;
  const m = /_p(\d+)_/.exec(row.id);
  return m ? Number(m[1]) : 0;
}

/** The company's store holding its rows of `table` (the newest partition when several do), or null. */
function companyStore(dir, companyId, table) {
  let best = null;
  for (const file of storeFiles(dir)) {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const ordinal = newestOrdinal(db, companyId, table);
      if (ordinal >= 0 && (!best || ordinal > best.ordinal)) best = { file, ordinal };
    } finally {
      db.close();
    }
  }
  return best;
}

/** Whether some store of the company holds rows of `table`. */
export const hasCompanyStore = (dir, companyId, table) => companyStore(dir, companyId, table) !== null;

/** Runs `fn(db, file, ordinal)` on the company's store holding its rows of `table` (the newest partition when several do). */
export function withCompanyStore(dir, companyId, table, fn) {
  const best = companyStore(dir, companyId, table);
  if (!best) throw new Error(`no document store of ${companyId} holds ${table} under ${dir}`);
  const db = new DatabaseSync(best.file);
  try {
    return fn(db, best.file, best.ordinal);
  } finally {
    db.close();
  }
}
