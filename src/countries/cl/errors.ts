import { INVOICE_INPUT_CODES } from "../../lib/errors/codes";

/**
 * Typed errors of the Chilean DTE engine. Every failure of the engine is an EngineError with one of
 * the codes below; the HTTP layer maps them onto its own error enum (all are client errors unless
 * noted). `field` is a JSON path into the input (e.g. `items[3].unit_price`), `expected` the value
 * the engine computed or requires, when there is one.
 */
export const ENGINE_ERROR_CODES = {
  // input / document model: the service-wide invoice input codes
  ...INVOICE_INPUT_CODES,
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
