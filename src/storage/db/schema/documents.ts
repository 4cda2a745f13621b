/**
 * The document stores' tables (one SQLite Durable Object per company and partition, and the index
 * stores): never in D1. drizzle.stores.config.ts turns this file, ./shared.ts and
 * src/storage/db/document-store/tables.ts into the stores' schema (src/storage/db/document-store/baseline.ts).
 * Foreign keys to control-plane tables are not declared: those live in D1.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    clientId: text("client_id").notNull(),
    key: text("key").notNull(),
    /** `METHOD path` of the first request. */
    scope: text("scope").notNull(),
    /** SHA-256 of method, path and body. */
    fingerprint: text("fingerprint").notNull(),
    /** ABANDONED: its request failed with an unknown outcome; the next retry of the same request takes it over (src/http/middleware/idempotency.ts). */
    state: text("state", { enum: ["IN_PROGRESS", "COMPLETED", "ABANDONED"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: text("created_at").notNull().default(now),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.key] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

export const INVOICE_STATUSES = ["RECEIVED", "GENERATED", "SIGNED", "SENT", "ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/** The buyer's answer to an accepted factura (33, 34, 43), read from the SII's register of events (src/invoices/buyer-response.ts). */
export const BUYER_STATES = ["PENDING", "ACCEPTED", "CLAIMED", "ACCEPTED_BY_LAW"] as const;
export type BuyerState = (typeof BUYER_STATES)[number];

/**
 * Issued documents. `status` is our pipeline (DECISIONS 17); `fiscal_status` the tax authority's own
 * code. Every change of either is a conditional update that also appends an invoice_events row.
 */
export const invoices = sqliteTable(
  "invoices",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    documentType: integer("document_type").notNull(),
    status: text("status", { enum: INVOICE_STATUSES }).notNull(),
    fiscalStatus: text("fiscal_status"),
    fiscalMessage: text("fiscal_message"),
    folio: integer("folio"),
    cafId: text("caf_id"),
    externalReference: text("external_reference"),
    issueDate: text("issue_date").notNull(),
    recipientRut: text("recipient_rut").notNull(),
    recipientName: text("recipient_name").notNull(),
    currency: text("currency").notNull(),
    /** MntTotal as a decimal string. */
    total: text("total").notNull(),
    /** The validated request body (JSON): the source every pipeline step rebuilds from. */
    body: text("body").notNull(),
    /** Local time YYYY-MM-DDTHH:MM:SS used for TSTED and TmstFirma, fixed when the folio is assigned. */
    stampedAt: text("stamped_at"),
    xmlKey: text("xml_key"),
    envelopeId: text("envelope_id"),
    trackId: text("track_id"),
    /** Referenced document of ours that this note cancels (CodRef 1). */
    cancelsInvoiceId: text("cancels_invoice_id"),
    /** The last pipeline problem, kept while the document waits and retries. */
    lastError: text("last_error"),
    attempts: integer("attempts").notNull().default(0),
    /** Id of the invoice_events row of the last transition (makes "update + history" atomic). */
    lastEventId: text("last_event_id"),
    requestId: text("request_id"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
    /** The buyer's answer: null for documents that take none (not 33/34/43, or not accepted by the SII). */
    buyerState: text("buyer_state", { enum: BUYER_STATES }),
    /** The SII's events on the document (JSON list of { code, description, by_tax_id, at }), as last read. */
    buyerEvents: text("buyer_events"),
    /** The SII's reception time of the document (ISO 8601), which starts the buyer's 8 days. */
    siiReceivedAt: text("sii_received_at"),
    buyerDeadline: text("buyer_deadline"),
    /** When the SII's register was last read for this document. */
    buyerCheckedAt: text("buyer_checked_at"),
    /** When it is next read (null: never again); the store's alarm sends the checks due. */
    buyerCheckAt: text("buyer_check_at"),
    /**
     * The buyer's own replies mailed or uploaded to the company: RespuestaDTE
     * (RecepcionEnvio, ResultadoDTE) and EnvioRecibos entries read onto the document (JSON list,
     * src/invoices/buyer-replies.ts); null until the first.
     */
    buyerReplies: text("buyer_replies"),
    /**
     * The EnvioDTE addressed to the buyer, mailed to its exchange address: JSON
     * { state, email, source, attempts, sent_at, message } (src/invoices/buyer-delivery.ts);
     * null for documents that take none (boletas) or before the SII accepted them.
     */
    buyerDelivery: text("buyer_delivery"),
    /** When the next attempt is due (null: none); the store's alarm sends the attempts due. */
    buyerDeliveryAt: text("buyer_delivery_at"),
    /** The batch that issued it (src/invoices/batches), null for a single POST. */
    batchId: text("batch_id"),
  },
  (t) => [
    index("invoices_company_idx").on(t.companyId, t.createdAt, t.id),
    index("invoices_status_idx").on(t.status, t.updatedAt),
    index("invoices_folio_idx").on(t.companyId, t.documentType, t.folio),
    index("invoices_envelope_idx").on(t.envelopeId),
    // Lookups that must not scan a large company's documents.
    index("invoices_company_reference_idx").on(t.companyId, t.externalReference, t.createdAt, t.id),
    index("invoices_company_folio_only_idx").on(t.companyId, t.folio, t.createdAt, t.id),
    index("invoices_company_issue_date_idx").on(t.companyId, t.issueDate),
    // Filtered lists in their order.
    index("invoices_company_status_idx").on(t.companyId, t.status, t.createdAt, t.id),
    index("invoices_company_type_idx").on(t.companyId, t.documentType, t.createdAt, t.id),
    index("invoices_company_issue_order_idx").on(t.companyId, t.issueDate, t.createdAt, t.id),
    index("invoices_company_type_issue_idx").on(t.companyId, t.documentType, t.issueDate, t.createdAt, t.id),
    // A FAILED document frees its reference: it can be issued again under the same one.
    uniqueIndex("invoices_external_reference_uq").on(t.companyId, t.externalReference).where(sql`external_reference IS NOT NULL AND status <> 'FAILED'`),
    // The buyer-response checks due.
    index("invoices_buyer_check_idx").on(t.buyerCheckAt).where(sql`buyer_check_at IS NOT NULL`),
    index("invoices_buyer_delivery_idx").on(t.buyerDeliveryAt).where(sql`buyer_delivery_at IS NOT NULL`),
    index("invoices_company_buyer_state_idx").on(t.companyId, t.buyerState, t.createdAt, t.id).where(sql`buyer_state IS NOT NULL`),
    index("invoices_batch_idx").on(t.batchId, t.status).where(sql`batch_id IS NOT NULL`),
  ],
);

export const invoiceEvents = sqliteTable(
  "invoice_events",
  {
    id: text("id").primaryKey(),
    invoiceId: text("invoice_id").notNull(),
    status: text("status").notNull(),
    fiscalStatus: text("fiscal_status"),
    message: text("message"),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("invoice_events_invoice_idx").on(t.invoiceId, t.createdAt, t.id)],
);

/** One row per cancelled document: the unique key is what stops a document being cancelled twice. */
export const cancellations = sqliteTable("cancellations", {
  cancelledInvoiceId: text("cancelled_invoice_id").primaryKey(),
  creditNoteId: text("credit_note_id").notNull(),
  createdAt: text("created_at").notNull().default(now),
});

/** Envelopes sent to the tax authority (one upload, one track id, one or more documents). */
export const envelopes = sqliteTable(
  "envelopes",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    /** The country's envelope kind (countries/port.ts EnvelopeKind). */
    kind: text("kind").notNull(),
    xmlKey: text("xml_key").notNull(),
    documentCount: integer("document_count").notNull(),
    status: text("status", { enum: ["PREPARED", "SENT", "DONE"] }).notNull(),
    trackId: text("track_id"),
    siiStatus: text("sii_status"),
    polls: integer("polls").notNull().default(0),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [index("envelopes_status_idx").on(t.status, t.updatedAt)],
);

export const RESPONSE_STATES = ["PENDING", "ACCEPTED", "GOODS_RECEIVED", "ACCEPTED_AND_RECEIVED", "CLAIMED", "ACCEPTED_BY_LAW", "NOT_APPLICABLE"] as const;
export type ResponseState = (typeof RESPONSE_STATES)[number];

/**
 * Documents received from suppliers, keyed by company (never joined across companies).
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
    /** JSON: the file that brought the XML (reception/intake.ts ReceivedFile: name, SetDTE ID, envelope digest, Caratula RUTs); null while only the register knows it. */
    receivedFile: text("received_file"),
    /**
     * When the sweep of reply mails next looks at this document (src/reception/overdue-mails.ts): never
     * later than the next attempt of a mail of it still PENDING, earlier after a change the sweep has
     * not read yet; null when none is PENDING.
     */
    mailDueAt: text("mail_due_at"),
    /** The register of cessions' answer when the document is ceded (JSON { holder_tax_id, annotated_at, collection_tax_id, amount, first_seen_at }); null while it is not (src/reception/cessions.ts). */
    cession: text("cession"),
    /** When the register of cessions was last asked about it. */
    cessionCheckedAt: text("cession_checked_at"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("received_documents_key_uq").on(t.companyId, t.issuerRut, t.documentType, t.folio, t.xmlSha256),
    index("received_documents_company_idx").on(t.companyId, t.createdAt),
    index("received_documents_deadline_idx").on(t.responseState, t.responseDeadline),
    // The list's order with its tie-breaker, alone and under its filters.
    index("received_documents_company_order_idx").on(t.companyId, t.createdAt, t.id),
    index("received_documents_company_type_idx").on(t.companyId, t.documentType, t.createdAt, t.id),
    index("received_documents_company_state_idx").on(t.companyId, t.responseState, t.createdAt, t.id),
    index("received_documents_company_verification_idx").on(t.companyId, t.receptionStatus, t.createdAt, t.id),
    // The documents an inbound message brought (GET /api/reception/messages/{id}).
    index("received_documents_company_message_idx").on(t.companyId, t.messageId),
    // The reply mails to look at.
    index("received_documents_mail_due_idx").on(t.mailDueAt).where(sql`mail_due_at IS NOT NULL`),
    // The received facturas whose cession the cron asks about next.
    index("received_documents_cession_check_idx").on(t.companyId, t.cessionCheckedAt),
  ],
);

export const WEBHOOK_DELIVERY_STATUSES = ["PENDING", "SUCCEEDED", "FAILED"] as const;

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("PENDING"),
    /** Attempts made in all (numbers the attempt log). */
    attempts: integer("attempts").notNull().default(0),
    /** Attempts since the delivery was (re)started: the position in the retry schedule. */
    roundAttempts: integer("round_attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_endpoint_event_uq").on(t.endpointId, t.eventId),
    index("webhook_deliveries_endpoint_idx").on(t.companyId, t.endpointId, t.createdAt),
    /** Retention (30 days): settled deliveries are deleted oldest first (src/webhooks/retention.ts). */
    index("webhook_deliveries_created_idx").on(t.createdAt),
    index("webhook_deliveries_event_idx").on(t.companyId, t.eventId),
    index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt),
  ],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(),
    startedAt: text("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    responseStatus: integer("response_status"),
    /** First 1 KiB of the response body. */
    responseBody: text("response_body"),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt), index("webhook_attempts_endpoint_idx").on(t.companyId, t.endpointId, t.startedAt)],
);

