/**
 * Chilean DTE engine (SII electronic tax documents). Pure functions + Web Crypto: no Hono, no
 * bindings, no I/O, no clock (callers pass timestamps in the company's local time). Runs in workerd
 * and in Node ≥ 20. Money is BigInt scaled integers; SII rounding is half away from zero.
 *
 * Typical issuance flow
 * ---------------------
 *   const body   = parseInvoice(json);                          // zod (invoiceSchema), INVALID_INPUT
 *   const doc    = computeDocument(body);                       // amounts, limits, totals check
 *   const caf    = await parseCaf(cafFileBytes, { mode: "sii" | "simulator" });
 *   const signer = await loadSigningCredentials(pfxBytes, password);   // or credentialsFromParts()
 *   const dte    = await buildSignedDte({ document: doc, folio, caf, signer, timestamp: "2026-11-20T10:30:05" });
 *   //  dte.xml (Uint8Array, ISO-8859-1), dte.xmlString, dte.element (to embed), dte.id ("F7T33"),
 *   //  dte.ted.{xml, flattened, bytes} (PDF417 payload), dte.total
 *   const env    = await buildEnvioDte({ dtes: [dte], issuerRut, senderRut: signer.rut!, resolution: { date, number }, timestamp, signer });
 *   //  EnvioBOLETA for 39/41: buildEnvioBoleta(...); to a buyer: receiverRut = buyer's RUT.
 *
 * Reception flow
 * --------------
 *   const report = await verifyInbound(bytes, { mode });        // per-DTE signature, TED, CAF, DD vs document
 *   buildRecepcionEnvio(...), buildResultadoDte(...), buildEnvioRecibos(...)   // signed answers
 *   await verifySignedXml(ackBytes)                             // answers received from buyers
 *   await readBuyerReply(ackBytes)                              // their entries, each with the signature covering it
 *
 * Errors: every failure is an EngineError { code, message, field?, expected? }; the codes are listed
 * (with descriptions) in ENGINE_ERROR_CODES for the HTTP layer's error enum. Verification functions
 * (verifyInbound, verifyTed, verifySignatureElement) never throw for bad input: they report.
 *
 * Modules: document-types (table, resolver, reason codes) · invoice (schema, computeDocument) ·
 * caf (parse/verify/checks) · sii-simulator-key (the simulated SII's public key, IDK 999) · ted ·
 * certificate (.pfx) · xmldsig (sign/verify, token request) · dte · envelopes · responses · verify ·
 * c14n / xml / asn1 / decimal (building blocks).
 *
 * Not done here: XSD validation (libxml2 is not available in workerd; the test suite validates every
 * output in Node with xmllint-wasm), talking to the SII, PDF rendering, folio allocation.
 */
export { ENGINE_ERROR_CODES, EngineError, isEngineError, type EngineErrorCode } from "./errors";
export {
  DOCUMENT_TYPES,
  DOCUMENT_TYPE_CODES,
  EXPIRING_CAF_TYPES,
  REASON_CODES,
  findDocumentType,
  resolveDocumentType,
  resolveReasonCode,
  resolveReferenceType,
  type DocumentTypeInfo,
  type ReasonCode,
  type SiiDocumentCode,
} from "./documents/document-types";
export {
  ADDITIONAL_TAXES,
  SPECIFIC_TAXES,
  OTHER_SCALE,
  CURRENCY_SII_NAMES,
  IVA_RATE,
  billingReferenceSchema,
  computeDocument,
  formatAmount,
  invoiceSchema,
  itemSchema,
  itemTaxSchema,
  parseInvoice,
  partySchema,
  totalsSchema,
  type ComputedDocument,
  type ComputedLine,
  type ComputedReference,
  type ComputedTax,
  type ComputedTotals,
  type InvoiceInput,
  type Party,
} from "./documents/invoice";
export type { ComputedCustoms, ComputedTicket, ComputedTransport } from "./documents/invoice/model";
export { divRound, formatScaled, parseScaled } from "./documents/decimal";
export { addSixMonths, assertCafUsable, cafSignedBytes, parseCaf, verifyCafElement, type Caf, type CafTrustOptions } from "./documents/caf";
export { SII_CAF_KEYS } from "./pki/sii-keys";
export { SIMULATOR_IDK, SIMULATOR_SII_PUBLIC_KEY_SPKI_PEM } from "./pki/sii-simulator-key";
export { buildDd, stampTed, tedText, verifyTed, type Ted, type TedCheck, type TedParams } from "./documents/ted";
export {
  OID_RUT,
  credentialsFromParts,
  importSigningKey,
  loadSigningCredentials,
  ownCredentials,
  openPfx,
  openPfxNative,
  readCertificate,
  type CertificateInfo,
  type OpenedPfx,
  type SigningCredentials,
} from "./pki/certificate";
export { ALG, buildTokenRequest, signXml, verifyChildSignature, verifySignatureElement, type DigestMode, type SignatureCheck, type XmlSigner } from "./xml/xmldsig";
export { XML_DECL, buildDteXml, buildSignedDte, dteId, type BuildDteParams, type SignedDte } from "./documents/dte";
export { assertDocumentSchema } from "./documents/document-schema";
export { buildEnvioBoleta, buildEnvioDte, type EnvelopeParams, type SignedEnvelope } from "./exchange/envelopes";
export {
  DTE_RECEPTION_STATUS,
  DTE_RESULT_STATUS,
  ENVELOPE_RECEPTION_STATUS,
  RECEIPT_DECLARATION,
  buildEnvioRecibos,
  buildRecepcionEnvio,
  buildResultadoDte,
  type DocumentKey,
  type DocumentResult,
  type ReceiptItem,
  type ReceivedEnvelope,
  type ResponseHeader,
  type SignedResponse,
} from "./exchange/responses";
export { MAX_REPLY_ENTRIES, readBuyerReply, type BuyerReply, type ReplyEntry, type ReplyEntryKind, type ReplyRoot } from "./exchange/replies-read";
export { receptionCafTrust, verifyDteElement, verifyInbound, verifySignedXml, type InboundDteReport, type InboundFailure, type InboundOptions, type InboundReport, type SignedXmlReport } from "./exchange/verify";
export type { DteContent } from "./exchange/content";
export { canonicalize, type C14nOptions } from "./xml/c14n";
export { childElements, childText, decodeLatin1, decodeXmlBytes, encodeLatin1, firstChild, flatten, parseXml, NS_DSIG, NS_SII, NS_XSI, xmlDocumentBytes, type XElement } from "./xml/xml";
export * from "./documents/rut";
export { b64decode, b64encode } from "./pki/asn1";
export { siiAuthority, siiReception, siiTaxAuthority, toAuthorityError } from "./sii/authority";
export type { ReceptionAction } from "./sii/reception";
export { ACTIONABLE_TYPES, APPROACHING_MS, deadlineOf, RESPONSE_WINDOW_MS } from "./documents/response-window";
export { siiClientFor, siiModeOf, useInProcessSimulator } from "./sii";
export { chile } from "./country";
