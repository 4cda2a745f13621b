/**
 * The country port: what the product needs from a country's tax authority and document rules, in
 * the product's own terms. A country implements `Country` in its folder (src/countries/<code>/);
 * src/countries/index.ts maps a country code to its implementation. Nothing here names a country's codes
 * or types: where a value is the authority's own (an envelope kind, a status code, a response code),
 * it is a string the country defines and explains.
 */
import type { IssuingRules } from "./port-issuing";
import type { Cessions } from "./port-cessions";
import type { IssuerResolution, Printing } from "./port-printing";

export * from "./port-issuing";
export * from "./port-cessions";
export * from "./port-printing";

/**
 * A company's signing credentials (certificate and private key) as its country loaded them. Opaque
 * to the product: it hands them back to the country that made them.
 */
export interface Credentials {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** What a company's certificate says of itself, as its country read it from the file. */
export interface CertificateFacts {
  /** The holder's tax id (canonical) as the certificate carries it for the authority; null when absent. */
  holderTaxId: string | null;
  /** The holder's tax id as written, also when it is not a valid one; null when absent. */
  holderTaxIdText: string | null;
  subjectName: string | null;
  issuerName: string;
  serialNumber: string;
  fingerprintSha1: string;
  notBefore: Date;
  notAfter: Date;
}

/** Why a certificate file cannot be used (the product's words for each). */
export type CertificateRefusalReason = "NOT_PFX" | "WRONG_PASSWORD" | "TOO_COSTLY" | "NO_PRIVATE_KEY" | "NO_CERTIFICATE" | "KEY_MISMATCH" | "NO_TAX_ID";

export class CertificateRefusal extends Error {
  constructor(
    readonly reason: CertificateRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = "CertificateRefusal";
  }
}

/** Companies' signing certificates (a PKCS#12 file and its password). */
export interface CertificateRules {
  /** Reads a certificate file; rejects with a CertificateRefusal when it cannot be used. */
  read(file: Uint8Array, password: string): Promise<CertificateFacts>;
  /** The credentials to sign with, from a file `read` accepted. */
  open(file: Uint8Array, password: string): Promise<Credentials>;
}

/** A document inside an envelope, as the authority's per-document query needs it. */
export interface DocumentKey {
  invoiceId: string;
  documentType: number;
  folio: number;
  issueDate: string;
  total: string;
  receiverRut: string;
}

export type DocumentOutcome = "ACCEPTED" | "ACCEPTED_WITH_OBJECTIONS" | "REJECTED";

export interface DocumentVerdict {
  outcome: DocumentOutcome;
  /** The authority's own code for the document or its envelope, as the country explains it. */
  fiscalStatus: string;
  message: string;
}

export type EnvelopeVerdict =
  | { final: false; fiscalStatus: string; message: string }
  | { final: true; fiscalStatus: string; message: string; documents: Map<string, DocumentVerdict> };

/** Failure talking to the authority. Retryable ones wait (never drop the document). */
export class AuthorityError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly fiscalStatus?: string,
  ) {
    super(message);
    this.name = "AuthorityError";
  }
}

/**
 * The kind of an envelope, as the country names it (its `documents.envelopeOf`): the authority
 * takes each kind at its own service.
 */
export type EnvelopeKind = string;

/**
 * The issuance pipeline's side of the authority (DECISIONS 15): send an envelope, ask what became
 * of it, and hand out number ranges where the authority does that as a service.
 */
export interface TaxAuthority {
  upload(p: { kind: EnvelopeKind; xml: Uint8Array; companyRut: string; signer: Credentials; fileName: string }): Promise<{ trackId: string; duplicate: boolean }>;
  poll(p: { kind: EnvelopeKind; trackId: string; companyRut: string; signer: Credentials; documents: DocumentKey[] }): Promise<EnvelopeVerdict>;
  /** A number-range file for the range (or the next `quantity` numbers). */
  requestCaf(p: { rut: string; documentType: number; from?: number; to?: number; quantity?: number; legalName?: string }): Promise<Uint8Array>;
}

// ---- reception: the authority's side of documents a company receives ------------------------------

/**
 * A company's answer to a supplier's document, as the country's code for it (the country lists
 * them in `reception.responses`): acceptance, receipt of goods, or a claim.
 */
export type SupplierResponse = string;

export interface AuthorityEvent {
  action: string;
  description: string;
  responsibleRut: string;
  /** ISO 8601 with offset. */
  at: string;
}

export interface RegisteredDocument {
  issuerRut: string;
  documentType: number;
  folio: number;
  issueDate: string;
  total: string;
  /** ISO 8601, when the authority received it. */
  receivedAt: string;
}

