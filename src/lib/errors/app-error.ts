import { ERROR_CODES, type ErrorCode } from "./codes";

export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * The one error class of the service: a code from the error table, a message for people and, where
 * it helps, per-field details and extra response headers (e.g. Allow, Retry-After). Domain verbs,
 * middleware and routes throw it; the HTTP layer turns it into the error envelope in one place.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "AppError";
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}
