/**
 * Per-DTE verification of a received file, each check reported on its own, and the
 * EstadoRecepDTE outcome. The cryptography is the engine's (countries/cl/exchange/verify.ts); this module
 * only orders and names the results. The last check, `sii_status` (the SII's own status of the
 * document), is answered after intake by a queue message (./sii-status.ts): intake records it
 * NOT_CHECKED, waiting or with the reason it will not be asked; it never changes EstadoRecepDTE.
 */
import { DTE_RECEPTION_STATUS, isValidRut, normalizeRut, type InboundDteReport, type InboundReport } from "../countries/cl";

export type CheckName = "envelope_signature" | "dte_signature" | "signer" | "ted" | "caf" | "recipient_rut" | "issuer_rut" | "schema" | "totals" | "duplicate" | "sii_status";
export interface Check {
  name: CheckName;
  /**
   * PASSED, FAILED, or NOT_APPLICABLE (a standalone DTE has no envelope) / NOT_CHECKED (an earlier
   * failure hides it) / UNVERIFIED (signer: a certificate from a CA we cannot confirm is accredited).
   */
  result: "PASSED" | "FAILED" | "NOT_APPLICABLE" | "NOT_CHECKED" | "UNVERIFIED";
  message: string | null;
  /** The signer check's signer (absent on the other checks and when the signature does not verify). */
  signer?: SignerView;
}

/** Who signed, as the signer check reports it (dates ISO 8601). */
export interface SignerView {
  name: string | null;
  tax_id: string | null;
  issuer: string | null;
  kind: "CA_ISSUED" | "SELF_SIGNED" | "KEY_ONLY";
  valid_from: string | null;
  valid_to: string | null;
}

const pass = (name: CheckName): Check => ({ name, result: "PASSED", message: null });
const fail = (name: CheckName, message: string): Check => ({ name, result: "FAILED", message });
const notChecked = (name: CheckName, why: string): Check => ({ name, result: "NOT_CHECKED", message: why });

function tedAndCaf(d: InboundDteReport): Check[] {
  const t = d.ted;
  if (t.failure === "CAF_BAD_SIGNATURE" || t.failure === "CAF_UNKNOWN_IDK" || t.failure === "CAF_MALFORMED") {
    return [notChecked("ted", "The stamp's CAF is not trusted, so the stamp proves nothing."), fail("caf", t.message ?? t.failure)];
  }
  // A stamp that verifies but disagrees with the document's fields is a failed stamp too (the engine compares them).
  if (!t.ok) return [fail("ted", t.message ?? t.failure ?? "The stamp is invalid"), t.failure === "TED_MISSING" ? notChecked("caf", "No stamp, no CAF.") : pass("caf")];
  return [pass("ted"), pass("caf")];
}

/** The signer check: its verdict, and who signed when the signature names someone. */
function signerCheck(d: InboundDteReport): Check {
  const s = d.signer;
  if (!s) return notChecked("signer", "The signer was not checked.");
  const check: Check = { name: "signer", result: s.result, message: s.message };
  if (s.kind) check.signer = { name: s.name, tax_id: s.rut, issuer: s.issuer, kind: s.kind, valid_from: s.notBefore, valid_to: s.notAfter };
  return check;
}

const totalsCheck = (d: InboundDteReport): Check => (d.totals ? { name: "totals", result: d.totals.result, message: d.totals.message } : notChecked("totals", "The totals were not checked."));