export const CESSION_STATUSES = ["SIGNED", "SENT", "REGISTERED", "REJECTED", "FAILED"] as const;
export type CessionStatus = (typeof CESSION_STATUSES)[number];

/**
 * Cessions of issued documents to a factoring company (src/invoices/cessions), in the store
 * of the document they cede. `status` is ours; `fiscal_status` the register's own code. A document
 * has at most one cession that is not REJECTED or FAILED (the unique index).
 */
export const cessions = sqliteTable(
  "cessions",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    invoiceId: text("invoice_id").notNull(),
    documentType: integer("document_type").notNull(),
    folio: integer("folio").notNull(),
    issueDate: text("issue_date").notNull(),
    total: text("total").notNull(),
    debtorRut: text("debtor_rut").notNull(),
    debtorName: text("debtor_name").notNull(),
    /** JSON: the assignee { tax_id, legal_name, address, email }. */
    assignee: text("assignee").notNull(),
    /** JSON: the cedent as the file names it { tax_id, legal_name, address, email }. */
    cedent: text("cedent").notNull(),
    amount: text("amount").notNull(),
    lastDueDate: text("last_due_date").notNull(),
    debtorEmail: text("debtor_email"),
    /** How the file proves the goods' receipt: the buyer's receipt at the SII or the 8 days passed (the file carries the sworn declaration either way). */
    receiptBasis: text("receipt_basis", { enum: ["BUYER_RECEIPT", "EIGHT_DAYS"] }).notNull(),
    declaration: text("declaration"),
    status: text("status", { enum: CESSION_STATUSES }).notNull(),
    fiscalStatus: text("fiscal_status"),
    fiscalMessage: text("fiscal_message"),
    xmlKey: text("xml_key").notNull(),
    trackId: text("track_id"),
    polls: integer("polls").notNull().default(0),
    lastError: text("last_error"),
    signedAt: text("signed_at").notNull(),
    registeredAt: text("registered_at"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [
    index("cessions_company_idx").on(t.companyId, t.createdAt, t.id),
    index("cessions_invoice_idx").on(t.invoiceId, t.createdAt),
    // The store's sweep of stuck work (a SIGNED or SENT cession whose message was lost).
    index("cessions_status_idx").on(t.status, t.updatedAt),
    uniqueIndex("cessions_live_uq").on(t.invoiceId).where(sql`status NOT IN ('REJECTED', 'FAILED')`),
  ],
);

/** Batches of documents issued in one request, and their rows' results. */
export * from "./batches";
