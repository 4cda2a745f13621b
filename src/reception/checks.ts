/**
 * A received document's verification as the API shows it, from the checks its country made at
 * intake (countries/port.ts `Check`) and the SII's status check answered after it (./sii-status.ts).
 */
import type { Check } from "../countries/port";

export type { Check, CheckName, SignerView } from "../countries/port";

/** VERIFIED only when every check passed (or does not apply); a document the SII would accept with a check short of that needs a person's review. */
export function verificationStatus(receptionStatus: number | null, checks: Check[]): "PENDING" | "VERIFIED" | "NEEDS_REVIEW" | "FAILED" {
  if (receptionStatus === null) return "PENDING";
  if (receptionStatus !== 0 || siiStatusFailed(checks)) return "FAILED";
  // The SII's own status is an assurance on top: not asked or not listed yet, the document is still verified.
  return checks.every((c) => c.result === "PASSED" || c.result === "NOT_APPLICABLE" || c.name === "sii_status") ? "VERIFIED" : "NEEDS_REVIEW";
}

/** Whether the SII's register holds other data for the document (then its verification is FAILED, whatever its EstadoRecepDTE). */
export function siiStatusFailed(checks: Check[]): boolean {
  return checks.some((c) => c.name === "sii_status" && c.result === "FAILED");
}

