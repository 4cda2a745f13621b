/**
 * What the folio allocator Durable Object answers (its RPC contract), and how to reach the one of a
 * company and document type. The object itself (src/folios/allocator) carries out
 * the pure rules of ./rules.ts.
 */
import type { AlertEvent, AllocationFailure, AnnulError, RangeInput, SetNextFolioError } from "./rules";

/** TOO_OLD: the document was created before the allocator's pruning horizon (see folio-allocator/pruning.ts). */
export type AllocateFailureReason = AllocationFailure | "INVALID_DOCUMENT_ID" | "RESERVED" | "TOO_OLD";

/**
 * A reservation: the right to one folio, taken when a document is accepted (POST) and turned into
 * its folio by `allocate` in the pipeline. Refused when every folio left is reserved already, or when
 * the document's issue date precedes the authorisation date (FA) of the CAF its folio would come from.
 */
export type ReserveResult =
  | { ok: true; documentId: string; replay: boolean; authorizedAt: string | null }
  | { ok: false; reason: AllocationFailure | "INVALID_DOCUMENT_ID" | "BEFORE_AUTHORIZATION" | "TOO_OLD"; message: string; authorizedAt?: string };

export interface ReserveOptions extends AllocateOptions {
  /** The document's issue date (YYYY-MM-DD), checked against the CAF's authorisation date. */
  issueDate?: string;
}

export type AllocateResult =
  | {
      ok: true;
      folio: number;
      cafId: string;
      documentId: string;
      /** true when this document already had its folio (repeat or redelivery): nothing new consumed. */
      replay: boolean;
    }
  | { ok: false; reason: AllocateFailureReason; message: string };

export interface AllocateOptions {
  /** Clock override (epoch ms) for expiry decisions; defaults to Date.now(). */
  now?: number;
}

/**
 * A CAF range to load. expiresAt: an ISO instant, null (never expires), or omitted to derive it from
 * the document type (6 months after authorizedAt for 33, 43, 46, 56, 61; never for the others).
 */
export type AddRangeInput = Omit<RangeInput, "expiresAt"> & { expiresAt?: string | null };

export type AddRangeResult =
  | { ok: true; cafId: string; created: boolean }
  | { ok: false; code: "FOLIO_RANGE_INVALID" | "FOLIO_RANGE_DUPLICATE"; message: string }
  | { ok: false; code: "FOLIO_RANGE_OVERLAP"; message: string; conflictingCafId: string };

export type DeactivateRangeResult =
  | { ok: true; cafId: string; changed: boolean }
  | { ok: false; code: "FOLIO_RANGE_NOT_FOUND"; message: string };

/** The §4.7 response body on success. */
export interface SetNextFolioResponse {
  id_document_type: string;
  folios_updated: number;
  next_number_to_use: number;
  message: string;
}

export type SetNextFolioResult = ({ ok: true } & SetNextFolioResponse) | ({ ok: false } & SetNextFolioError);

export type AnnulResult = { ok: true; folio: number; cafId: string } | ({ ok: false } & AnnulError);

export type SetThresholdResult =
  | { ok: true; threshold: number; is_default: boolean }
  | { ok: false; code: "THRESHOLD_INVALID"; message: string };

export interface RangeStatus {
  caf_id: string;
  from: number;
  to: number;
  active: boolean;
  authorized_at: string;
  expires_at: string | null;
  expired: boolean;
  /** Unused folios left in this range (also for inactive or expired ranges). */
  available: number;
  /** The range's lowest unused folio, or null when it is used up. */
  next_folio: number | null;
  annulled: number;
}

export interface FolioStatus {
  company_id: string;
  document_type: string;
  ranges: RangeStatus[];
  /** Folios that allocation can still hand out (active, non-expired ranges). */
  total_available: number;
  /** Unused folios of active ranges that expired: never consumed, reported here. */
  expired_unused: number;
  next_folio_to_use: number | null;
  threshold: number;
  threshold_is_default: boolean;
  /** Folios ever allocated to documents: the rows kept plus those pruned after the retention. */
  allocated: number;
  /** Reservations (accepted documents still waiting for their folio); total_available counts them. */
  reserved: number;
}

export interface AllocationRecord {
  documentId: string;
  folio: number;
  cafId: string;
  allocatedAt: string;
}

/** ENU event payload (also the event_outbox.payload JSON). */
export interface EnuPayload {
  event: "ENU";
  company_id: string;
  document_type: string;
  reason: AlertEvent["reason"];
  available: number;
  threshold: number;
  caf_id?: string;
  expires_at?: string;
  range_available?: number;
  detected_at: string;
}

export function folioAllocatorName(companyId: string, documentType: string): string {
  return `${companyId}:${documentType}`;
}

/** The stub of the allocator of one company and document type. */
export function folioAllocatorFor(ns: Env["FOLIO_ALLOCATOR"], companyId: string, documentType: string) {
  return ns.get(ns.idFromName(folioAllocatorName(companyId, documentType)));
}
