/**
 * The country port: what the product needs from a country's tax authority and document rules, in
 * the product's own terms. A country implements `Country` in its folder (src/countries/<code>/);
 * src/country.ts maps a country code to its implementation. Nothing here names a country's codes
 * or types: where a value is the authority's own (an envelope kind, a status code, a response code),
 * it is a string the country defines and explains.
 */

/**
 * A company's signing credentials (certificate and private key) as its country loaded them. Opaque
 * to the product: it hands them back to the country that made them.
 */
export interface Credentials {
  readonly notBefore: Date;
  readonly notAfter: Date;
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

// ---- cessions: a document's credit transferred to a third party (factoring) --------------------------

/** A party to a cession: the assignor (cedent) or the assignee. */
export interface CessionParty {
  taxId: string;
  legalName: string;
  address: string;
  email: string;
}

/** What the country needs to build and sign the cession file of one issued document. */
export interface CessionRequest {
  /** The issuer's signed document, as stored. */
  document: Uint8Array;
  cedent: CessionParty;
  assignee: CessionParty;
  /** The amount ceded, a whole amount of the document's currency. */
  amount: string;
  /** YYYY-MM-DD. */
  lastDueDate: string;
  debtorEmail?: string;
  otherConditions?: string;
  /** Local YYYY-MM-DDTHH:MM:SS. */
  timestamp: string;
  signer: Credentials;
}

export interface CessionFile {
  xml: Uint8Array;
  fileName: string;
  /** The sworn declaration of the goods' receipt the file carries, when it carries one. */
  declaration: string | null;
}

/** The register's verdict on an uploaded cession file; `fiscalStatus` is the authority's own code. */
export type CessionVerdict = { final: false; fiscalStatus: string; message: string } | { final: true; registered: boolean; fiscalStatus: string; message: string };

/** A document's cession as the register answers it to a company linked to the document. */
export interface RegisteredCession {
  /** Who holds the credit now: pay this party. */
  holderTaxId: string;
  /** ISO 8601 with offset: the last annotation. */
  annotatedAt: string;
  /** A collection agent, when the holder named one. */
  collectionTaxId: string | null;
  /** The amount ceded, when the register tells it (null: it does not). */
  amount: string | null;
}

/**
 * The authority's register of cessions. Network failures and internal errors throw
 * AuthorityError(retryable: true); a refusal of the upload throws AuthorityError(retryable: false).
 */
export interface CessionAuthority {
  upload(p: { xml: Uint8Array; companyRut: string; signer: Credentials; fileName: string; notifyEmail: string }): Promise<{ trackId: string }>;
  poll(p: { trackId: string; companyRut: string; signer: Credentials }): Promise<CessionVerdict>;
  /** The document's current cession as the register answers `companyRut` (its issuer, holder or receiver); null when it is not ceded. */
  current(p: { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number }): Promise<RegisteredCession | null>;
}

/** Cessions of issued documents through the authority's register. */
export interface Cessions {
  /** The document types the register takes. */
  readonly types: ReadonlySet<number>;
  /** Builds and signs the cession file. Rejects with a refusal (`isRefusal`) when its input cannot make one. */
  build(p: CessionRequest): Promise<CessionFile>;
  isRefusal(e: unknown): e is Error;
  authority(env: Env, ctx?: ExecutionContext): CessionAuthority;
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

/** Issuing documents: build, stamp and sign them, and put them in envelopes. */
export interface Documents {
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
  /** Whether an error is the country refusing its input (final: retrying gives the same), with a message the API can show. */
  isRefusal(e: unknown): e is Error;
}

/**
 * What the product needs from a country. The registry (src/country.ts) maps a country code to its
 * implementation.
 */
export interface Country {
  /** ISO 3166-1 alpha-2. */
  readonly code: string;
  readonly taxId: TaxIdRules;
  /** The authority's issuance side, for a Worker's environment (its mode: simulated or real). */
  authority(env: Env, ctx?: ExecutionContext): TaxAuthority;
  /** The authority's register of received documents. */
  reception(env: Env, ctx?: ExecutionContext): ReceptionAuthority;
  readonly responseWindow: ResponseWindow;
  readonly numberRanges: NumberRanges;
  readonly documents: Documents;
  /** Cessions of issued documents (factoring), where the country has a register of them. */
  readonly cessions?: Cessions;
  /** Wires the simulated authority to the Worker's own app; called once by the composition root. */
  useInProcessSimulator(fetch: AppFetch): void;
}
