/**
 * Batches of documents issued in one request (src/invoices/batches): a document-store table,
 * in the store of the partition its id names, beside the documents it created. Every row of the
 * request has its result: the document it created or the error that refused it.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const BATCH_SOURCES = ["JSON", "CSV"] as const;
export const BATCH_STATUSES = ["PROCESSING", "COMPLETED"] as const;

export const invoiceBatches = sqliteTable(
  "invoice_batches",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull(),
    source: text("source", { enum: BATCH_SOURCES }).notNull(),
    /** COMPLETED once every document it created is final (the trigger of src/storage/db/document-store/batch-triggers.ts). */
    status: text("status", { enum: BATCH_STATUSES }).notNull(),
    /** Rows of the request; `refused` of them created no document, `documents` did. */
    rows: integer("rows").notNull(),
    refused: integer("refused").notNull(),
    documents: integer("documents").notNull(),
    /** Documents of the batch in a final status, kept by the trigger. */
    finalDocuments: integer("final_documents").notNull().default(0),
    /** The uploaded file's name and its column layout (CSV). */
    fileName: text("file_name"),
    layout: text("layout"),
    requestId: text("request_id"),
    createdAt: text("created_at").notNull().default(now),
    updatedAt: text("updated_at").notNull().default(now),
    completedAt: text("completed_at"),
  },
  (t) => [index("invoice_batches_company_idx").on(t.companyId, t.createdAt, t.id)],
);

/** One row of a batch: the document it created, or its error (JSON: code, message, details). */
export const invoiceBatchRows = sqliteTable(
  "invoice_batch_rows",
  {
    batchId: text("batch_id").notNull(),
    row: integer("row").notNull(),
    invoiceId: text("invoice_id"),
    externalReference: text("external_reference"),
    error: text("error"),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.row] })],
);