/** What the API shows of a received document's content (names, amounts, lines), as its country read it at intake. */
export interface ReceivedContent {
  issuer_name: string | null;
  issuer_activity: string | null;
  recipient_name: string | null;
  net_amount: string | null;
  exempt_amount: string | null;
  vat: string | null;
  total: string | null;
  lines: { line: number; name: string; quantity: string | null; unit_price: string | null; amount: string | null }[];
}

/**
 * The country port of reception: the authority's accept/claim register. Network failures and the
 * authority's internal errors throw AuthorityError(retryable: true); refusals come back as codes.
 */
export interface ReceptionAuthority {
  /** Registers the company's response to a document: the authority's code and words as they came (0 = OK). */
  recordAction(p: { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number; action: SupplierResponse }): Promise<{ code: number; message: string }>;
  /** The register's history of a document (responses, claims, assignments). */
  listEvents(p: { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number }): Promise<AuthorityEvent[]>;
  /** When the authority received the document, as ISO 8601 with the country's offset, or null when it has not. */
  receptionTime(p: { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number }): Promise<string | null>;
  /** Documents the authority holds with companyRut as recipient, received after `since`. */
  listReceived(p: { companyRut: string; signer: Credentials; since?: string }): Promise<{ supported: boolean; documents: RegisteredDocument[] }>;
  /**
   * The signed document of the register, as its issuer signed it (a standalone file),
   * or null when the authority does not hand it out (a simulated authority may).
   */
  receivedXml(p: { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number }): Promise<Uint8Array | null>;
  /**
   * The authority's own status of one document, asked with the data the document shows.
   * `companyRut` is the company asking (its certificate's holder is the consultant).
   * Refusals of the query itself throw AuthorityError(retryable: false).
   */
  documentStatus(p: { companyRut: string; signer: Credentials; issuerRut: string; receiverRut: string; documentType: number; folio: number; issueDate: string; total: string }): Promise<RegisteredStatus>;
}

/**
 * What the authority's register says of a document asked with its data: MATCH (registered with the
 * same data), MISMATCH (registered with other data), INVALID (its folio is not authorised or was
 * annulled, or its issuer may not issue electronic documents), NOT_REGISTERED (not received, or a
 * code not understood: asked again later). `code` is the authority's own, `message` its words.
 */
export interface RegisteredStatus {
  state: "MATCH" | "MISMATCH" | "INVALID" | "NOT_REGISTERED";
  code: string;
  message: string;
}

// ---- the country ---------------------------------------------------------------------------------

/** How the Worker answers a request itself (its app's fetch): a simulated authority runs on it. */
export type AppFetch = (req: Request, env: Env, ctx?: ExecutionContext) => Response | Promise<Response>;

/** A normalised tax identification number, or why the input is not one. */
export type TaxIdResult = { ok: true; canonical: string } | { ok: false; message: string };

/** The country's tax identification numbers (of companies, suppliers, buyers). */
export interface TaxIdRules {
  /** The canonical form, or throws (a form the number rules refuse). */
  normalize(input: string): string;
  isValid(input: string): boolean;
  /** The canonical form or why not, in the words the API answers with. */
  check(input: string): TaxIdResult;
  /** As printed on a document (thousands separators and check digit). Throws an Error saying why on a malformed number. */
  printed(input: string): string;
}

/**
 * The window a company has to answer a supplier's document at the authority, counted from when the
 * authority received it; past it the document counts as accepted.
 */
export interface ResponseWindow {
  /** Document types the company may respond to at the authority. */
  readonly types: ReadonlySet<number>;
  /** How long before the deadline a document counts as approaching it. */
  readonly approachingMs: number;
  /** The deadline (ISO 8601) for a document the authority received at `receivedAt`. */
  deadlineOf(receivedAt: string): string;
}

/**
 * A number-range file as the country read it: the authority's authorisation of the numbers `from`
 * to `to` of a document type, with what the country needs to stamp documents with it.
 */
export interface NumberRange {
  readonly documentType: number;
  readonly from: number;
  readonly to: number;
  /** The tax id of the issuer the range authorises (canonical). */
  readonly issuerRut: string;
  /** YYYY-MM-DD. */
  readonly authorizedOn: string;
  /** The last day (YYYY-MM-DD) its numbers may be used, or null when they never expire. */
  readonly expiresOn: string | null;
  /** The authority's environment that authorised it, as the country names it ("simulator" for the simulated authority). */
  readonly environment: string;
  /** The id of the authority's key that signed it. */
  readonly keyId: number;
}

/** A document type a country issues: its authority's code, name and short name. */
export interface DocumentType {
  readonly code: number;
  readonly name: string;
  readonly mnemonic: string;
}

