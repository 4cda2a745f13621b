import { CESSION_ERRORS } from "./cession-codes";

/**
 * Codes of a bad invoice body. The country engines raise them by these names (without the
 * `INVOICE_` prefix, e.g. the Chilean EngineError code `TOTALS_MISMATCH`); the API answers
 * `INVOICE_<code>` (400).
 */
export const INVOICE_INPUT_CODES = {
  DOCUMENT_TYPE_UNKNOWN: "invoice_type is neither an SII document code nor a known mnemonic (FAC, NCV, ...).",
  INVALID_INPUT: "The invoice body does not match the schema (a required field is missing or has the wrong type).",
  INVALID_NUMBER: "A number is not a plain decimal, is negative where it must not be, or has too many decimals.",
  INVALID_DATE: "A date or date-time is not in the expected form or is out of the SII range (2000-01-01..2050-12-31).",
  INVALID_RUT: "A RUT is malformed or its check digit is wrong.",
  TOO_MANY_LINES: "More detail lines than the document type allows (60 on facturas and notes, 1,000 on boletas).",
  FIELD_TOO_LONG: "A text field is longer than the SII allows for it.",
  CHARACTER_NOT_LATIN1: "A text field holds a character outside ISO-8859-1, which the SII files cannot carry.",
  TAX_NOT_ALLOWED: "A tax type is unknown or not allowed on this line or document type.",
  TAX_RATE_MISMATCH: "A tax rate differs from the rate the SII fixes for that tax.",
  TOTALS_MISMATCH: "An amount sent by the client differs from the amount the engine computed; `expected` holds it.",
  AMOUNT_OUT_OF_RANGE: "An amount is negative or exceeds 18 digits.",
  CURRENCY_NOT_SUPPORTED: "The currency is not allowed for this document type or has no SII customs name.",
  REFERENCE_REQUIRED: "The document type needs a reference (notes and cancellations).",
  REFERENCE_INVALID: "A billing reference is malformed, names a document type this note cannot modify, or has folio 0 without `global` (the SII takes folio 0 only on a global reference, IndGlobal).",
  ZERO_TOTAL: "A document declared as a sale totals 0 (e.g. a guía de despacho, issued with IndTraslado 1 = sale).",
  REASON_CODE_UNKNOWN: "reason_code is not one of ANU (cancel), COT (correct text), COM (correct amounts).",
  FIELD_NOT_ALLOWED: "A field or value of the body is not allowed on this document type (for example a retention code on a boleta, a customs block on a domestic invoice).",
  CATALOG_CODE_UNKNOWN: "A coded field (unit, currency, tax type, region, payment type, activity, ...) is not in the country's catalog; the message names the catalog endpoint that lists the allowed values.",
} as const;
export type InvoiceInputCode = keyof typeof INVOICE_INPUT_CODES;

const INVOICE_INPUT_ERRORS = Object.fromEntries(
  Object.entries(INVOICE_INPUT_CODES).map(([c, description]) => [`INVOICE_${c}`, { status: 400, description }]),
) as Record<`INVOICE_${InvoiceInputCode}`, { status: 400; description: string }>;

export function isInvoiceInputCode(code: string): code is InvoiceInputCode {
  return Object.hasOwn(INVOICE_INPUT_CODES, code);
}

/**
 * The one list of error codes. The runtime (AppError, onError) and the OpenAPI document both read
 * it, so a code cannot be documented without being sendable or sent without being documented.
 * Codes from the specification are spelled exactly as written there (ENUMERATION_*).
 */
