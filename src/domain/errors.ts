import type { ErrorCode } from "../http/errors/codes";
import type { ErrorDetail } from "../http/errors/api-error";

/**
 * Business rule violations raised by domain verbs. They carry a code from the one error enum;
 * the HTTP layer maps them to the envelope in exactly one place (onError).
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = "DomainError";
  }
}
