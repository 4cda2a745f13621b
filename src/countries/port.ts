import type { SigningCredentials } from "./cl/certificate";

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
