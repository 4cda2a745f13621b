/**
 * The public shape of a batch: what the POST answers (every row), what GET answers (a page of rows)
 * and what the `batch.completed` event carries.
 */
import { z } from "@hono/zod-openapi";
import { BATCH_SOURCES, BATCH_STATUSES, INVOICE_STATUSES, type InvoiceStatus } from "../../storage/db/schema";
import { ERROR_CODES, type ErrorCode } from "../../lib/errors";
import type { BatchRow, RowPage } from "./store";

const COUNT_KEYS = [...INVOICE_STATUSES, "REFUSED"] as const;

export const BatchCountsSchema = z
  .object(Object.fromEntries(COUNT_KEYS.map((k) => [k, z.number().int().min(0)])) as Record<(typeof COUNT_KEYS)[number], z.ZodNumber>)
  .openapi("BatchCounts", { description: "Rows per state: the documents' statuses, and REFUSED for rows that created no document." });

export const BatchRowErrorSchema = z
  .object({
    code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    details: z.array(z.object({ field: z.string().openapi({ example: "rows[17].items[0].unit_price" }), message: z.string() })),
  })
  .openapi("BatchRowError", { description: "The error the single POST would have answered for this row, its field paths prefixed with the row." });

export const BatchRowSchema = z
  .object({
    row: z.number().int().min(0).openapi({ description: "The row's position in the request (0-based): the JSON array's index, or the CSV's document in file order." }),
    invoice_id: z.string().nullable().openapi({ description: "The document the row created; null when it was refused." }),
    external_reference: z.string().nullable(),
    status: z.enum([...INVOICE_STATUSES, "REFUSED"] as [string, ...string[]]).openapi({ description: "The document's current status, or REFUSED." }),
    error: BatchRowErrorSchema.nullable(),
    lines: z.array(z.number().int()).optional().openapi({ description: "CSV: the file's lines (1 is the header) that made this row." }),
  })
  .openapi("BatchRow");

const BatchFields = {
  id: z.string().openapi({ example: "bat_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E" }),
  company_id: z.string(),
  source: z.enum(BATCH_SOURCES),
  status: z.enum(BATCH_STATUSES).openapi({ description: "COMPLETED once every row is final: ACCEPTED, ACCEPTED_WITH_OBJECTIONS, REJECTED, FAILED or REFUSED." }),
  file_name: z.string().nullable(),
  layout: z.string().nullable().openapi({ description: "CSV: the column layout the file declared, e.g. dte-batch-csv/1." }),
  rows: z.number().int(),
  documents: z.number().int().openapi({ description: "Rows that created a document." }),
  refused: z.number().int(),
  counts: BatchCountsSchema,
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
};

export const BatchSummarySchema = z.object(BatchFields).openapi("BatchSummary");

export const BatchSchema = z
  .object({
    ...BatchFields,
    results: z.array(BatchRowSchema).openapi({ description: "Per row: the document it created or its error (POST: every row; GET: the page asked for)." }),
    results_page: z.object({ current_page: z.number().int().min(1), per_page: z.number().int().min(1), total: z.number().int().min(0), last_page: z.number().int().min(1) }),
  })
  .openapi("Batch");

export const BatchCompletedDataSchema = z
  .object({
    batch_id: z.string(),
    status: z.literal("COMPLETED"),
    source: z.enum(BATCH_SOURCES),
    rows: z.number().int(),
    refused: z.number().int(),
    documents: z.number().int(),
    accepted: z.number().int(),
    accepted_with_objections: z.number().int(),
    rejected: z.number().int(),
    failed: z.number().int(),
    created_at: z.string(),
    completed_at: z.string(),
  })
  .openapi("BatchCompletedEventData");

export function batchSummary(b: BatchRow, counts: Partial<Record<InvoiceStatus, number>>) {
  const all = Object.fromEntries(COUNT_KEYS.map((k) => [k, k === "REFUSED" ? b.refused : (counts[k as InvoiceStatus] ?? 0)])) as Record<(typeof COUNT_KEYS)[number], number>;
  return {
    id: b.id, company_id: b.companyId, source: b.source, status: b.status, file_name: b.fileName, layout: b.layout, rows: b.rows, documents: b.documents, refused: b.refused,
    counts: all, created_at: b.createdAt, updated_at: b.updatedAt, completed_at: b.completedAt,
  };
}

export function batchView(b: BatchRow, counts: Partial<Record<InvoiceStatus, number>>, page: RowPage, p: { page: number; perPage: number }) {
  const results = page.rows.map((r) => {
    const stored = r.error ? (JSON.parse(r.error) as { code?: ErrorCode; message?: string; details?: { field: string; message: string }[]; lines?: number[] }) : {};
    const error = stored.code ? { code: stored.code, message: stored.message ?? "", details: stored.details ?? [] } : null;
    return { row: r.row, invoice_id: r.invoiceId, external_reference: r.externalReference, status: r.invoiceId ? (r.status ?? "RECEIVED") : "REFUSED", error, ...(stored.lines ? { lines: stored.lines } : {}) };
  });
  return { ...batchSummary(b, counts), results, results_page: { current_page: p.page, per_page: p.perPage, total: page.total, last_page: Math.max(1, Math.ceil(page.total / p.perPage)) } };
}
