/**
 * A batch's rows as the intake sees them: each row is a document's body (a JSON array's item, or the
 * lines of a CSV file that share a document key), or the error that already refused it (its schema,
 * its CSV lines). A row's error is the single POST's error envelope with every field path prefixed by
 * the row: `rows[17].items[0].unit_price`.
 */
import type { DocumentBody } from "../../countries/port";
import { AppError, type ErrorCode, type ErrorDetail } from "../../lib/errors";

/** The most documents one batch may hold. */
export const MAX_BATCH_ROWS = 1000;

export interface RowError {
  code: ErrorCode;
  message: string;
  details: ErrorDetail[];
}

/** Where a row came from: the CSV lines (1-based, the header is line 1) that made it. */
export interface RowOrigin {
  lines?: number[];
}

export type RowInput = ({ ok: true; body: DocumentBody } | { ok: false; error: RowError }) & RowOrigin;

/** `rows[i]` or `rows[i].<field>`. */
export function rowField(i: number, field: string): string {
  return field === "(body)" || field === "" ? `rows[${i}]` : `rows[${i}].${field}`;
}

/** An error of row `i` in the envelope's shape, its fields prefixed with the row. */
export function rowError(i: number, e: AppError | RowError): RowError {
  const details = e.details.length > 0 ? e.details : [{ field: "(body)", message: e.message }];
  return { code: e.code, message: e.message, details: details.map((d) => ({ field: rowField(i, d.field), message: d.message })) };
}

/** Whether a failure refuses the row (an AppError, as the single POST would answer it) rather than the request. */
export function isRowRefusal(e: unknown): e is AppError {
  return e instanceof AppError;
}
