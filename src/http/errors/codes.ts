/**
 * The one list of error codes. The runtime (ApiError, onError) and the OpenAPI document both read
 * it, so a code cannot be documented without being sendable or sent without being documented.
 * Codes from the specification are spelled exactly as written there (ENUMERATION_*).
 */
export const ERROR_CODES = {
  // generic request errors
  VALIDATION_FAILED: { status: 400, description: "The request failed validation; `details` names each field." },
  MALFORMED_JSON: { status: 400, description: "The body is not valid JSON." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: "The Content-Type is not the one this operation accepts." },
  PAYLOAD_TOO_LARGE: { status: 413, description: "The body is larger than this operation accepts." },
  ROUTE_NOT_FOUND: { status: 404, description: "No operation exists at this path." },
  METHOD_NOT_ALLOWED: { status: 405, description: "The path exists but not with this HTTP method; see the Allow header." },
  INTERNAL: { status: 500, description: "Unexpected server error. The message is generic; quote the request_id to support." },
  // authentication and authorisation
  AUTH_MISSING_API_KEY: { status: 401, description: "No X-Api-Key header was sent." },
  AUTH_INVALID_API_KEY: { status: 401, description: "The X-Api-Key is malformed, unknown or revoked." },
  AUTH_COMPANY_ACCESS_DENIED: { status: 403, description: "The key is valid but has no access to this company." },
  AUTH_ROLE_FORBIDDEN: { status: 403, description: "The key's role may not perform this operation." },
  // idempotency
  IDEMPOTENCY_KEY_REUSED: { status: 409, description: "The Idempotency-Key was already used with a different request body." },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, description: "A request with this Idempotency-Key is still being processed; retry later." },
  IDEMPOTENCY_KEY_INVALID: { status: 400, description: "The Idempotency-Key header must be 1 to 255 printable ASCII characters." },
  // users and keys
  USER_NOT_FOUND: { status: 404, description: "No such user for this client." },
  USER_EMAIL_TAKEN: { status: 409, description: "A user with this e-mail already exists for this client." },
  USER_REVOKED: { status: 409, description: "The user is revoked; no keys can be created for it." },
  API_KEY_NOT_FOUND: { status: 404, description: "No such API key for this client." },
  API_KEY_LAST_OWNER: { status: 409, description: "The operation would leave the client without an active OWNER key." },
  API_KEY_GRANT_NOT_APPLICABLE: { status: 400, description: "Company grants apply to MEMBER keys only; OWNER and ADMIN keys reach every company." },
  // companies
  COMPANY_NOT_FOUND: { status: 404, description: "No such company (or it was deleted)." },
  COMPANY_TAX_ID_INVALID: { status: 400, description: "The tax identification number is malformed or its check digit is wrong." },
  COMPANY_TAX_ID_TAKEN: { status: 409, description: "This client already has an active company with this tax identification number." },
  COMPANY_COUNTRY_UNKNOWN: { status: 400, description: "The country is not a known ISO 3166 alpha-2 or alpha-3 code." },
  COMPANY_DOCUMENT_CODE_UNKNOWN: { status: 400, description: "The tax identification document code is not in the catalog of the company's country." },
  LOGO_INVALID_FORMAT: { status: 400, description: "The logo is not a PNG or JPEG image (detected from its bytes)." },
  LOGO_TOO_LARGE: { status: 413, description: "The logo is larger than 1 MiB." },
  LOGO_NOT_FOUND: { status: 404, description: "The company has no logo." },
  // folios (specification §4.7, §7)
  ENUMERATION_OUT_OF_RANGE: { status: 400, description: "next_folio_number is outside every loaded range or in a gap between CAFs." },
  ENUMERATION_NO_FOLIOS_AVAILABLE_FROM: { status: 400, description: "next_folio_number is inside a loaded range but no folio at or above it is available; nothing was modified." },
  ENUMERATION_NOT_FOUND: { status: 404, description: "The document type has no active folio ranges (CAF)." },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}
