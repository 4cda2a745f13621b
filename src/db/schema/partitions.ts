/**
 * Issue 16: the partition directory. One row per company and document-store partition (never one
 * per document): which store holds the company's documents of a period. A partition is open until
 * the calendar month (UTC) it opened in ends or its store reaches the size threshold; then the next
 * ordinal opens. At most one partition per company is open (partial unique index). Ordinal 0 is the
 * company's legacy partition: the rows copied from D1 by the data migration.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** MONTH_END and SIZE: rolled over; LEGACY: partition 0, the rows copied from D1 (never open). */
export const PARTITION_CLOSE_REASONS = ["MONTH_END", "SIZE", "LEGACY"] as const;

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

/**
 * Progress of the data migration of the D1 tables that moved into the document stores (one row per
 * table): the last primary key copied, so an interrupted run resumes where it stopped.
 */
export const storeMigration = sqliteTable("store_migration", {
  tableName: text("table_name").primaryKey(),
  cursor: text("cursor").notNull().default(""),
  copied: integer("copied").notNull().default(0),
  /** Rows left in D1 because they belong to no company (inbound messages never matched to one, history rows of a vanished document). */
  skipped: integer("skipped").notNull().default(0),
  /** The walk reached the end (migration 0015). For a table of a legacy group it is not yet finished: see store_migration_dirty. */
  copiedAt: text("copied_at"),
  /** Partition 0 of the table lives in the stores from now on: D1 refuses writes to it (migration 0015's triggers). */
  finishedAt: text("finished_at"),
});

/**
 * Rows of a legacy group's tables written in D1 since their first copy (migration 0015's triggers;
 * a new `seq` at each write): the data migration copies them again, and finishes the group only when
 * none is left.
 */
export const storeMigrationDirty = sqliteTable("store_migration_dirty", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  tableName: text("table_name").notNull(),
  rowKey: text("row_key").notNull(),
  companyId: text("company_id"),
}, (t) => [uniqueIndex("store_migration_dirty_row_uq").on(t.tableName, t.rowKey)]);
