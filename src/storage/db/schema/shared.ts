/**
 * Tables in D1 and in every document store alike (both drizzle configs): the event outbox (the
 * control plane's events in D1, a store's own events in the store) and the log of inbound messages
 * (a company's in its stores; one that matched no company in D1).
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

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
    /** The e-mail's Subject (decoded, at most 500 characters); null for an upload. */
    subject: text("subject"),
    /** Each attachment of an e-mail, or the uploaded file: name, type, size and how it was read (JSON). */
    attachments: text("attachments", { mode: "json" }).$type<InboundAttachment[]>(),
  },
  (t) => [
    index("inbound_messages_company_idx").on(t.companyId, t.createdAt),
    // The message log's order with its tie-breaker, alone and under its outcome filter (GET /api/reception/messages).
    index("inbound_messages_company_order_idx").on(t.companyId, t.createdAt, t.id),
    index("inbound_messages_company_outcome_idx").on(t.companyId, t.outcome, t.createdAt, t.id),
  ],
);