/** The authority's number ranges (the documents' numbers it authorises a company to use). */
export interface NumberRanges {
  /** The date (YYYY-MM-DD) until which a range authorised on `authorizedOn` may be used, or null when it never expires. */
  expiryDate(documentType: number, authorizedOn: string): string | null;
  /**
   * Reads a range file; `simulated` when it comes from the simulated authority (whose key the
   * country trusts instead of the real one). Rejects with a refusal (`documents.isRefusal`) when it cannot.
   */
  parse(file: Uint8Array, opts: { simulated: boolean }): Promise<NumberRange>;
}

/** A document the country built, stamped and signed: ready for an envelope. */
export interface SignedDocument {
  /** Its id inside its file and envelopes. */
  readonly id: string;
  /** The standalone signed file. */
  readonly xml: Uint8Array;
}

/** What is recorded of a signed document beside its stored file. */
export interface StoredDocument {
  documentType: number;
  folio: number;
  issuerRut: string;
  receiverRut: string;
  issueDate: string;
  total: string;
  xml: Uint8Array;
}

/** Issuing documents: read and check their bodies, build, stamp and sign them, and put them in envelopes. */
export interface Documents extends IssuingRules {
  /** The types the country issues, in its authority's order. */
  readonly types: readonly DocumentType[];
  /** A type by its code or short name (any case), or undefined. */
  findType(input: string | number): DocumentType | undefined;
  /** The kind of envelope documents of the type travel in to the authority; throws for a type the country does not issue. */
  envelopeOf(documentType: number): EnvelopeKind;
  /**
   * Computes the document of an invoice body (as the API accepted it), stamps it with number `folio`
   * of `range` and signs it. Rejects with a refusal (`isRefusal`) when the document cannot be made.
   */
  sign(p: { body: unknown; folio: number; range: NumberRange; signer: Credentials; timestamp: string }): Promise<SignedDocument>;
  /**
   * The standalone signed file of document `documentId` cut out of an envelope (the bytes it was
   * signed as); null when the envelope does not hold it.
   */
  fromEnvelope(envelope: Uint8Array, documentId: string): Uint8Array | null;
  /** A signed document again, from its stored file and what was recorded beside it. */
  stored(p: StoredDocument): SignedDocument;
  /**
   * Builds and signs an envelope of `documents`: to the authority (of their kind), or to a buyer
   * (the country's exchange envelope) when `recipientRut` is given. `resolution` is the authority's
   * authorisation of the issuer, `timestamp` local YYYY-MM-DDTHH:MM:SS, `id` the envelope's own id
   * inside its file (a default when absent).
   */
  envelope(p: {
    documents: SignedDocument[];
    issuerRut: string;
    recipientRut?: string;
    resolution: { date: string; number: number };
    timestamp: string;
    signer: Credentials;
    id?: string;
  }): Promise<Uint8Array>;
  /**
   * Whether an error is the country refusing its input (final: retrying gives the same), with a
   * message the API can show and the country's code for the refusal.
   */
  isRefusal(e: unknown): e is Error & { code: string };
}

// ---- received documents: reading, verifying and answering suppliers' files --------------------------

/** The checks a received document goes through (the API shows each). */
export type CheckName = "envelope_signature" | "dte_signature" | "signer" | "ted" | "caf" | "recipient_rut" | "issuer_rut" | "schema" | "totals" | "duplicate" | "sii_status";

/** Who signed a received document, as the signer check reports it (dates ISO 8601). */
export interface SignerView {
  name: string | null;
  tax_id: string | null;
  issuer: string | null;
  kind: "CA_ISSUED" | "SELF_SIGNED" | "KEY_ONLY";
  valid_from: string | null;
  valid_to: string | null;
}

export interface Check {
  name: CheckName;
  /**
   * PASSED, FAILED, or NOT_APPLICABLE (a standalone document has no envelope) / NOT_CHECKED (an
   * earlier failure hides it) / UNVERIFIED (signer: a certificate from a CA we cannot confirm is accredited).
   */
  result: "PASSED" | "FAILED" | "NOT_APPLICABLE" | "NOT_CHECKED" | "UNVERIFIED";
  message: string | null;
  /** The signer check's signer (absent on the other checks and when the signature does not verify). */
  signer?: SignerView;
}

/**
 * A received document's checks and the authority's reception code for it, which the company's
 * acknowledgment states (0: received without objection; the country's other codes say why not).
 */
export interface ReceivedVerdict {
  checks: Check[];
  status: number;
}

/** What identifies a received document to its issuer and the authority. */
export interface ReceivedDocumentKey {
  documentType: number;
  folio: number;
  issueDate: string;
  issuerRut: string;
  receiverRut: string;
  total: string;
}

