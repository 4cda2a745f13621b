/**
 * The control plane's tables: in D1 only (drizzle.config.ts; migrations/). Timestamps are ISO 8601
 * UTC strings (`2026-11-22T06:00:00.000Z`); ids are `<prefix>_<ULID>`.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
    /** The issuer block's defaults (JSON, the country's issuerProfileSchema): a document without `issuer` is issued with them. */
    issuerProfile: text("issuer_profile"),
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
