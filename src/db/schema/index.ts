import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Timestamps are ISO 8601 UTC strings (`2026-11-22T06:00:00.000Z`); ids are `<prefix>_<ULID>`. */
const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const clients = sqliteTable("clients", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull().default(now),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull().references(() => clients.id),
    email: text("email").notNull(),
    name: text("name").notNull(),
    status: text("status", { enum: ["ACTIVE", "REVOKED"] }).notNull().default("ACTIVE"),
    createdAt: text("created_at").notNull().default(now),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("users_client_email_uq").on(t.clientId, t.email)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull().references(() => clients.id),
    userId: text("user_id").references(() => users.id),
    name: text("name").notNull(),
    role: text("role", { enum: ["OWNER", "ADMIN", "MEMBER"] }).notNull(),
    /** First characters of the key, shown in lists so a user can tell keys apart. */
    prefix: text("prefix").notNull(),
    /** HMAC-SHA256(API_KEY_PEPPER, key), hex. The key itself is never stored. */
    keyHash: text("key_hash").notNull(),
    /** Test (false, `dte_test_…`: the built-in SII simulator) or live (true, `dte_live_…`: SII_MODE). */
    livemode: integer("livemode", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull().default(now),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_uq").on(t.keyHash), index("api_keys_client_idx").on(t.clientId, t.id)],
);

/** Companies a MEMBER key may reach. OWNER and ADMIN keys reach every company of their client. */
export const apiKeyCompanies = sqliteTable(
  "api_key_companies",
  {
    apiKeyId: text("api_key_id").notNull().references(() => apiKeys.id),
    companyId: text("company_id").notNull().references(() => companies.id),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.apiKeyId, t.companyId] })],
);

/** A company's rate tier: which rate limiting bindings count its requests (src/http/rate-limits.ts). */
export const RATE_TIERS = ["STANDARD", "HIGH_VOLUME"] as const;

export const companies = sqliteTable(
  "companies",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id").notNull().references(() => clients.id),
    legalName: text("legal_name").notNull(),
    /** legal_name without case or accents, for the contains filter ("nunoa" finds "Ñuñoa"). */
    legalNameSearch: text("legal_name_search").notNull().default(""),
    taxIdCode: text("tax_id_code").notNull(),
    /** Canonical form: Chile `76086428-5` (no dots, uppercase K); elsewhere digits only. */
    taxId: text("tax_id").notNull(),
    country: text("country").notNull(),
    startActivitiesDate: text("start_activities_date"),
    status: text("status", { enum: ["ACTIVE", "DELETED"] }).notNull().default("ACTIVE"),
    /** The mode of the key that created it; everything below the company (certificates, CAFs, documents, received documents, webhooks) inherits it. */
    livemode: integer("livemode", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
    deletedAt: text("deleted_at"),
    /** Which rate limits count its requests (src/http/rate-limits.ts); set by an operator (`npm run companies:tier`), never through the API. */
    rateTier: text("rate_tier", { enum: RATE_TIERS }).notNull().default("STANDARD"),
  },
  (t) => [
    index("companies_client_idx").on(t.clientId, t.livemode, t.status, t.createdAt, t.id),
    uniqueIndex("companies_active_tax_id_uq").on(t.clientId, t.livemode, t.country, t.taxId).where(sql`status = 'ACTIVE'`),
  ],
);

export const companySettings = sqliteTable("company_settings", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().unique().references(() => companies.id),
  decimalPlaces: integer("decimal_places").notNull().default(0),
  thousandSeparator: text("thousand_separator", { enum: [".", ","] }).notNull().default("."),
  decimalSeparator: text("decimal_separator", { enum: [".", ","] }).notNull().default(","),
  language: text("language").notNull().default("es-CL"),
  timeZone: text("time_zone").notNull().default("America/Santiago"),
  logoKey: text("logo_key"),
  logoUrl: text("logo_url"),
  /** The SII resolution authorising the company to issue DTE (envelope NroResol/FchResol, PDF legend). */
  siiResolutionNumber: integer("sii_resolution_number"),
  siiResolutionDate: text("sii_resolution_date"),
  updatedAt: text("updated_at").notNull().default(now),
});

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

