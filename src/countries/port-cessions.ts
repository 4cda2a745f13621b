/**
 * The country port's cessions (re-exported by ./port.ts, which the product imports): transferring an
 * issued document's credit to a third party through the authority's register (factoring).
 */
import type { AuthorityError, Credentials } from "./port";

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

