/**
 * List totals kept by the store itself: per store, one row per distinct value of a
 * list's low-cardinality filter columns with the number `n` of rows holding it. SQLite triggers keep
 * them in the same transaction as every INSERT, UPDATE and DELETE of the counted table, so they can
 * never drift from the rows; a total for filters on those columns is a SUM over a few hundred counter
 * rows instead of a COUNT over the matching documents.
 *
 * Columns may be NULL (a received document's issue date or verification outcome), so counter rows
 * are matched with `IS` (NULL equals NULL) and created when missing, not upserted (a unique index
 * treats NULLs as distinct). `INSERT OR REPLACE` into a counted table deletes the row it replaces
 * without firing the delete trigger (recursive triggers are off): a writer that replaces must DELETE
 * first.
 */
import { sum, type SQL } from "drizzle-orm";
import type { Db } from "../client";
import type { invoiceCounts, receivedCounts } from "./tables";

export interface CounterSpec {
  /** The counted table. */
  table: string;
  /** The counters' table. */
  counters: string;
  /** The counted columns, in the counters' table under the same names. */
  columns: readonly { name: string }[];
}

export const INVOICE_COUNTERS: CounterSpec = {
  table: "invoices",
  counters: "invoice_counts",
  columns: [
    { name: "company_id" },
    { name: "document_type" },
    { name: "status" },
    { name: "issue_date" },
  ],
};

export const RECEIVED_COUNTERS: CounterSpec = {
  table: "received_documents",
  counters: "received_counts",
  columns: [
    { name: "company_id" },
    { name: "document_type" },
    { name: "reception_status" },
    { name: "response_state" },
    { name: "issue_date" },
  ],
};

const match = (spec: CounterSpec, row: "NEW" | "OLD") => spec.columns.map((c) => `${c.name} IS ${row}.${c.name}`).join(" AND ");

function add(spec: CounterSpec, row: "NEW" | "OLD", delta: 1 | -1): string[] {
  const names = spec.columns.map((c) => c.name).join(", ");
  const values = spec.columns.map((c) => `${row}.${c.name}`).join(", ");
  if (delta === -1) return [`UPDATE ${spec.counters} SET n = n - 1 WHERE ${match(spec, row)};`];
  return [
    `INSERT INTO ${spec.counters} (${names}, n) SELECT ${values}, 0 WHERE NOT EXISTS (SELECT 1 FROM ${spec.counters} WHERE ${match(spec, row)});`,
    `UPDATE ${spec.counters} SET n = n + 1 WHERE ${match(spec, row)};`,
  ];
}

/** The triggers that keep a spec's counters (its table and index are in the Drizzle schema, ./tables.ts). */
export function counterTriggers(spec: CounterSpec): string[] {
  const names = spec.columns.map((c) => c.name).join(", ");
  const changed = spec.columns.map((c) => `NEW.${c.name} IS NOT OLD.${c.name}`).join(" OR ");
  const t = spec.counters;
  return [
    `CREATE TRIGGER ${t}_insert AFTER INSERT ON ${spec.table} BEGIN ${add(spec, "NEW", 1).join(" ")} END`,
    `CREATE TRIGGER ${t}_delete AFTER DELETE ON ${spec.table} BEGIN ${add(spec, "OLD", -1).join(" ")} END`,
    `CREATE TRIGGER ${t}_update AFTER UPDATE OF ${names} ON ${spec.table} WHEN ${changed} BEGIN ${[...add(spec, "OLD", -1), ...add(spec, "NEW", 1)].join(" ")} END`,
  ];
}

/** A total from a store's counters: the SUM of `n` over the counter rows matching `condition`. */
export async function sumCounters(db: Db, table: typeof invoiceCounts | typeof receivedCounts, condition: SQL): Promise<number> {
  const [row] = await db.select({ n: sum(table.n).mapWith(Number) }).from(table).where(condition);
  return row?.n ?? 0;
}