/**
 * The events of a company (`ENU`, `invoice.accepted`, `certificate.expiring`…; catalogue in
 * src/webhooks/catalog.ts): a transactional outbox. Writers insert here in the same batch as the state
 * change that caused the event; the webhook fan-out turns each row into one delivery per subscribed
 * endpoint and stamps `dispatched_at`. `payload` is the event's `data` source (a snapshot).
 */
export const eventOutbox = sqliteTable(
  "event_outbox",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    type: text("type").notNull(),
    /** Deduplication key: the same condition is recorded once (e.g. `ENU:33:low:caf_x`). */
    dedupeKey: text("dedupe_key"),
    payload: text("payload").notNull(),
    createdAt: text("created_at").notNull().default(now),
    dispatchedAt: text("dispatched_at"),
  },
  (t) => [
    index("event_outbox_pending_idx").on(t.dispatchedAt, t.createdAt),
    index("event_outbox_company_pending_idx").on(t.companyId, t.dispatchedAt, t.createdAt),
    uniqueIndex("event_outbox_dedupe_uq").on(t.companyId, t.dedupeKey),
    /** Retention (30 days): the cron deletes fanned-out events oldest first (src/webhooks/retention.ts). */
    index("event_outbox_created_idx").on(t.createdAt),
  ],
);

/**
 * Signing certificates (.pfx). The file and its password are encrypted at rest (AES-GCM, MASTER_KEY):
 * the file in R2 (`pfxKey`), the password here. Key material is never returned by the API.
 */
export const certificates = sqliteTable(
  "certificates",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull().references(() => companies.id),
    subjectName: text("subject_name"),
    holderRut: text("holder_rut"),
    issuerName: text("issuer_name"),
    serialNumber: text("serial_number").notNull(),
    fingerprintSha1: text("fingerprint_sha1").notNull(),
    validFrom: text("valid_from").notNull(),
    validTo: text("valid_to").notNull(),
    pfxKey: text("pfx_key").notNull(),
    passwordEnc: text("password_enc").notNull(),
    active: integer("active", { mode: "boolean" }).notNull().default(false),
    status: text("status", { enum: ["STORED", "DELETED"] }).notNull().default("STORED"),
    createdAt: text("created_at").notNull().default(now),
    deletedAt: text("deleted_at"),
  },
  (t) => [
    index("certificates_company_idx").on(t.companyId, t.status, t.createdAt),
    uniqueIndex("certificates_fingerprint_uq").on(t.companyId, t.fingerprintSha1).where(sql`status = 'STORED'`),
  ],
);

/**
 * Folio ranges (CAF) as loaded: a read model for listing. The folio allocator Durable Object of the
 * company and document type is the only writer of folio usage.
 */
export const cafs = sqliteTable(
  "cafs",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull().references(() => companies.id),
    documentType: integer("document_type").notNull(),
    folioFrom: integer("folio_from").notNull(),
    folioTo: integer("folio_to").notNull(),
    authorizedOn: text("authorized_on").notNull(),
    expiresOn: text("expires_on"),
    idk: integer("idk").notNull(),
    environment: text("environment").notNull(),
    source: text("source", { enum: ["UPLOAD", "AUTHORITY"] }).notNull(),
    fileKey: text("file_key").notNull(),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [
    index("cafs_company_type_idx").on(t.companyId, t.documentType, t.folioFrom),
    uniqueIndex("cafs_range_uq").on(t.companyId, t.documentType, t.folioFrom, t.folioTo),
  ],
);

/** The simulated SII's own record of the CAFs it granted (simulator mode only). */
export const simCafGrants = sqliteTable(
  "sim_caf_grants",
  {
    id: text("id").primaryKey(),
    rut: text("rut").notNull(),
    documentType: integer("document_type").notNull(),
    folioFrom: integer("folio_from").notNull(),
    folioTo: integer("folio_to").notNull(),
    authorizedOn: text("authorized_on").notNull(),
    createdAt: text("created_at").notNull().default(now),
  },
  (t) => [index("sim_caf_grants_idx").on(t.rut, t.documentType, t.folioFrom)],
);