/** VERIFIED only when every check passed (or does not apply); a document the SII would accept with a check short of that needs a person's review. */
export function verificationStatus(receptionStatus: number | null, checks: Check[]): "PENDING" | "VERIFIED" | "NEEDS_REVIEW" | "FAILED" {
  if (receptionStatus === null) return "PENDING";
  if (receptionStatus !== 0 || siiStatusFailed(checks)) return "FAILED";
  // The SII's own status is an assurance on top: not asked or not listed yet, the document is still verified.
  return checks.every((c) => c.result === "PASSED" || c.result === "NOT_APPLICABLE" || c.name === "sii_status") ? "VERIFIED" : "NEEDS_REVIEW";
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The SII schema's verdict (element order, required elements, types, lengths) and the fields intake relies on. */
function schemaProblems(d: InboundDteReport): string[] {
  const p: string[] = [...d.schemaErrors];
  if (!d.id) p.push("Documento has no ID");
  if (d.documentType === null) p.push("TipoDTE missing or not a number");
  if (d.folio === null || d.folio < 1) p.push("Folio missing or not a positive number");
  if (!d.issueDate || !DATE.test(d.issueDate)) p.push("FchEmis missing or not YYYY-MM-DD");
  if (!d.total || !/^-?\d+(\.\d+)?$/.test(d.total)) p.push("MntTotal missing or not a number");
  if (!d.issuerRut) p.push("RUTEmisor missing");
  if (!d.receiverRut) p.push("RUTRecep missing");
  return p;
}

/** The message of a `sii_status` check not asked yet: its queue message is coming (./sii-status.ts). */
export const SII_STATUS_WAITING = "Not asked yet: the SII's register is read once the document is stored.";
/** The document's own cryptographic checks (the envelope's signature is the file's, not the document's). */
const CRYPTO_CHECKS: CheckName[] = ["dte_signature", "ted", "caf"];

/** `sii_status` as intake records it: waiting for its queue message, or why the SII will not be asked. */
function siiStatusAtIntake(checks: Check[], d: InboundDteReport): Check {
  if (checks.some((c) => CRYPTO_CHECKS.includes(c.name) && c.result === "FAILED")) {
    return notChecked("sii_status", "The document failed its cryptographic checks: the SII's register is not asked about it.");
  }
  const askable = !!d.issueDate && DATE.test(d.issueDate) && !!d.total && /^-?\d+$/.test(d.total) && !!d.receiverRut && isValidRut(d.receiverRut) && !!d.issuerRut && isValidRut(d.issuerRut);
  if (!askable) return notChecked("sii_status", "The document lacks data the SII is asked with (issue date, a whole total, valid RUTs): the SII's register is not asked about it.");
  return notChecked("sii_status", SII_STATUS_WAITING);
}

/** Whether the SII's register holds other data for the document (then its verification is FAILED, whatever its EstadoRecepDTE). */
export function siiStatusFailed(checks: Check[]): boolean {
  return checks.some((c) => c.name === "sii_status" && c.result === "FAILED");
}

/** The document's verification as shown: PENDING until its XML arrives; FAILED when EstadoRecepDTE is not 0 or the SII holds other data for it. */

export interface DteVerdict {
  checks: Check[];
  /** EstadoRecepDTE. */
  status: number;
}

/** The checks of one DTE of `report` and its EstadoRecepDTE, given the company's RUT and whether another DTE holds its key. */
export function judge(report: InboundReport, d: InboundDteReport, companyRut: string, duplicate: boolean): DteVerdict {
  const env: Check = report.kind === "DTE" ? { name: "envelope_signature", result: "NOT_APPLICABLE", message: "A standalone DTE has no envelope." }
    : report.envelopeSignature?.ok ? pass("envelope_signature")
    : fail("envelope_signature", report.envelopeSignature?.message ?? "The envelope signature is missing");
  // A signature that verified in a form other than the file's own says which (verify.ts).
  const sig = d.signature.ok ? { ...pass("dte_signature"), message: d.signature.message ?? null } : fail("dte_signature", d.signature.message ?? d.signature.failure ?? "The signature does not verify");
  const recipient = d.receiverRut && isValidRut(d.receiverRut) && normalizeRut(d.receiverRut) === companyRut
    ? pass("recipient_rut") : fail("recipient_rut", `The document is addressed to ${d.receiverRut ?? "nobody"}, not to this company (${companyRut}).`);
  const envIssuer = report.caratula?.rutEmisor;
  const issuerOk = !!d.issuerRut && isValidRut(d.issuerRut) && (!envIssuer || (isValidRut(envIssuer) && normalizeRut(envIssuer) === normalizeRut(d.issuerRut)));
  const issuer = issuerOk ? pass("issuer_rut") : fail("issuer_rut", `The issuer RUT ${d.issuerRut ?? "(none)"} is invalid or differs from the envelope's RutEmisor ${envIssuer ?? ""}.`);
  const problems = schemaProblems(d);
  const schema = problems.length ? fail("schema", problems.join("; ")) : pass("schema");
  const dup = duplicate ? fail("duplicate", "Another, different document with the same issuer, type and folio was received before.") : pass("duplicate");
  const checks = [env, sig, signerCheck(d), ...tedAndCaf(d), recipient, issuer, schema, totalsCheck(d), dup];
  checks.push(siiStatusAtIntake(checks, d));
  const failed = (n: CheckName) => checks.some((c) => c.name === n && c.result === "FAILED");
  const S = DTE_RECEPTION_STATUS;
  // A signer no CA vouches for is a signature error; one we cannot confirm, and totals that disagree, the SII accepts (reviewed, not refused).
  const status = failed("envelope_signature") || failed("dte_signature") || failed("signer") || failed("ted") || failed("caf") ? S.SIGNATURE_ERROR
    : failed("issuer_rut") ? S.ISSUER_RUT_ERROR
    : failed("recipient_rut") ? S.RECEIVER_RUT_ERROR
    : failed("duplicate") ? S.REPEATED
    : failed("schema") ? S.OTHER
    : S.OK;
  return { checks, status };
}
