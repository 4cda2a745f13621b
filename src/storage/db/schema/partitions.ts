/**
 * The partition directory. One row per company and document-store partition (never one per
 * document): which store holds the company's documents of a period. A partition is open until the
 * calendar month (UTC) it opened in ends or its store reaches the size threshold; then the next
 * ordinal opens (the first is 1). At most one partition per company is open (partial unique index).
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Why a partition closed: its month ended, or its store reached the size threshold. */
export const PARTITION_CLOSE_REASONS = ["MONTH_END", "SIZE"] as const;

export const documentPartitions = sqliteTable(
  "document_partitions",
  {
    companyId: text("company_id").notNull(),
    ordinal: integer("ordinal").notNull(),
    /** The Durable Object name of its store: `<companyId>:<ordinal>`. */
    storeName: text("store_name").notNull(),
    /** The calendar month (UTC) it was opened for, `YYYY-MM`. */
    period: text("period").notNull(),
    openedAt: text("opened_at").notNull(),
    closedAt: text("closed_at"),
    closedReason: text("closed_reason", { enum: PARTITION_CLOSE_REASONS }),
    /** The store's size in bytes when last reported (at close, by the size roll-over). */
    sizeBytes: integer("size_bytes").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.companyId, t.ordinal] }),
    uniqueIndex("document_partitions_open_uq").on(t.companyId).where(sql`closed_at IS NULL`),
    index("document_partitions_open_idx").on(t.closedAt),
  ],
);

export type DocumentPartition = typeof documentPartitions.$inferSelect;
