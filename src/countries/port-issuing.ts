/**
 * The country port's issuing rules (re-exported by ./port.ts, which the product imports): how a
 * country reads, computes and checks the body of a document to issue, and reads its buyers' replies.
 */
import type { ZodType } from "zod";
import { AppError } from "../lib/errors";
import type { Resolution } from "./port";

/**
 * A country's refusal of a body to issue or of what it asks: one of the API's errors (its code, its
 * message and the body's fields it names), answered as it is; nothing is stored.
 */
export class DocumentRefusal extends AppError {}

/** What the product reads of a body itself: the rest is the country's. */
export interface DocumentBody {
  readonly external_reference?: string;
}

/** A document of the issuer's own that a body names in a reference (its field, for refusals). */
export interface NamedDocument {
  field: string;
  documentType: number;
  folio: number;
}

/** A stored document a body refers to, as the product found it. */
export interface StoredTarget {
  id: string;
  documentType: number;
  folio: number | null;
  total: string;
  field: string;
}

/**
 * A note that cancels documents, read from its body as sent (before `prepare`, so that a document of
 * the issuer's gets precise answers): the documents it names, and the country's rules on each.
 */
export interface Cancellation {
  /** In the body's order: the first one the issuer holds is the one cancelled. */
  readonly targets: readonly NamedDocument[];
  /** Throws a DocumentRefusal when the note may not cancel `target` (a type never cancelled, or not by this type). */
  check(target: StoredTarget): void;
  /** Throws a DocumentRefusal when a note totalling `total` does not cancel `target` (it carries its total exactly). */
  checkAmount(target: StoredTarget, total: string): void;
}

/** What a credit note credits: documents of the issuer's, each by the amount `units`, in its own currency. */
export interface Credits {
  readonly documents: readonly { documentType: number; folio: number }[];
  /** What it credits each, in whole minor units of the currency (sums stay exact). */
  readonly units: bigint;
  /** An amount of the currency (a decimal string, e.g. a stored total) in whole minor units, and back. */
  toUnits(amount: string): bigint;
  toAmount(units: bigint): string;
}

/** A body computed and checked by its country: what the product stores and checks of it. */
export interface PreparedDocument {
  readonly documentType: number;
  /** YYYY-MM-DD. */
  readonly issueDate: string;
  /** A decimal string in `currency`. */
  readonly total: string;
  readonly currency: string;
  readonly issuerTaxId: string;
  readonly receiver: { taxId: string; name: string };
  /** What it credits (a credit note that moves amounts), or null. */
  readonly credits: Credits | null;
}

/** The country's side of a document's body: its schema, its computation and its rules. */
export interface IssuingRules {
  /** The body the API accepts and documents (the OpenAPI request schema of an issuance). */
  readonly bodySchema: ZodType<DocumentBody>;
  /**
   * What a company may keep as its issuer profile: the body's `issuer` block without the tax id
   * (the company's own), every field optional. A body without `issuer` is issued with the profile.
   */
  readonly issuerProfileSchema: ZodType<Record<string, unknown>>;
  /** What the body cancels, or null when it cancels nothing. */
  cancellation(body: DocumentBody): Cancellation | null;
  /** Computes and checks the body (amounts, limits, the authority's rules); throws a DocumentRefusal. */
  prepare(body: DocumentBody): PreparedDocument;
  /** Throws a DocumentRefusal when the body names another authorisation of the issuer than `resolution`. */
  checkResolution(body: DocumentBody, resolution: Resolution | null): void;
  readonly buyerReplies: BuyerReplies;
}

// ---- buyer replies: what a buyer answered the issuer directly about its documents ---------------

export type ReplyEntryKind = "RECEPTION" | "RESULT" | "RECEIPT";
export type ReplyStatus = "RECEIVED" | "NOT_RECEIVED" | "ACCEPTED" | "ACCEPTED_WITH_DISCREPANCIES" | "REJECTED" | "GOODS_RECEIVED" | "UNKNOWN";

/** A signature's verdict, and who signed. */
export interface SignatureVerdict {
  ok: boolean;
  message: string | null;
  signerTaxId: string | null;
  signerName: string | null;
}

/**
 * One answer of a reply: the envelope received (RECEPTION), the contents accepted or rejected
 * (RESULT), the goods received (RECEIPT). `envelopeId` set: a verdict on a whole envelope (no
 * document named). `code` is the authority's own, `codeText` its words (null: not in its tables).
 */
export interface ReplyEntry {
  kind: ReplyEntryKind;
  status: ReplyStatus;
  code: number | null;
  codeText: string | null;
  text: string | null;
  rejectionCode: number | null;
  envelopeId: string | null;
  documentType: number | null;
  folio: number | null;
  issueDate: string | null;
  issuerTaxId: string | null;
  receiverTaxId: string | null;
  total: string | null;
  receipt: { place: string | null; signerTaxId: string | null; signedAt: string | null };
  /** The signature that covers the entry. */
  signature: SignatureVerdict;
}

export interface BuyerReply {
  /** The kind of file, as the country names it. */
  kind: string;
  responderTaxId: string | null;
  timestamp: string | null;
  /** The signature of the whole reply. */
  signature: SignatureVerdict;
  entries: ReplyEntry[];
  /** The file to keep: its signed content and signatures only. */
  kept(): { bytes: Uint8Array; contentType: string };
}

export interface BuyerReplies {
  /** Reads a buyer's reply; `{ problem }` when the file is not one. */
  read(bytes: Uint8Array): Promise<BuyerReply | { problem: string }>;
  /** The root element names of a buyer's reply (a file received at the reception address with one of them is read as a reply). */
  readonly roots: readonly string[];
  /** The country's names, for messages: of each kind of entry, and of the code of a verdict on a whole envelope. */
  readonly names: { entries: Readonly<Record<ReplyEntryKind, string>>; envelopeCode: string };
}
