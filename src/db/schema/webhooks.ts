/**
 * Webhooks (issue 11): endpoints a company registers, one delivery per endpoint and event, one
 * attempt row per HTTP call. Deliveries and attempts grow with documents: they are keyed by
 * company_id and never joined across companies, so they can move to per-company storage.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    url: text("url").notNull(),
    description: text("description"),
    /** JSON array of event types, or ["*"]. */
    events: text("events").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** Why it was disabled: by the client, or after failing continuously for 5 days. */
    disabledReason: text("disabled_reason"),
    /** AES-GCM sealed `whsec_…` (base64), bound to the endpoint id. */
    secretEnc: text("secret_enc").notNull(),
    /** The secret before the last rotation; it keeps signing beside the new one until `previousUntil`. */
    previousSecretEnc: text("previous_secret_enc"),
    previousUntil: text("previous_until"),
    /** First failed attempt of the current run of failures (null once one succeeds). */
    failingSince: text("failing_since"),
    status: text("status", { enum: ["ACTIVE", "DELETED"] }).notNull().default("ACTIVE"),
    /** The company's mode, copied at creation: deliveries say `livemode` without reading the company. */
    livemode: integer("livemode", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
  },
  (t) => [index("webhook_endpoints_company_idx").on(t.companyId, t.status, t.createdAt)],
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
