import type { ErrorCode, ErrorDetail } from "../../lib/errors";

/** The error envelope of every error response (DECISIONS 8). */
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
