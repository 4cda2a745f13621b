/**
 * Typed errors of the Chilean DTE engine. Every failure of the engine is an EngineError with one of
 * the codes below; the HTTP layer maps them onto its own error enum (all are client errors unless
 * noted). `field` is a JSON path into the input (e.g. `items[3].unit_price`), `expected` the value
 * the engine computed or requires, when there is one.
 */
export const ENGINE_ERROR_CODES = {
  // input / document model
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
  REFERENCE_INVALID: "A billing reference is malformed, or names a document type this note cannot modify.",
  REASON_CODE_UNKNOWN: "reason_code is not one of ANU (cancel), COT (correct text), COM (correct amounts).",
  // CAF
  CAF_NOT_XML: "The CAF file is not well-formed XML or lacks the AUTORIZACION/CAF/DA structure.",
  CAF_MALFORMED: "A CAF field is missing or malformed (RE, RS, TD, RNG, FA, RSAPK, IDK, FRMA, RSASK, RSAPUBK).",
  CAF_UNKNOWN_IDK: "The CAF's IDK names an SII key this engine does not trust in the current mode.",
  CAF_BAD_SIGNATURE: "The SII signature (FRMA) over the CAF's DA does not verify.",
  CAF_KEY_MISMATCH: "RSASK, RSAPUBK and DA/RSAPK are not the same key pair.",
  CAF_TYPE_MISMATCH: "The CAF authorises another document type.",
  CAF_ISSUER_MISMATCH: "The CAF belongs to another issuer RUT.",
  CAF_FOLIO_OUT_OF_RANGE: "The folio is outside the CAF's authorised range.",
  CAF_EXPIRED: "The CAF's folios expired (6 months after authorisation for 33, 43, 46, 56, 61).",
  STAMP_BEFORE_CAF: "The stamp timestamp is earlier than the CAF authorisation date.",
  // certificates
  CERT_NOT_PFX: "The file is not a PKCS#12 (.pfx/.p12) archive.",
  CERT_WRONG_PASSWORD: "The .pfx password is wrong (MAC or decryption failed).",
  CERT_PFX_TOO_COSTLY: "The .pfx asks for more key-derivation iterations than accepted (MAC or PBE).",
  CERT_NO_PRIVATE_KEY: "The .pfx holds no private key.",
  CERT_NO_CERTIFICATE: "The .pfx holds no certificate.",
  CERT_KEY_MISMATCH: "No certificate in the .pfx matches its private key.",
  CERT_UNSUPPORTED_KEY: "The certificate key is not RSA.",
  CERT_NO_RUT: "The certificate carries no RUT of its holder (SAN otherName 1.3.6.1.4.1.8321.1).",
  // XML / signatures
  XML_MALFORMED: "An XML document could not be parsed.",
  SIGNATURE_MISSING: "The document carries no XMLDSig Signature where one is required.",
  SIGNATURE_INVALID: "The XMLDSig signature (digest or signature value) does not verify.",
  SIGNATURE_UNSUPPORTED: "The signature uses an algorithm or layout outside the SII profile.",
  TED_MISSING: "The DTE carries no TED stamp.",
  TED_INVALID: "The TED stamp (FRMT) does not verify with the CAF public key, or its DD disagrees with the document.",
  ENVELOPE_INVALID: "An envelope cannot be built (no documents, mixed families, too many documents).",
  INTERNAL: "Unexpected engine failure (a bug); not the caller's fault.",
} as const;

export type EngineErrorCode = keyof typeof ENGINE_ERROR_CODES;

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  readonly field?: string;
  readonly expected?: string;
  constructor(code: EngineErrorCode, message: string, opts: { field?: string; expected?: string | number | bigint; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "EngineError";
    this.code = code;
    if (opts.field !== undefined) this.field = opts.field;
    if (opts.expected !== undefined) this.expected = String(opts.expected);
  }
  toJSON(): { code: EngineErrorCode; message: string; field?: string; expected?: string } {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined ? { field: this.field } : {}),
      ...(this.expected !== undefined ? { expected: this.expected } : {}),
    };
  }
}

export function isEngineError(e: unknown): e is EngineError {
  return e instanceof EngineError;
}
