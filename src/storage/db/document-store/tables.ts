/**
 * Document-store tables of the stores' own bookkeeping (index stores' claims, list counters, sent
 * mails), beside src/storage/db/schema/documents.ts: part of the stores' schema source (./baseline.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** In a company's index store (`<companyId>:index`): the document that holds each external_reference. */
export const externalReferences = sqliteTable("external_references", {
  reference: text("reference").primaryKey(),
  invoiceId: text("invoice_id").notNull(),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});

/**
 * In a company's index store: the key of every received DTE (issuer, type, folio, SHA-256 of its
 * XML; '' while only the SII's register lists it) and the received document holding it. `seq` orders
 * arrivals: the first document with an (issuer, type, folio) is the original, a later different one a
 * duplicate. A claim is one atomic batch in this store, so concurrent intakes agree (src/reception/keys.ts).
 */
export const receivedKeys = sqliteTable(
  "received_keys",
  {
    seq: integer("seq").primaryKey(),
    issuerRut: text("issuer_rut").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    xmlSha256: text("xml_sha256").notNull(),
    documentId: text("document_id").notNull(),
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
  },
  (t) => [uniqueIndex("received_keys_uq").on(t.issuerRut, t.documentType, t.folio, t.xmlSha256)],
);

/**
 * In every document store: per company, document type, status and issue date,
 * how many issued documents hold them; kept by triggers on `invoices` (./counters.ts). List totals.
 */
export const invoiceCounts = sqliteTable(
  "invoice_counts",
  {
    companyId: text("company_id"),
    documentType: integer("document_type"),
    status: text("status"),
    issueDate: text("issue_date"),
    n: integer("n").notNull(),
  },
  (t) => [index("invoice_counts_key_idx").on(t.companyId, t.documentType, t.status, t.issueDate)],
);

/** As `invoiceCounts`, for received documents: per type, verification outcome, response state and issue date. */
export const receivedCounts = sqliteTable(
  "received_counts",
  {
    companyId: text("company_id"),
    documentType: integer("document_type"),
    receptionStatus: integer("reception_status"),
    responseState: text("response_state"),
    issueDate: text("issue_date"),
    n: integer("n").notNull(),
  },
  (t) => [index("received_counts_key_idx").on(t.companyId, t.documentType, t.receptionStatus, t.responseState, t.issueDate)],
);

/**
 * In a company's index store: each mail sent from the company's reception
 * address as the mail service named it (`message_id`, what its Email Sending events carry) and what
 * it was (`reference`: `<received document>.<reply>` or an issued document's id), for SENT_MAIL_DAYS.
 */
export const sentMails = sqliteTable(
  "sent_mails",
  {
    messageId: text("message_id").primaryKey(),
    reference: text("reference").notNull(),
    recipient: text("recipient").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("sent_mails_reference_idx").on(t.reference, t.createdAt), index("sent_mails_created_idx").on(t.createdAt)],
);

/**
 * In a company's index store: the amount (an integer scaled by the credited
 * document's currency) each credit note credits of a document of ours (src/invoices/credit-claims.ts).
 */
export const creditClaims = sqliteTable(
  "credit_claims",
  {
    creditedInvoiceId: text("credited_invoice_id").notNull(),
    creditNoteId: text("credit_note_id").notNull(),
    amount: integer("amount").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.creditedInvoiceId, t.creditNoteId] })],
);
