import { counterTriggers, INVOICE_COUNTERS, RECEIVED_COUNTERS } from "./counters";
import { STORE_TABLES } from "./baseline";
import { BATCH_TRIGGERS } from "./batch-triggers";

/**
 * The SQLite schema of a document store (one Durable Object per company and partition, and the
 * index stores), applied whole when a store is first used: the tables and indexes of the Drizzle
 * schema (./baseline.ts, generated from it by `npm run db:generate:stores`) and the triggers that keep
 * the list counters (./counters.ts). One baseline: until the first release a schema change edits the
 * Drizzle tables and regenerates it.
 */
export const STORE_SCHEMA: readonly string[] = [...STORE_TABLES, ...counterTriggers(INVOICE_COUNTERS), ...counterTriggers(RECEIVED_COUNTERS), ...BATCH_TRIGGERS];

/** One SQL statement sent to a store: positional `?` parameters; rows as objects or as arrays (Drizzle's "values"). */
export interface StoreStatement {
  sql: string;
  params: unknown[];
  rows: "objects" | "arrays";
}

/** What a store answers for one statement (the fields of a D1 result the Drizzle D1 driver reads), plus the store's size. */
export interface StoreResult {
  rows: unknown[];
  columns: string[];
  changes: number;
  lastRowId: number;
  rowsRead: number;
  rowsWritten: number;
}

export interface StoreAnswer {
  results: StoreResult[];
  /** The store's database size in bytes after the statements (drives the size roll-over). */
  size: number;
}
