import { counterStatements, INVOICE_COUNTERS, RECEIVED_COUNTERS } from "./counters";

/**
 * The SQLite schema of a document store (one Durable Object per company and partition), as a
 * versioned list: entry N holds the statements that take a store from version N to N + 1. The store
 * applies the entries it has not applied yet when it starts (under blockConcurrencyWhile), so a new
 * entry reaches every store the next time it wakes. Never edit an entry that has shipped; add one.
 *
 * The tables have the names, columns and indexes of their D1 twins (src/db/schema, as of migration
 * 0014), so the same Drizzle table objects query both and the data migration copies rows as they are; foreign keys to control-plane tables (companies) are not here: those live in D1.
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
  // 2: webhook deliveries and attempts, received documents and the inbound messages of the company.
  [
    `CREATE TABLE webhook_deliveries (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       endpoint_id TEXT NOT NULL,
       event_id TEXT NOT NULL,
       event_type TEXT NOT NULL,
       status TEXT DEFAULT 'PENDING' NOT NULL,
       attempts INTEGER DEFAULT 0 NOT NULL,
       round_attempts INTEGER DEFAULT 0 NOT NULL,
       next_attempt_at TEXT,
       last_response_status INTEGER,
       last_error TEXT,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       updated_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE UNIQUE INDEX webhook_deliveries_endpoint_event_uq ON webhook_deliveries (endpoint_id, event_id)`,
    `CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (company_id, endpoint_id, created_at)`,
    `CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (company_id, event_id)`,
    `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (status, next_attempt_at)`,
    `CREATE TABLE webhook_attempts (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       delivery_id TEXT NOT NULL,
       endpoint_id TEXT NOT NULL,
       event_id TEXT NOT NULL,
       event_type TEXT NOT NULL,
       attempt INTEGER NOT NULL,
       started_at TEXT NOT NULL,
       duration_ms INTEGER NOT NULL,
       response_status INTEGER,
       response_body TEXT,
       error TEXT
     )`,
    `CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt)`,
    `CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (company_id, endpoint_id, started_at)`,
    `CREATE TABLE received_documents (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT NOT NULL,
       issuer_rut TEXT NOT NULL,
       document_type INTEGER NOT NULL,
       folio INTEGER NOT NULL,
       issue_date TEXT,
       total TEXT,
       recipient_rut TEXT,
       channel TEXT NOT NULL,
       message_id TEXT,
       xml_key TEXT,
       xml_sha256 TEXT,
       reception_status INTEGER,
       checks TEXT,
       summary TEXT,
       duplicate INTEGER DEFAULT 0 NOT NULL,
       sii_received_at TEXT,
       response_deadline TEXT,
       response_state TEXT DEFAULT 'PENDING' NOT NULL,
       responses TEXT DEFAULT '[]' NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       updated_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE UNIQUE INDEX received_documents_key_uq ON received_documents (company_id, issuer_rut, document_type, folio, xml_sha256)`,
    `CREATE INDEX received_documents_company_idx ON received_documents (company_id, created_at)`,
    `CREATE INDEX received_documents_deadline_idx ON received_documents (response_state, response_deadline)`,
    `CREATE TABLE inbound_messages (
       id TEXT PRIMARY KEY NOT NULL,
       company_id TEXT,
       channel TEXT NOT NULL,
       sender TEXT,
       recipient TEXT,
       size INTEGER NOT NULL,
       sha256 TEXT,
       outcome TEXT NOT NULL,
       detail TEXT,
       documents INTEGER DEFAULT 0 NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE INDEX inbound_messages_company_idx ON inbound_messages (company_id, created_at)`,
  ],
  // 3: index stores (`<owner>:index`, not partitioned): the Idempotency-Key records of a client and mode.
  [
    `CREATE TABLE idempotency_keys (
       client_id TEXT NOT NULL,
       key TEXT NOT NULL,
       scope TEXT NOT NULL,
       fingerprint TEXT NOT NULL,
       state TEXT NOT NULL,
       response_status INTEGER,
       response_body TEXT,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
       expires_at TEXT NOT NULL,
       PRIMARY KEY (client_id, key)
     )`,
    `CREATE INDEX idempotency_expires_idx ON idempotency_keys (expires_at)`,
  ],
  // 4: a company's index store (`<companyId>:index`): who holds each external_reference.
  [
    `CREATE TABLE external_references (
       reference TEXT PRIMARY KEY NOT NULL,
       invoice_id TEXT NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
  ],
  // 5: the list lookups of D1 migration 0014 (by external_reference, by folio alone, by issue date),
  [
    `CREATE INDEX invoices_company_reference_idx ON invoices (company_id, external_reference, created_at, id)`,
    `CREATE INDEX invoices_company_folio_only_idx ON invoices (company_id, folio, created_at, id)`,
    `CREATE INDEX invoices_company_issue_date_idx ON invoices (company_id, issue_date)`,
    // and the outbox's per-company pending index, which version 1 left out.
    `CREATE INDEX event_outbox_company_pending_idx ON event_outbox (company_id, dispatched_at, created_at)`,
  ],
  // 6: a company's index store: every received DTE's key (issuer, type, folio, SHA-256 of its XML, ''
  // for one the SII lists whose XML has not arrived) and the document that holds it; `seq` is the
  // arrival order (the first document with a key is the original, later different ones duplicates).
  [
    `CREATE TABLE received_keys (
       seq INTEGER PRIMARY KEY,
       issuer_rut TEXT NOT NULL,
       document_type INTEGER NOT NULL,
       folio INTEGER NOT NULL,
       xml_sha256 TEXT NOT NULL,
       document_id TEXT NOT NULL,
       created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
     )`,
    `CREATE UNIQUE INDEX received_keys_uq ON received_keys (issuer_rut, document_type, folio, xml_sha256)`,
  ],
  // 7: lists that cost the same in a large store as in an empty one (issue 16 item 4; D1 migration
  // 0018 has the same indexes): each filtered list's index ends in its order (created_at, id), and
  // the totals of the filters on few-valued columns come from counters the triggers keep (./counters.ts).
  [
    `CREATE INDEX invoices_company_status_idx ON invoices (company_id, status, created_at, id)`,
    `CREATE INDEX invoices_company_type_idx ON invoices (company_id, document_type, created_at, id)`,
    `CREATE INDEX invoices_company_issue_order_idx ON invoices (company_id, issue_date, created_at, id)`,
    `CREATE INDEX invoices_company_type_issue_idx ON invoices (company_id, document_type, issue_date, created_at, id)`,
    `CREATE INDEX received_documents_company_order_idx ON received_documents (company_id, created_at, id)`,
    `CREATE INDEX received_documents_company_type_idx ON received_documents (company_id, document_type, created_at, id)`,
    `CREATE INDEX received_documents_company_state_idx ON received_documents (company_id, response_state, created_at, id)`,
    `CREATE INDEX received_documents_company_verification_idx ON received_documents (company_id, reception_status, created_at, id)`,
    ...counterStatements(INVOICE_COUNTERS),
    ...counterStatements(RECEIVED_COUNTERS),
  ],
  // 8: retention of events and deliveries (30 days; D1 migration 0019 has the same indexes): the
  // store's alarm deletes relayed events and settled deliveries oldest first (event-retention.ts).
  [
    `CREATE INDEX event_outbox_created_idx ON event_outbox (created_at)`,
    `CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at)`,
  ],
  // 9: the company's log of inbound messages (GET /api/reception/messages; D1 migration 0020 has the
  // same column and indexes): each e-mail's Subject, the log's order alone and by outcome, and the
  // documents each message brought.
  [
    `ALTER TABLE inbound_messages ADD COLUMN subject TEXT`,
    `CREATE INDEX inbound_messages_company_order_idx ON inbound_messages (company_id, created_at, id)`,
    `CREATE INDEX inbound_messages_company_outcome_idx ON inbound_messages (company_id, outcome, created_at, id)`,
    `CREATE INDEX received_documents_company_message_idx ON received_documents (company_id, message_id)`,
  ],
  // 10: each inbound message's attachments, or the uploaded file (name, type, size, how it was read;
  // JSON; D1 migration 0021 has the same column).
  [`ALTER TABLE inbound_messages ADD COLUMN attachments TEXT`],
  // 11: the buyer's answer to an accepted factura, read from the SII's register of events (D1
  // migration 0022 has the same columns and index).
  [
    `ALTER TABLE invoices ADD COLUMN buyer_state TEXT`,
    `ALTER TABLE invoices ADD COLUMN buyer_events TEXT`,
    `ALTER TABLE invoices ADD COLUMN sii_received_at TEXT`,
    `ALTER TABLE invoices ADD COLUMN buyer_deadline TEXT`,
    `ALTER TABLE invoices ADD COLUMN buyer_checked_at TEXT`,
    `ALTER TABLE invoices ADD COLUMN buyer_check_at TEXT`,
    `CREATE INDEX invoices_buyer_check_idx ON invoices (buyer_check_at) WHERE buyer_check_at IS NOT NULL`,
    `CREATE INDEX invoices_company_buyer_state_idx ON invoices (company_id, buyer_state, created_at, id) WHERE buyer_state IS NOT NULL`,
  ],
  // 12: the buyer's own replies (RespuestaDTE, EnvioRecibos) read onto an issued document (JSON; D1
  // migration 0023 has the same column).
  [`ALTER TABLE invoices ADD COLUMN buyer_replies TEXT`],
  // 13: the EnvioDTE addressed to the buyer, mailed to its exchange address (D1 migration 0024 has
  // the same columns and index).
  [
    `ALTER TABLE invoices ADD COLUMN buyer_delivery TEXT`,
    `ALTER TABLE invoices ADD COLUMN buyer_delivery_at TEXT`,
    `CREATE INDEX invoices_buyer_delivery_idx ON invoices (buyer_delivery_at) WHERE buyer_delivery_at IS NOT NULL`,
  ],
  // 14: the file that brought a received document (its name, the envelope's SetDTE ID and digest, the
  // Caratula's RUTs; JSON), for the RecepcionEnvio that answers it (D1 migration 0025 has the same column).
  [`ALTER TABLE received_documents ADD COLUMN received_file TEXT`],
  // 15: when the sweep of reply mails next looks at a received document (src/reception/overdue-mails.ts;
  // D1 migration 0026 has the same column and index).
  [
    `ALTER TABLE received_documents ADD COLUMN mail_due_at TEXT`,
    `CREATE INDEX received_documents_mail_due_idx ON received_documents (mail_due_at) WHERE mail_due_at IS NOT NULL`,
  ],
  // 16: a company's index store: the id the mail service gave each mail sent from the company's
  // reception address, and what it was (src/domain/companies/company-mail.ts), for the Email Sending
  // events that name it (src/reception/sending-events.ts); kept SENT_MAIL_DAYS.
  [
    `CREATE TABLE sent_mails (
       message_id TEXT PRIMARY KEY NOT NULL,
       reference TEXT NOT NULL,
       recipient TEXT NOT NULL,
       created_at TEXT NOT NULL
     )`,
    `CREATE INDEX sent_mails_reference_idx ON sent_mails (reference, created_at)`,
    `CREATE INDEX sent_mails_created_idx ON sent_mails (created_at)`,
  ],
  // 17: a company's index store: what each credit note credits of a document of ours (scaled by the
  // document's currency), so that the notes of a document never credit more than it totals
  // (src/domain/invoices/credit-claims.ts).
  [
    `CREATE TABLE credit_claims (
       credited_invoice_id TEXT NOT NULL,
       credit_note_id TEXT NOT NULL,
       amount INTEGER NOT NULL,
       created_at TEXT NOT NULL,
       PRIMARY KEY (credited_invoice_id, credit_note_id)
     )`,
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
