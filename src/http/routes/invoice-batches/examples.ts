/**
 * Examples of the batch operations (checked by test/api/examples.test.ts): two facturas of the
 * reference's example in one request, the second refused (a unit price below zero).
 */
import { EX, examplePage } from "../../openapi/example-ids";
import { invoiceCreateExample } from "../invoices/examples";
import { template } from "../../../invoices/batches/csv/layout";

const BATCH = "bat_p1_01M8EK6CBGR5RW2M0WKZC8N4V3";

export const batchCreateExample = {
  rows: [
    invoiceCreateExample,
    { ...invoiceCreateExample, external_reference: "ERP-OV-2026-001043", items: [{ ...invoiceCreateExample.items[0], unit_price: -1 }] },
  ],
};

export const batchUploadExample = { file: "(binary: boletas_2026-12-05.csv, the dte-batch-csv/1 layout)", decimal_separator: "," };

const counts = (accepted: number, received: number, refused: number) => ({
  RECEIVED: received, GENERATED: 0, SIGNED: 0, SENT: 0, ACCEPTED: accepted, ACCEPTED_WITH_OBJECTIONS: 0, REJECTED: 0, FAILED: 0, REFUSED: refused,
});

const summary = {
  id: BATCH,
  company_id: EX.company,
  source: "JSON" as const,
  file_name: null,
  layout: null,
  rows: 2,
  documents: 1,
  refused: 1,
  created_at: "2026-11-27T13:30:00.000Z",
};

const refusedRow = {
  row: 1,
  invoice_id: null,
  external_reference: "ERP-OV-2026-001043",
  status: "REFUSED",
  error: { code: "VALIDATION_FAILED", message: "rows[1].items[0].unit_price: must be at least 0", details: [{ field: "rows[1].items[0].unit_price", message: "Too small: expected number to be >=0" }] },
};

const resultsPage = { current_page: 1, per_page: 100, total: 2, last_page: 1 };

/** As the POST answers it: every row, the good one RECEIVED. */
export const batchTakenExample = {
  ...summary,
  status: "PROCESSING" as const,
  counts: counts(0, 1, 1),
  updated_at: summary.created_at,
  completed_at: null,
  results: [{ row: 0, invoice_id: EX.invoice, external_reference: invoiceCreateExample.external_reference, status: "RECEIVED", error: null }, refusedRow],
  results_page: resultsPage,
};

/** Once every row is final. */
export const batchCompletedExample = {
  ...summary,
  status: "COMPLETED" as const,
  counts: counts(1, 0, 1),
  updated_at: "2026-11-27T13:30:41.000Z",
  completed_at: "2026-11-27T13:30:41.000Z",
  results: [{ row: 0, invoice_id: EX.invoice, external_reference: invoiceCreateExample.external_reference, status: "ACCEPTED", error: null }, refusedRow],
  results_page: resultsPage,
};

const { results: _r, results_page: _p, ...completedSummary } = batchCompletedExample;
export const batchPageExample = examplePage([completedSummary]);

/** The template as served (`;` and decimal comma, Excel in Chile). */
export const csvTemplateExample = template(";", ",");
