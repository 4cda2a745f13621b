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
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
    deletedAt: text("deleted_at"),
  },
  (t) => [
    index("companies_client_idx").on(t.clientId, t.status, t.createdAt, t.id),
    uniqueIndex("companies_active_tax_id_uq").on(t.clientId, t.country, t.taxId).where(sql`status = 'ACTIVE'`),
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
    state: text("state", { enum: ["IN_PROGRESS", "COMPLETED"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: text("created_at").notNull().default(now),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.key] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

/**
 * Transactional outbox of events (e.g. `ENU`) to be delivered by webhooks. Writers insert here in
 * the same batch as the state change that caused the event; the webhook dispatcher drains it.
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
    uniqueIndex("event_outbox_dedupe_uq").on(t.companyId, t.dedupeKey),
  ],
);
