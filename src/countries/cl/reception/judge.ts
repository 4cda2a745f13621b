/**
 * The checks of one received DTE, each reported on its own, and its EstadoRecepDTE. The cryptography
 * is the verification's (../exchange/verify.ts); this module only orders and names the results. The
 * last check, `sii_status` (the SII's own status of the document), is answered after intake by the
 * product's queue: intake records it NOT_CHECKED, waiting (SII_STATUS_WAITING) or with the reason it
 * will not be asked; it never changes EstadoRecepDTE.
 */
import type { Check, CheckName, ReceivedVerdict } from "../../port";
import { DTE_RECEPTION_STATUS } from "../exchange/responses";
import type { InboundDteReport, InboundReport } from "../exchange/verify";
import { isValidRut, normalizeRut } from "../documents/rut";

/** The message of a `sii_status` check not asked yet: its queue message is coming. */
export const SII_STATUS_WAITING = "Not asked yet: the SII's register is read once the document is stored.";

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


/** The checks of one DTE of `report` and its EstadoRecepDTE, given the company's RUT and whether another DTE holds its key. */
export function judge(report: InboundReport, d: InboundDteReport, companyRut: string, duplicate: boolean): ReceivedVerdict {
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