export const INVOICE_STATUSES = ["RECEIVED", "GENERATED", "SIGNED", "SENT", "ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/** The buyer's answer to an accepted factura (33, 34, 43), read from the SII's register of events (src/domain/invoices/buyer-response.ts). */
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
    companyId: text("company_id").notNull().references(() => companies.id),
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
    /** The buyer's answer (migration 0022): null for documents that take none (not 33/34/43, or not accepted by the SII). */
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
     * The buyer's own replies mailed or uploaded to the company (migration 0023): RespuestaDTE
     * (RecepcionEnvio, ResultadoDTE) and EnvioRecibos entries read onto the document (JSON list,
     * src/domain/invoices/buyer-replies.ts); null until the first.
     */
    buyerReplies: text("buyer_replies"),
    /**
     * The EnvioDTE addressed to the buyer, mailed to its exchange address (migration 0024): JSON
     * { state, email, source, attempts, sent_at, message } (src/domain/invoices/buyer-delivery.ts);
     * null for documents that take none (boletas) or before the SII accepted them.
     */
    buyerDelivery: text("buyer_delivery"),
    /** When the next attempt is due (null: none); the store's alarm sends the attempts due. */
    buyerDeliveryAt: text("buyer_delivery_at"),
  },
  (t) => [
    index("invoices_company_idx").on(t.companyId, t.createdAt, t.id),
    index("invoices_status_idx").on(t.status, t.updatedAt),
    index("invoices_folio_idx").on(t.companyId, t.documentType, t.folio),
    index("invoices_envelope_idx").on(t.envelopeId),
    // Lookups that must not scan a large company's documents (migration 0014, issue 16 item 4).
    index("invoices_company_reference_idx").on(t.companyId, t.externalReference, t.createdAt, t.id),
    index("invoices_company_folio_only_idx").on(t.companyId, t.folio, t.createdAt, t.id),
    index("invoices_company_issue_date_idx").on(t.companyId, t.issueDate),
    // Filtered lists in their order (migration 0018, issue 16 item 4).
    index("invoices_company_status_idx").on(t.companyId, t.status, t.createdAt, t.id),
    index("invoices_company_type_idx").on(t.companyId, t.documentType, t.createdAt, t.id),
    index("invoices_company_issue_order_idx").on(t.companyId, t.issueDate, t.createdAt, t.id),
    index("invoices_company_type_issue_idx").on(t.companyId, t.documentType, t.issueDate, t.createdAt, t.id),
    // A FAILED document frees its reference (issue 18): it can be issued again under the same one.
    uniqueIndex("invoices_external_reference_uq").on(t.companyId, t.externalReference).where(sql`external_reference IS NOT NULL AND status <> 'FAILED'`),
    // The buyer-response checks due (migration 0022).
    index("invoices_buyer_check_idx").on(t.buyerCheckAt).where(sql`buyer_check_at IS NOT NULL`),
    index("invoices_buyer_delivery_idx").on(t.buyerDeliveryAt).where(sql`buyer_delivery_at IS NOT NULL`),
    index("invoices_company_buyer_state_idx").on(t.companyId, t.buyerState, t.createdAt, t.id).where(sql`buyer_state IS NOT NULL`),
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
    kind: text("kind", { enum: ["EnvioDTE", "EnvioBOLETA"] }).notNull(),
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

/** Tables of the built-in SII simulator (sim_*). */
export * from "./simulator";
export * from "./reception";

/** Webhook endpoints, deliveries and attempts. */
export * from "./webhooks";

/** Directory of authorised DTE taxpayers (versioned loads). */
export * from "./taxpayers";

/** Master key rotation progress and dead-lettered queue messages. */
export * from "./operations";

/** The partition directory of the per-company document stores (issue 16). */
export * from "./partitions";
