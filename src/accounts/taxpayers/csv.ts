import { issuingCountry } from "../../countries";

/**
 * One row of the SII's list of authorised electronic taxpayers (sii-formats.md §5):
 * `RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL`, ';'-separated, a
 * header line first. Dates come as DD-MM-YYYY (also accepted: YYYY-MM-DD).
 */
export interface TaxpayerRow {
  rut: string;
  legalName: string;
  resolutionNumber: number;
  resolutionDate: string;
  exchangeEmail: string | null;
  url: string | null;
}

export type ParsedLine = { ok: true; row: TaxpayerRow } | { ok: false; reason: string };

export const TAXPAYER_CSV_HEADER = "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL";

const EMAIL = /^[^\s@;]+@[^\s@;]+\.[^\s@;]+$/;

function isoDate(s: string): string | null {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(s) ?? /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const [y, mo, d] = s.length === 10 && s[4] === "-" ? [m[1]!, m[2]!, m[3]!] : [m[3]!, m[2]!, m[1]!];
  const t = new Date(`${y}-${mo}-${d}T00:00:00Z`);
  if (Number.isNaN(t.getTime()) || t.toISOString().slice(0, 10) !== `${y}-${mo}-${d}`) return null;
  return `${y}-${mo}-${d}`;
}

/** Parses one data line; a bad line gives the reason instead of a row. */
export function parseTaxpayerLine(line: string): ParsedLine {
  const cols = line.split(";").map((c) => c.trim());
  if (cols.length < 4 || cols.length > 6) return { ok: false, reason: `expected 6 ';'-separated columns, found ${cols.length}` };
  const [rutText, name, resolution, date, email = "", url = ""] = cols as [string, string, string, string, string?, string?];
  let rut: string;
  try {
    rut = issuingCountry().taxId.normalize(rutText);
  } catch {
    return { ok: false, reason: `RUT "${rutText}" is malformed or its check digit is wrong` };
  }
  if (!name || name.length > 200) return { ok: false, reason: "RAZON SOCIAL is empty or longer than 200 characters" };
  if (!/^\d{1,9}$/.test(resolution)) return { ok: false, reason: `NUMERO RESOLUCION "${resolution}" is not a whole number` };
  const resolutionDate = isoDate(date);
  if (!resolutionDate) return { ok: false, reason: `FECHA RESOLUCION "${date}" is not a date (DD-MM-YYYY)` };
  if (email && (email.length > 254 || !EMAIL.test(email))) return { ok: false, reason: `MAIL INTERCAMBIO "${email}" is not an e-mail address` };
  if (url.length > 500) return { ok: false, reason: "URL longer than 500 characters" };
  return { ok: true, row: { rut, legalName: name, resolutionNumber: Number(resolution), resolutionDate, exchangeEmail: email || null, url: url || null } };
}

export interface BadLine {
  line: number;
  reason: string;
}

/**
 * Parses a whole file's text: skips the header and blank lines; repeats of a RUT keep the last
 * row (reported). Returns the good rows and the bad lines with their numbers (1-based).
 */
export function parseTaxpayerCsv(text: string): { rows: TaxpayerRow[]; bad: BadLine[] } {
  const byRut = new Map<string, TaxpayerRow>();
  const bad: BadLine[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    if (i === 0 && /^\s*RUT\s*;/i.test(line)) return;
    const p = parseTaxpayerLine(line);
    if (!p.ok) return void bad.push({ line: i + 1, reason: p.reason });
    if (byRut.has(p.row.rut)) bad.push({ line: i + 1, reason: `RUT ${p.row.rut} repeated; the later row is kept` });
    byRut.set(p.row.rut, p.row);
  });
  return { rows: [...byRut.values()], bad };
}
