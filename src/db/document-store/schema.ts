/**
 * The SQLite schema of a document store (one Durable Object per company and partition), as a
 * versioned list: entry N holds the statements that take a store from version N to N + 1. The store
 * applies the entries it has not applied yet when it starts (under blockConcurrencyWhile), so a new
 * entry reaches every store the next time it wakes. Never edit an entry that has shipped; add one.
 *
 * The tables have the names and columns of their D1 twins (src/db/schema), so the same Drizzle table
 * objects query both; foreign keys to control-plane tables (companies) are not here: those live in D1.
 */
export const STORE_SCHEMA: readonly (readonly string[])[] = [
  // 1: issued documents, their history, cancellations, envelopes and the event outbox.
  [
    `CREATE TABLE invoices (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       document_type INTEGER NOT NULL,
       status TEXT NOT NULL,
       fiscal_status TEXT,
       fiscal_message TEXT,
       folio INTEGER,
       caf_id TEXT,
       external_reference TEXT,
       issue_date TEXT NOT NULL,
       recipient_rut TEXT NOT NULL,
       recipient_name TEXT NOT NULL,
       currency TEXT NOT NULL,
       total TEXT NOT NULL,
       body TEXT NOT NULL,
       stamped_at TEXT,
       xml_key TEXT,
       envelope_id TEXT,
       track_id TEXT,
       cancels_invoice_id TEXT,
       last_error TEXT,
       attempts INTEGER DEFAULT 0 NOT NULL,
       last_event_id TEXT,
       request_id TEXT,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       updated_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE INDEX invoices_company_idx ON invoices (company_id, created_at, id)`,
    `CREATE INDEX invoices_status_idx ON invoices (status, updated_at)`,
    `CREATE INDEX invoices_folio_idx ON invoices (company_id, document_type, folio)`,
    `CREATE INDEX invoices_envelope_idx ON invoices (envelope_id)`,
    `CREATE UNIQUE INDEX invoices_external_reference_uq ON invoices (company_id, external_reference) WHERE external_reference IS NOT NULL AND status <> 'FAILED'`,
    `CREATE TABLE invoice_events (
       id TEXT PRIMARY KEY NOT NULL,
       invoice_id TEXT NOT NULL,
       status TEXT NOT NULL,
       fiscal_status TEXT,
       message TEXT,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE INDEX invoice_events_invoice_idx ON invoice_events (invoice_id, created_at, id)`,
    `CREATE TABLE cancellations (
       cancelled_invoice_id TEXT PRIMARY KEY NOT NULL,
       credit_note_id TEXT NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE TABLE envelopes (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       kind TEXT NOT NULL,
       xml_key TEXT NOT NULL,
       document_count INTEGER NOT NULL,
       status TEXT NOT NULL,
       track_id TEXT,
       sii_status TEXT,
       polls INTEGER DEFAULT 0 NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       updated_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE INDEX envelopes_status_idx ON envelopes (status, updated_at)`,
    `CREATE TABLE event_outbox (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       type TEXT NOT NULL,
       dedupe_key TEXT,
       payload TEXT NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       dispatched_at TEXT
     )`,
    `CREATE INDEX event_outbox_pending_idx ON event_outbox (dispatched_at, created_at)`,
    `CREATE UNIQUE INDEX event_outbox_dedupe_uq ON event_outbox (company_id, dedupe_key)`,
  ],
];

/** One SQL statement sent to a store: positional `?` parameters; rows as objects or as arrays (Drizzle's "values"). */
export interface StoreStatement {
  sql: string;
  params: unknown[];
  rows: "objects" | "arrays";
}

/** What a store answers for one statement (the fields of a D1 result the Drizzle D1 driver reads), plus the store's size. */
export interface StoreResult {
  rows: unknown[];
  columns: string[];
  changes: number;
  lastRowId: number;
  rowsRead: number;
  rowsWritten: number;
}

export interface StoreAnswer {
  results: StoreResult[];
  /** The store's database size in bytes after the statements (drives the size roll-over). */
  size: number;
}
