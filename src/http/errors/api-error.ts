import { ERROR_CODES, type ErrorCode } from "./codes";

export interface ErrorDetail {
  field: string;
  message: string;
}

/** Thrown anywhere in request handling; onError turns it into the error envelope. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = [], headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    request_id: string;
    details: ErrorDetail[];
  };
}

export function errorBody(code: ErrorCode, message: string, requestId: string, details: ErrorDetail[] = []): ErrorBody {
  return { error: { code, message, request_id: requestId, details } };
}