export const ERROR_CODES = {
  ...CESSION_ERRORS,
  // generic request errors
  VALIDATION_FAILED: { status: 400, description: "The request failed validation; `details` names each field." },
  MALFORMED_JSON: { status: 400, description: "The body is not valid JSON." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: "The Content-Type is not the one this operation accepts." },
  PAYLOAD_TOO_LARGE: { status: 413, description: "The body is larger than this operation accepts." },
  ROUTE_NOT_FOUND: { status: 404, description: "No operation exists at this path." },
  METHOD_NOT_ALLOWED: { status: 405, description: "The path exists but not with this HTTP method; see the Allow header." },
  INTERNAL: { status: 500, description: "Unexpected server error. The message is generic; quote the request_id to support." },
  SERVICE_UNAVAILABLE: { status: 503, description: "Storage was briefly unavailable (a Durable Object restarting, moving or overloaded, as the platform reports it). Retry after the seconds in the Retry-After header; a POST retried with the same Idempotency-Key is done at most once." },
  CONTROL_DIRECTORY_UNAVAILABLE: { status: 503, description: "A withdrawal (key or user revoked, grant withdrawn, certificate or company deleted) was not made: the store every server reads access from could not be reached first. Nothing changed; retry." },
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
  // catalogs and taxpayers
  CATALOG_COUNTRY_NOT_SUPPORTED: { status: 404, description: "No reference catalogs for this country (only CL / CHL today)." },
  TAXPAYER_NOT_FOUND: { status: 404, description: "The RUT is not in the directory of authorised electronic taxpayers." },
  // companies
  COMPANY_NOT_FOUND: { status: 404, description: "No such company (or it was deleted)." },
  COMPANY_TAX_ID_INVALID: { status: 400, description: "The tax identification number is malformed or its check digit is wrong." },
  COMPANY_TAX_ID_TAKEN: { status: 409, description: "This client already has an active company with this tax identification number." },
  COMPANY_COUNTRY_UNKNOWN: { status: 400, description: "The country is not a known ISO 3166 alpha-2 or alpha-3 code." },
  COMPANY_DOCUMENT_CODE_UNKNOWN: { status: 400, description: "The tax identification document code is not in the catalog of the company's country." },
  LOGO_INVALID_FORMAT: { status: 400, description: "The logo is not a PNG or JPEG image (detected from its bytes), cannot be parsed completely, or is larger than 4096 x 4096 pixels." },
  LOGO_TOO_LARGE: { status: 413, description: "The logo is larger than 1 MiB." },
  LOGO_NOT_FOUND: { status: 404, description: "The company has no logo." },
  // certificates (§4.6)
  CERTIFICATE_NOT_PFX: { status: 400, description: "The uploaded file is not a PKCS#12 (.pfx/.p12) archive." },
  CERTIFICATE_WRONG_PASSWORD: { status: 400, description: "The password does not open the .pfx." },
  CERTIFICATE_PFX_TOO_COSTLY: { status: 400, description: "The .pfx asks for more than 200,000 key-derivation iterations (MAC or encryption); refused before deriving anything. Export it again with default settings." },
  CERTIFICATE_NO_PRIVATE_KEY: { status: 400, description: "The .pfx holds no (RSA) private key." },
  CERTIFICATE_NO_CERTIFICATE: { status: 400, description: "The .pfx holds no certificate." },
  CERTIFICATE_KEY_MISMATCH: { status: 400, description: "No certificate in the .pfx matches its private key." },
  CERTIFICATE_RUT_INVALID: { status: 400, description: "The certificate's holder RUT (SAN 1.3.6.1.4.1.8321.1) is present but not a valid RUT (check digit or form)." },
  CERTIFICATE_NO_RUT: { status: 400, description: "The certificate carries no RUT of its holder (SAN 1.3.6.1.4.1.8321.1): the SII authenticates the sender by it." },
  CERTIFICATE_EXPIRED: { status: 400, description: "The certificate has expired." },
  CERTIFICATE_NOT_YET_VALID: { status: 400, description: "The certificate is not valid yet." },
  CERTIFICATE_DUPLICATE: { status: 409, description: "This certificate is already stored for the company." },
  CERTIFICATE_NOT_FOUND: { status: 404, description: "No such certificate for this company." },
  CERTIFICATE_REQUIRED: { status: 422, description: "The company has no valid, current active certificate: nothing can be signed or issued." },
  // folio ranges (CAF)
  ENUMERATION_CAF_INVALID: { status: 400, description: "The CAF file is not a valid CAF (not XML, malformed, bad SII signature, untrusted key or key pair mismatch); the message says which." },
  ENUMERATION_CAF_WRONG_COMPANY: { status: 400, description: "The CAF authorises folios of another RUT than the company's." },
  ENUMERATION_CAF_UNKNOWN_TYPE: { status: 400, description: "The CAF is for a document type this service does not issue." },
  ENUMERATION_CAF_WRONG_ENVIRONMENT: { status: 400, description: "The CAF was signed by the SII key of another environment than the one configured (certification vs production)." },
  ENUMERATION_CAF_DUPLICATE: { status: 409, description: "This CAF range is already loaded." },
  ENUMERATION_CAF_OVERLAP: { status: 409, description: "The CAF range overlaps a range already loaded for the document type." },
  ENUMERATION_CAF_HELD_ELSEWHERE: { status: 409, description: "Another account of this service already loaded an overlapping range of this type for the same RUT: the SII authorises each folio once, so it can be issued from one account only." },
  ENUMERATION_DOCUMENT_TYPE_UNKNOWN: { status: 400, description: "The document type is neither an SII code (33, 61, ...) nor a known mnemonic (FAC, NCV, ...)." },
  ENUMERATION_REFETCH_NOT_SUPPORTED: { status: 501, description: "Requesting CAFs from the real SII is not possible from this service (the SII hands them out only in its certificate-authenticated portal); download the CAF there and upload it." },
  ENUMERATION_AUTHORITY_UNAVAILABLE: { status: 503, description: "The tax authority did not answer the CAF request; retry later." },
  // folios (specification §4.7, §7)
  ENUMERATION_OUT_OF_RANGE: { status: 400, description: "next_folio_number is outside every loaded range or in a gap between CAFs." },
  ENUMERATION_NO_FOLIOS_AVAILABLE_FROM: { status: 400, description: "next_folio_number is inside a loaded range but no folio at or above it is available; nothing was modified." },
  ENUMERATION_NOT_FOUND: { status: 404, description: "The document type has no active folio ranges (CAF)." },
  ENUMERATION_THRESHOLD_INVALID: { status: 400, description: "The alert threshold must be a whole number from 0 to 1,000,000, or null for the default." },
  // invoices (§4.8, §4.9)
  ...INVOICE_INPUT_ERRORS,
  // reception (§4.10)
  RECEIVED_DOCUMENT_NOT_FOUND: { status: 404, description: "No such received document for this company." },
  INBOUND_MESSAGE_NOT_FOUND: { status: 404, description: "No such inbound message (e-mail or upload) for this company." },
  RECEPTION_FILE_INVALID: { status: 422, description: "The uploaded file is not an EnvioDTE or a DTE (or breaks a reception limit); nothing was stored." },
  RECEPTION_FILE_NOT_AVAILABLE: { status: 404, description: "That file does not exist (yet) for this received document: its XML has not arrived, or the response was not produced." },
  RECEPTION_ACTION_TYPE: { status: 422, description: "Only facturas (33, 34) and liquidaciones-factura (43) can be accepted or claimed." },
  RECEPTION_ACTION_NO_XML: { status: 422, description: "The document is known from the SII's register only; its XML has not arrived, so it cannot be checked or acknowledged yet." },
  RECEPTION_ACTION_UNVERIFIED: { status: 422, description: "The document failed verification: it cannot be accepted or acknowledged (only claimed)." },
  RECEPTION_DEADLINE_PASSED: { status: 422, description: "The 8 calendar days from the SII reception time have passed: the document is accepted by law and cannot be answered." },
  RECEPTION_ACTION_CONFLICT: { status: 409, description: "The action contradicts one already recorded: an acceptance (ACD/ERM) excludes a claim (RCD/RFP/RFT) and vice versa." },
  RECEPTION_NOT_AT_AUTHORITY: { status: 422, description: "The SII has no record of this document (it was not declared to the SII, or not yet): nothing can be recorded." },
  RECEPTION_AUTHORITY_REFUSED: { status: 422, description: "The SII refused the action; its code and reason are in the message." },
  RECEPTION_AUTHORITY_UNAVAILABLE: { status: 503, description: "The SII did not answer; nothing was recorded. Retry later." },
  RECEPTION_REPLY_MISSING: { status: 409, description: "The document has no such reply to mail: no RecepcionEnvio was built for its file, or that response was not sent." },
  RECEPTION_REPLY_NO_ADDRESS: { status: 422, description: "No address is known for the supplier: give one in `email`." },
  RECEPTION_REPLY_MAIL_PENDING: { status: 409, description: "The reply is being mailed (PENDING): wait until its mailing is SENT or FAILED." },
  RECEPTION_MAIL_UNAVAILABLE: { status: 503, description: "No mail service is configured (send_email binding and RECEPTION_DOMAIN): download the reply and send it yourself." },
  INVOICE_NOT_FOUND: { status: 404, description: "No such document for this company." },
  BATCH_NOT_FOUND: { status: 404, description: "No such batch for this company." },
  BATCH_FILE_INVALID: { status: 400, description: "The batch's CSV file as a whole cannot be read (empty, not text in UTF-8 or ISO-8859-1, an unknown or missing layout header, a quote never closed); `details` says where. Nothing was stored and no folio was used." },
  BATCH_FILE_TOO_LARGE: { status: 413, description: "The batch's CSV file is larger than 10 MB." },
  BATCH_TOO_MANY_ROWS: { status: 400, description: "The batch holds more than 1,000 documents: split it." },
  BATCH_ROW_INVALID: { status: 400, description: "A row of a CSV batch cannot be read (wrong number of columns, a formula-looking cell, a number or flag not in the layout's form); the row's error names the line and the column. Only in a batch's per-row results." },
  INVOICE_ISSUER_MISMATCH: { status: 400, description: "The issuer block is not the company's: issuer.document_number is not its tax id, or a field differs from its issuer profile (the details name each)." },
  INVOICE_NO_FOLIOS: { status: 422, description: "No folio can be assigned for this document type: no CAF loaded, every range is used up or expired, or every folio left is reserved by documents already accepted (each accepted document holds one). Load a CAF (/enumeration/upload or /enumeration/refetch)." },
  INVOICE_DUPLICATE_EXTERNAL_REFERENCE: { status: 409, description: "A document with this external_reference already exists for the company; its id is in the message." },
  INVOICE_ALREADY_CANCELLED: { status: 409, description: "The referenced document is already cancelled (or a cancelling note for it is in progress)." },
  INVOICE_NOT_CANCELLABLE: { status: 422, description: "The referenced document cannot be cancelled: its type cannot be cancelled by this note, or it was rejected or never issued." },
  INVOICE_CANCELLATION_AMOUNT_MISMATCH: { status: 422, description: "A cancelling note (ANU) of one of our documents must total exactly what that document totals; to correct part of it use reason_code COM." },
  INVOICE_CREDIT_EXCEEDS_REMAINING: { status: 422, description: "Credit notes (ANU, COM) referencing one of our documents never add up to more than it totals: the notes already issued against it (all but FAILED or REJECTED ones, those still in the pipeline included) plus this one would exceed it. The message names the document and the amount that can still be credited." },
  INVOICE_RESOLUTION_MISMATCH: { status: 400, description: "issuer.tax_information names another SII resolution (number or date) than the company's settings; omit it or change the settings." },
  INVOICE_CANCELLATION_TYPE_MISMATCH: { status: 422, description: "This note type cannot cancel the referenced document's type (e.g. an export invoice is cancelled by note 112, not 61)." },
  INVOICE_XML_UNAVAILABLE: { status: 410, description: "The document FAILED before it was signed: its XML will never exist (final; do not retry). The document's `message` says why." },
  INVOICE_XML_NOT_READY: { status: 409, description: "The signed XML does not exist yet (the document is still being generated); retry shortly." },
  INVOICE_NOT_ACCEPTED: { status: 409, description: "The printed representation exists only once the tax authority accepted the document." },
  INVOICE_PDF_FORMAT_UNKNOWN: { status: 400, description: "Unknown PDF format; use A4, 80mm or 58mm." },
  INVOICE_NO_BUYER_RESPONSE: { status: 409, description: "Only a factura (33, 34, 43) the SII accepted has a buyer's answer to check." },
  INVOICE_BUYER_REPLY_INVALID: { status: 422, description: "The uploaded file is not a buyer's reply (a RespuestaDTE or EnvioRecibos of the SII's namespace naming at least one document), or cannot be read; nothing was stored." },
  INVOICE_BUYER_REPLY_NOT_FOUND: { status: 404, description: "The document has no buyer's reply with that id." },
  INVOICE_NO_BUYER_DELIVERY: { status: 409, description: "Boletas (39, 41) go to consumers and are not mailed to a buyer as an EnvioDTE." },
  INVOICE_BUYER_DELIVERY_NO_ADDRESS: { status: 422, description: "The SII's taxpayer directory has no exchange address for the buyer: send it with `email`." },
  INVOICE_BUYER_DELIVERY_FAILED: { status: 503, description: "The EnvioDTE could not be built or mailed (no certificate, no mail binding, the mail service refused it); `buyer_delivery` says why and, while attempts are left, it is tried again by itself." },
  INVOICE_BUYER_DELIVERY_NOT_SENT: { status: 404, description: "No EnvioDTE has been built for the document's buyer yet." },
  INVOICE_BUYER_CHECK_UNAVAILABLE: { status: 503, description: "The SII did not answer or refused the query; the document is unchanged. Retry later (the service also checks by itself)." },
  // webhooks
  WEBHOOK_NOT_FOUND: { status: 404, description: "No such webhook endpoint for this company." },
  WEBHOOK_URL_INVALID: { status: 400, description: "The URL cannot receive webhooks (not https in production, a private or reserved host, credentials in it...); the message says why." },
  WEBHOOK_EVENT_UNKNOWN: { status: 400, description: "An event type of the filter is not in the catalogue (the OpenAPI document's webhooks section); \"*\" means all." },
  WEBHOOK_LIMIT_REACHED: { status: 409, description: "The company already has the most webhook endpoints allowed (20)." },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, description: "No such webhook delivery or event for this company." },
  WEBHOOK_EVENT_EXPIRED: { status: 410, description: "The event is older than the 30-day retention of events and deliveries: it is deleted (or about to be) and cannot be sent again (final)." },
  // operations
  DEAD_LETTER_NOT_FOUND: { status: 404, description: "No such dead-lettered message for this company." },
  DEAD_LETTER_ALREADY_REDRIVEN: { status: 409, description: "The dead-lettered message was already sent back to its queue." },
  DEAD_LETTER_QUEUE_UNAVAILABLE: { status: 503, description: "The message could not be sent back: its queue refused it, or this deployment has no producer binding for it. The dead letter stays DEAD; retry later." },
  RATE_LIMITED: { status: 429, description: "Too many requests for this API key, company or operation; wait the number of seconds in the Retry-After header." },
  // simulator
  SIMULATOR_CAF_OVERLAP: { status: 409, description: "The simulated SII already granted folios of this type and RUT in an overlapping range." },
  SIMULATOR_RUT_NOT_OWNED: { status: 403, description: "A test key asked the simulated SII for a CAF or a scenario of a RUT that is not one of its client's active test-mode companies." },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}
