/**
 * Typed errors of the SII client. `retryable` tells the caller (the issuance queue) whether the same
 * request may succeed later: network failures, HTTP 5xx, an "Error 500" body, SII internal states
 * (-11, -1, ...), a locked system, an expired seed are retryable; a refused signature, an
 * unauthorised company or a malformed request are not.
 */
import type { SiiStatusKind } from "./status";

export const SII_ERROR_CODES = {
  NETWORK: "The SII could not be reached (connection failure, DNS, TLS, timeout).",
  HTTP_ERROR: "The SII answered with an HTTP error status (5xx retryable, 4xx not).",
  SERVICE_ERROR: "The SII answered 200 with an error page or an 'Error 500' body.",
  BAD_RESPONSE: "The SII's answer could not be read (not the expected XML/JSON).",
  SOAP_FAULT: "The SOAP service answered with a Fault.",
  SEED_FAILED: "CrSeed.getSeed (or the REST seed) answered an error state.",
  TOKEN_REFUSED: "GetTokenFromSeed.getToken (or the REST token) refused the signed seed.",
  TOKEN_INVALID: "The token was refused on use (expired or unknown) even after re-authenticating.",
  UPLOAD_REFUSED: "DTEUpload answered a STATUS other than 0/99.",
  QUERY_FAILED: "QueryEstUp / QueryEstDte / the REST status answered an error state.",
  CERTIFICATE_NO_RUT: "The signing certificate carries no holder RUT; the SII cannot authenticate it.",
  INVALID_ARGUMENT: "A call argument is malformed (RUT, track id, date).",
} as const;

export type SiiErrorCode = keyof typeof SII_ERROR_CODES;

export class SiiError extends Error {
  readonly code: SiiErrorCode;
  readonly retryable: boolean;
  /** The SII's own code (ESTADO, STATUS, HTTP status as text), when there is one. */
  readonly siiCode?: string;
  readonly siiKind?: SiiStatusKind;
  readonly httpStatus?: number;
  /** The operation that failed, e.g. "CrSeed.getSeed", "DTEUpload". */
  readonly operation: string;
  /** Explanations from SII_STATUS_TEXT when the SII gave a code. */
  readonly es?: string;
  readonly en?: string;

  constructor(
    code: SiiErrorCode,
    message: string,
    opts: { retryable: boolean; operation: string; siiCode?: string; siiKind?: SiiStatusKind; httpStatus?: number; es?: string; en?: string; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "SiiError";
    this.code = code;
    this.retryable = opts.retryable;
    this.operation = opts.operation;
    if (opts.siiCode !== undefined) this.siiCode = opts.siiCode;
    if (opts.siiKind !== undefined) this.siiKind = opts.siiKind;
    if (opts.httpStatus !== undefined) this.httpStatus = opts.httpStatus;
    if (opts.es !== undefined) this.es = opts.es;
    if (opts.en !== undefined) this.en = opts.en;
  }

  toJSON() {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      operation: this.operation,
      ...(this.siiCode !== undefined ? { sii_code: this.siiCode } : {}),
      ...(this.httpStatus !== undefined ? { http_status: this.httpStatus } : {}),
    };
  }
}

export function isSiiError(e: unknown): e is SiiError {
  return e instanceof SiiError;
}