/** One document of a received file, as its country read and verified it. */
export interface ReceivedDocumentReading {
  documentType: number | null;
  folio: number | null;
  /** The issuer's tax id: canonical when valid, as written otherwise, "?" when absent. */
  issuerRut: string;
  receiverRut: string | null;
  issueDate: string | null;
  total: string | null;
  content: ReceivedContent;
  /** The document's own file as verified: what is stored, served, listed and printed. */
  file: { bytes: Uint8Array; charset: string };
  /** Its checks for the company whose tax id is `companyRut`; `duplicate` when another document holds its key. */
  judge(companyRut: string, duplicate: boolean): ReceivedVerdict;
}

/** A received file as its country read it (parsed once; everything stored derives from this). */
export interface ReceivedFileReading {
  /** The file's kind as the country names it (an envelope, a lone document, …). */
  kind: string;
  /** Why nothing of the file is taken (not a document file, a kind companies do not receive, no document), or null. */
  problem: string | null;
  /** The root element's name of a well-formed file that is none of the kinds. */
  root?: string;
  /** What the envelope says of itself (all null for a lone document). */
  envelope: { id: string | null; digest: string | null; issuerRut: string | null; recipientRut: string | null; resolution: IssuerResolution | null };
  documents: ReceivedDocumentReading[];
}

/** What a response to a supplier's document does. */
export type ResponseMeaning = "ACCEPT_CONTENT" | "GOODS_RECEIVED" | "CLAIM";

/** A response a company may give a supplier's document at the authority. */
export interface ResponseKind {
  /** The country's code for it (SupplierResponse). */
  code: SupplierResponse;
  meaning: ResponseMeaning;
  /** Its name in words a bookkeeper understands. */
  name: string;
}

/** Why the authority refused to record a response, in the product's terms. */
export type ResponseRefusal = "DEADLINE_PASSED" | "CONFLICT" | "NOT_AT_AUTHORITY" | "REFUSED";

/** A signed reply file to a supplier. */
export interface ReplyDocument {
  /** Its kind as the API names it for download. */
  type: string;
  xml: Uint8Array;
}

/** Reading suppliers' files and answering them. */
export interface Inbound {
  /**
   * Reads and verifies a received file; `simulated`: also trust the simulated authority's number
   * ranges (a test-mode company's suppliers issue in test mode too).
   */
  read(file: Uint8Array, opts: { simulated: boolean }): Promise<ReceivedFileReading>;
  /** The message of a document's `sii_status` check while the authority has not been asked yet. */
  readonly statusCheckWaiting: string;
  /** The words of a reception code (ReceivedVerdict.status). */
  statusText(status: number): string;
  readonly responses: readonly ResponseKind[];
  /** What the authority's answer to recording a response means: null when it is recorded (or was already). */
  refusalOf(code: number, message: string): { reason: ResponseRefusal; text: string } | null;
  /** The signed reply to the issuer that states a response (`receptionCode`: the company's number for this reception). */
  reply(p: { response: SupplierResponse; reason: string | null; document: ReceivedDocumentKey; responderRut: string; receptionCode: number; signer: Credentials; at: Date }): Promise<ReplyDocument>;
  /**
   * The signed acknowledgment of a received file and each of its documents' reception codes
   * (`file`: what the file said of itself when it came; the acknowledgment names it).
   */
  acknowledgment(p: {
    responderRut: string;
    recipientRut: string;
    receptionCode: number;
    signer: Credentials;
    at: Date;
    file: { name: string; receivedAt: Date | string; envelopeId: string; digest: string | null; issuerRut: string | null; receiverRut: string | null; signatureFailed: boolean };
    documents: (ReceivedDocumentKey & { status: number })[];
  }): Promise<Uint8Array>;
}

/**
 * What the product needs from a country. The registry (src/countries/index.ts) maps a country code to its
 * implementation.
 */
export interface Country {
  /** ISO 3166-1 alpha-2. */
  readonly code: string;
  /** ISO 3166-1 alpha-3, as companies record their country. */
  readonly alpha3: string;
  readonly taxId: TaxIdRules;
  readonly certificates: CertificateRules;
  /** The authority's issuance side, for a Worker's environment (its mode: simulated or real). */
  authority(env: Env, ctx?: ExecutionContext): TaxAuthority;
  /** The authority's register of received documents. */
  reception(env: Env, ctx?: ExecutionContext): ReceptionAuthority;
  readonly responseWindow: ResponseWindow;
  readonly numberRanges: NumberRanges;
  readonly documents: Documents;
  readonly printing: Printing;
  readonly inbound: Inbound;
  /** Cessions of issued documents (factoring), where the country has a register of them. */
  readonly cessions?: Cessions;
  /** Wires the simulated authority to the Worker's own app; called once by the composition root. */
  useInProcessSimulator(fetch: AppFetch): void;
}
