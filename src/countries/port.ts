import type { SigningCredentials } from "./cl/pki/certificate";

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
  /** The authority's own code for the document or its envelope (EPR, DOK, RLV, RCH, RSC...). */
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
 * The country port of the issuance pipeline (DECISIONS 15): what the pipeline needs from a tax
 * authority. Chile implements it in cl/sii/authority.ts over the SII client (`siiAuthority(env)`).
 */
export interface TaxAuthority {
  upload(p: { kind: "EnvioDTE" | "EnvioBOLETA"; xml: Uint8Array; companyRut: string; signer: SigningCredentials; fileName: string }): Promise<{ trackId: string; duplicate: boolean }>;
  poll(p: { kind: "EnvioDTE" | "EnvioBOLETA"; trackId: string; companyRut: string; signer: SigningCredentials; documents: DocumentKey[] }): Promise<EnvelopeVerdict>;
  /** A CAF file for the range (or the next `quantity` folios), where the authority hands them out as a service. */
  requestCaf(p: { rut: string; documentType: number; from?: number; to?: number; quantity?: number; legalName?: string }): Promise<Uint8Array>;
}

// ---- reception: the authority's side of documents a company receives ------------------

export type ReceptionAction = "ACD" | "ERM" | "RCD" | "RFP" | "RFT";

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
  /** ISO 8601, the SII reception time. */
  receivedAt: string;
}

/**
 * The country port of reception: the authority's accept/claim register. Network failures and the
 * authority's internal errors throw AuthorityError(retryable: true); refusals come back as codes.
 */
export interface ReceptionAuthority {
  /** ingresarAceptacionReclamoDoc: the SII's codResp/descResp as they came (0 = OK). */
  recordAction(p: { companyRut: string; signer: SigningCredentials; issuerRut: string; documentType: number; folio: number; action: ReceptionAction }): Promise<{ code: number; message: string }>;
  /** listarEventosHistDoc */
  listEvents(p: { companyRut: string; signer: SigningCredentials; issuerRut: string; documentType: number; folio: number }): Promise<AuthorityEvent[]>;
  /** consultarFechaRecepcionSii, as ISO 8601 (Chile time with its offset), or null when the SII has not received it. */
  receptionTime(p: { companyRut: string; signer: SigningCredentials; issuerRut: string; documentType: number; folio: number }): Promise<string | null>;
  /** Documents the authority holds with companyRut as recipient, received after `since`. */
  listReceived(p: { companyRut: string; signer: SigningCredentials; since?: string }): Promise<{ supported: boolean; documents: RegisteredDocument[] }>;
  /**
   * The signed DTE of a document of the register, as its issuer signed it (a standalone DTE file),
   * or null when the authority does not hand it out (the real SII never does; the simulator does).
   */
  receivedXml(p: { companyRut: string; signer: SigningCredentials; issuerRut: string; documentType: number; folio: number }): Promise<Uint8Array | null>;
  /**
   * The authority's own status of one document, asked with the data the document shows (the SII's
   * QueryEstDte). `companyRut` is the company asking (its certificate's holder is the consultant).
   * Refusals of the query itself throw AuthorityError(retryable: false).
   */
  documentStatus(p: { companyRut: string; signer: SigningCredentials; issuerRut: string; receiverRut: string; documentType: number; folio: number; issueDate: string; total: string }): Promise<RegisteredStatus>;
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
