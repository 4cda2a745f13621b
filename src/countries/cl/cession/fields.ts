/**
 * The field rules of a cession area, at the stricter of the XSD (Cesion_v10, SiiTypes) and the SII's
 * format document (FMT, cesion.md §2.2): Direccion 5..60, eMail 6..40, RazonSocial 1..100,
 * RUTAutorizado/Nombre ≤ 40, RUTs valid (also Cesionario/RUT, which the XSD leaves untyped), amounts
 * 1..MntTotal, UltimoVencimiento ≥ FchEmis and within 2003-04-01..2050-12-31, TmstCesion a local
 * date-time. Used before signing (the builder) and by the simulated register.
 */
import { isValidRut, normalizeRut } from "../documents/rut";

export interface CessionParty {
  rut: string;
  name: string;
  address: string;
  email: string;
}

/** Limits of the cession's texts (the stricter of XSD and FMT). */
export const CESSION_LIMITS = { name: 100, addressMin: 5, address: 60, emailMin: 6, email: 40, signerName: 40, declaration: 512, conditions: 512 } as const;

const EMAIL = /^[^\s@<>&]+@[^\s@<>&]+\.[^\s@<>&]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const LATIN1 = /^[\u0000-\u00ff]*$/;

/** Problems of one party, each "field: why". */
export function partyProblems(prefix: string, p: CessionParty): string[] {
  const out: string[] = [];
  if (!isValidRut(p.rut) || normalizeRut(p.rut) !== p.rut) out.push(`${prefix}.tax_id: not a RUT in the form 76086428-5`);
  if (p.name.trim().length < 1 || p.name.length > CESSION_LIMITS.name) out.push(`${prefix}.legal_name: 1 to ${CESSION_LIMITS.name} characters`);
  if (p.address.trim().length < CESSION_LIMITS.addressMin || p.address.length > CESSION_LIMITS.address) out.push(`${prefix}.address: ${CESSION_LIMITS.addressMin} to ${CESSION_LIMITS.address} characters`);
  if (!EMAIL.test(p.email) || p.email.length < CESSION_LIMITS.emailMin || p.email.length > CESSION_LIMITS.email) out.push(`${prefix}.email: an e-mail address of ${CESSION_LIMITS.emailMin} to ${CESSION_LIMITS.email} characters`);
  for (const [k, v] of Object.entries(p)) if (!LATIN1.test(v)) out.push(`${prefix}.${k}: a character the SII's files (ISO-8859-1) cannot carry`);
  return out;
}

export function validDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s && s >= "2003-04-01" && s <= "2050-12-31";
}

/** Every problem of a cession's fields, each "field: why" (field names as the API's). */
export function aecFieldProblems(p: {
  cedent: CessionParty;
  assignee: CessionParty;
  amount: string;
  total: string;
  lastDueDate: string;
  issueDate: string;
  authorized: { rut: string; name: string };
  debtorEmail?: string | undefined;
  otherConditions?: string | undefined;
  timestamp: string;
}): string[] {
  const out = [...partyProblems("cedent", p.cedent), ...partyProblems("assignee", p.assignee)];
  if (p.cedent.rut === p.assignee.rut) out.push("assignee.tax_id: the assignee cannot be the cedent itself");
  if (!/^\d{1,18}$/.test(p.amount) || BigInt(p.amount) < 1n) out.push("amount: a whole amount of at least 1");
  else if (/^\d+$/.test(p.total) && BigInt(p.amount) > BigInt(p.total)) out.push(`amount: at most the document's total, ${p.total}`);
  if (!validDate(p.lastDueDate)) out.push("last_due_date: a date YYYY-MM-DD between 2003-04-01 and 2050-12-31");
  else if (p.lastDueDate < p.issueDate) out.push(`last_due_date: not before the document's issue date, ${p.issueDate}`);
  if (!isValidRut(p.authorized.rut)) out.push("signer: the certificate carries no valid RUT of its holder");
  if (p.authorized.name.length > CESSION_LIMITS.signerName || !LATIN1.test(p.authorized.name)) out.push(`signer: its name must fit ${CESSION_LIMITS.signerName} ISO-8859-1 characters`);
  if (p.debtorEmail !== undefined && (!EMAIL.test(p.debtorEmail) || p.debtorEmail.length > 80)) out.push("debtor_email: an e-mail address of at most 80 characters");
  if (p.otherConditions !== undefined && (p.otherConditions.length > CESSION_LIMITS.conditions || !LATIN1.test(p.otherConditions))) out.push(`other_conditions: at most ${CESSION_LIMITS.conditions} ISO-8859-1 characters`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(p.timestamp)) out.push("timestamp: local time YYYY-MM-DDTHH:MM:SS");
  return out;
}
