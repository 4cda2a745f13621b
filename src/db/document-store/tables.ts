/**
 * Drizzle tables that exist only in the document stores, never in D1 (so they stay outside
 * src/db/schema, which drizzle-kit turns into D1 migrations). The moved tables themselves are the
 * D1 ones of src/db/schema, with the same names and columns in the stores.
 */
import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
export const receivedKeys = sqliteTable("received_keys", {
  seq: integer("seq").primaryKey(),
  issuerRut: text("issuer_rut").notNull(),
  documentType: integer("document_type").notNull(),
  folio: integer("folio").notNull(),
  xmlSha256: text("xml_sha256").notNull(),
  documentId: text("document_id").notNull(),
  createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
});

/**
 * In every document store (store schema entry 7): per company, document type, status and issue date,
 * how many issued documents hold them; kept by triggers on `invoices` (./counters.ts). List totals.
 */
export const invoiceCounts = sqliteTable("invoice_counts", {
  companyId: text("company_id"),
  documentType: integer("document_type"),
  status: text("status"),
  issueDate: text("issue_date"),
  n: integer("n").notNull(),
});

/** As `invoiceCounts`, for received documents: per type, verification outcome, response state and issue date. */
export const receivedCounts = sqliteTable("received_counts", {
  companyId: text("company_id"),
  documentType: integer("document_type"),
  receptionStatus: integer("reception_status"),
  responseState: text("response_state"),
  issueDate: text("issue_date"),
  n: integer("n").notNull(),
});

/**
 * In a company's index store (store schema entry 16): each mail sent from the company's reception
 * address as the mail service named it (`message_id`, what its Email Sending events carry) and what
 * it was (`reference`: `<received document>.<reply>` or an issued document's id), for SENT_MAIL_DAYS.
 */
export const sentMails = sqliteTable("sent_mails", {
  messageId: text("message_id").primaryKey(),
  reference: text("reference").notNull(),
  recipient: text("recipient").notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * In a company's index store (store schema entry 17): the amount (an integer scaled by the credited
 * document's currency) each credit note credits of a document of ours (src/domain/invoices/credit-claims.ts).
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
