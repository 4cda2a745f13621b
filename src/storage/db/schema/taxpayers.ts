import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Versioned loads of the SII's list of authorised DTE taxpayers. */
export const taxpayerLoads = sqliteTable("taxpayer_loads", {
  id: text("id").primaryKey(),
  source: text("source").notNull(),
  status: text("status", { enum: ["LOADING", "CURRENT", "REPLACED"] }).notNull().default("LOADING"),
  rowsLoaded: integer("rows_loaded").notNull().default(0),
  rowsRejected: integer("rows_rejected").notNull().default(0),
  startedAt: text("started_at").notNull(),
  finishedAt: text("finished_at"),
});

export const taxpayerDirectory = sqliteTable("taxpayer_directory", {
  id: integer("id").primaryKey(),
  loadId: text("load_id").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const taxpayers = sqliteTable(
  "taxpayers",
  {
    loadId: text("load_id").notNull(),
    rut: text("rut").notNull(),
    legalName: text("legal_name").notNull(),
    resolutionNumber: integer("resolution_number").notNull(),
    resolutionDate: text("resolution_date").notNull(),
    exchangeEmail: text("exchange_email"),
    url: text("url"),
  },
  (t) => [primaryKey({ columns: [t.loadId, t.rut] })],
);
