/**
 * Webhook endpoints a company registers (D1). Their deliveries and attempts grow with documents and
 * live in the company's document stores (./documents.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
