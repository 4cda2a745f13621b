import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const RESPONSE_STATES = ["PENDING", "ACCEPTED", "GOODS_RECEIVED", "ACCEPTED_AND_RECEIVED", "CLAIMED", "ACCEPTED_BY_LAW", "NOT_APPLICABLE"] as const;
export type ResponseState = (typeof RESPONSE_STATES)[number];

/**
 * Documents received from suppliers (issue 12), keyed by company (never joined across companies).
 * The file that brought a DTE is kept in R2 at `xml_key`, the DTE's own XML (its verified canonical
 * form) at a key of its `xml_sha256` (reception/intake.ts dteKey); a row without `xml_key` is known
 * from the SII's register only.
 */
export const receivedDocuments = sqliteTable(
  "received_documents",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    issuerRut: text("issuer_rut").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    issueDate: text("issue_date"),
    total: text("total"),
    recipientRut: text("recipient_rut"),
    channel: text("channel", { enum: ["UPLOAD", "EMAIL", "SII"] }).notNull(),
    messageId: text("message_id"),
    xmlKey: text("xml_key"),
    xmlSha256: text("xml_sha256"),
    /** EstadoRecepDTE: 0 OK, 1 signature, 2 issuer RUT, 3 recipient RUT, 4 repeated, 99 other; null until the XML arrives. */
    receptionStatus: integer("reception_status"),
    /** JSON: the checks, each { name, ok, message }. */
    checks: text("checks"),
    /** JSON: issuer/recipient names, amounts, lines read from the DTE. */
    summary: text("summary"),
    duplicate: integer("duplicate", { mode: "boolean" }).notNull().default(false),
    siiReceivedAt: text("sii_received_at"),
    responseDeadline: text("response_deadline"),
    responseState: text("response_state", { enum: RESPONSE_STATES }).notNull().default("PENDING"),
    /** JSON: response history, each { action, at, sii_code, sii_message, outcome, files }. */
    responses: text("responses").notNull().default("[]"),
    /** JSON: the file that brought the XML (reception/intake.ts ReceivedFile: name, SetDTE ID, envelope digest, Caratula RUTs); null before migration 0025 and while only the register knows it. */
    receivedFile: text("received_file"),
    /**
     * When the sweep of reply mails next looks at this document (src/reception/overdue-mails.ts): never
     * later than the next attempt of a mail of it still PENDING, earlier after a change the sweep has
     * not read yet; null when none is PENDING. Migration 0026.
     */
    mailDueAt: text("mail_due_at"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("received_documents_key_uq").on(t.companyId, t.issuerRut, t.documentType, t.folio, t.xmlSha256),
    index("received_documents_company_idx").on(t.companyId, t.createdAt),
    index("received_documents_deadline_idx").on(t.responseState, t.responseDeadline),
    // The list's order with its tie-breaker, alone and under its filters (migration 0018, issue 16 item 4).
    index("received_documents_company_order_idx").on(t.companyId, t.createdAt, t.id),
    index("received_documents_company_type_idx").on(t.companyId, t.documentType, t.createdAt, t.id),
    index("received_documents_company_state_idx").on(t.companyId, t.responseState, t.createdAt, t.id),
    index("received_documents_company_verification_idx").on(t.companyId, t.receptionStatus, t.createdAt, t.id),
    // The documents an inbound message brought (GET /api/reception/messages/{id}; migration 0020).
    index("received_documents_company_message_idx").on(t.companyId, t.messageId),
    // The reply mails to look at (migration 0026).
    index("received_documents_mail_due_idx").on(t.mailDueAt).where(sql`${t.mailDueAt} IS NOT NULL`),
  ],
);

/** How an attachment was read: XML: as an EnvioDTE or DTE; ZIP: its XML files; IGNORED: neither XML nor zip (a PDF, an image); OVER_LIMIT: past the attachments read per message. */
export const ATTACHMENT_READS = ["XML", "ZIP", "IGNORED", "OVER_LIMIT"] as const;

/** An attachment of an inbound message as recorded: what the bookkeeper sees of what the supplier sent. */
export interface InboundAttachment {
  /** The file name as sent (display only, never a storage key), at most 255 characters; null when it had none. */
  name: string | null;
  contentType: string | null;
  size: number;
  readAs: (typeof ATTACHMENT_READS)[number];
}

/** Every inbound message (upload, e-mail) with its outcome, including the ones that carried nothing. */
export const inboundMessages = sqliteTable(
  "inbound_messages",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id"),
    channel: text("channel").notNull(),
    sender: text("sender"),
    recipient: text("recipient"),
    size: integer("size").notNull(),
    sha256: text("sha256"),
    outcome: text("outcome").notNull(),
    detail: text("detail"),
    documents: integer("documents").notNull().default(0),
    createdAt: text("created_at").notNull().default(now),
    /** The e-mail's Subject (decoded, at most 500 characters); null for an upload. Migration 0020, store schema 9. */
    subject: text("subject"),
    /** Each attachment of an e-mail, or the uploaded file: name, type, size and how it was read (JSON). Migration 0021, store schema 10; null before. */
    attachments: text("attachments", { mode: "json" }).$type<InboundAttachment[]>(),
  },
  (t) => [
    index("inbound_messages_company_idx").on(t.companyId, t.createdAt),
    // The message log's order with its tie-breaker, alone and under its outcome filter (GET /api/reception/messages).
    index("inbound_messages_company_order_idx").on(t.companyId, t.createdAt, t.id),
    index("inbound_messages_company_outcome_idx").on(t.companyId, t.outcome, t.createdAt, t.id),
  ],
);

/** The per-company token of its reception e-mail address dte+<token>@<RECEPTION_DOMAIN>, and its register polling mark. */
export const receptionAddresses = sqliteTable(
  "reception_addresses",
  {
    companyId: text("company_id").primaryKey(),
    token: text("token").notNull(),
    /** Last time the cron asked the SII's register for this company's received documents. */
    polledAt: text("polled_at"),
  },
  (t) => [uniqueIndex("reception_addresses_token_uq").on(t.token)],
);
