/** Checks shared by the section builders: text, dates, amounts and rates sent by the client. */
import { EngineError } from "../../errors";
import { formatScaled, parseScaled } from "../decimal";
import { invoiceSchema, type InvoiceInput } from "./schema";
import { RATE_SCALE } from "./tax-codes";

/** Text limits enforced before anything is used (field path -> max length). */
export const LIMITS = {
  legalName: 100,
  issuerActivity: 80,
  recipientActivity: 40,
  address: 70,
  commune: 20,
  itemName: 80,
  unit: 4,
  reason: 90,
  folioRef: 18,
};

export function checkLatin1(value: unknown, path: string): void {
  if (typeof value === "string") {
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c > 0xff || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0x7f && c <= 0x9f)) {
        const ch = value.codePointAt(i)!;
        throw new EngineError("CHARACTER_NOT_LATIN1", `${path} contains the character U+${ch.toString(16).toUpperCase().padStart(4, "0")}, which ISO-8859-1 SII documents cannot carry`, { field: path });
      }
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkLatin1(v, `${path}[${i}]`));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) checkLatin1(v, path ? `${path}.${k}` : k);
  }
}

export function checkLength(value: string | undefined, max: number, field: string): void {
  if (value !== undefined && value.length > max) {
    throw new EngineError("FIELD_TOO_LONG", `${field} has ${value.length} characters; the SII allows at most ${max}`, { field, expected: `≤ ${max} characters` });
  }
}

export function checkDate(value: string, field: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new EngineError("INVALID_DATE", `${field} must be a date YYYY-MM-DD`, { field });
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]);
  const dt = new Date(Date.UTC(y, mo - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) {
    throw new EngineError("INVALID_DATE", `${field} is not a calendar date: ${value}`, { field });
  }
  if (value < "2000-01-01" || value > "2050-12-31") {
    throw new EngineError("INVALID_DATE", `${field} must be between 2000-01-01 and 2050-12-31 (SII FechaType)`, { field });
  }
  return value;
}

export function checkDateTime(value: string, field: string): { date: string; dateTime: string } {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!m) throw new EngineError("INVALID_DATE", `${field} must be YYYY-MM-DD HH:MM:SS`, { field });
  const date = checkDate(m[1]!, field);
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) throw new EngineError("INVALID_DATE", `${field} has an invalid time`, { field });
  return { date, dateTime: `${date}T${m[2]}:${m[3]}:${m[4]}` };
}

export function sameRate(sent: unknown, expected: string, field: string): void {
  if (sent === undefined) return;
  const a = parseScaled(sent, RATE_SCALE + 2, field);
  const b = parseScaled(expected, RATE_SCALE + 2, field);
  if (a !== b) throw new EngineError("TAX_RATE_MISMATCH", `${field} is ${formatScaled(a, RATE_SCALE + 2)} but the rate is ${expected}`, { field, expected });
}

export function sameAmount(sent: unknown, expected: bigint, scale: number, field: string): void {
  if (sent === undefined) return;
  const a = parseScaled(sent, scale, field, { allowNegative: true });
  if (a !== expected) {
    const e = formatScaled(expected, scale);
    throw new EngineError("TOTALS_MISMATCH", `${field} is ${formatScaled(a, scale)} but the engine computes ${e}`, { field, expected: e });
  }
}

export const MAX_AMOUNT = 10n ** 18n - 1n;

/** Accepts an already-parsed object (e.g. JSON) or a typed InvoiceInput. Throws INVALID_INPUT with a path. */
export function parseInvoice(input: unknown): InvoiceInput {
  const r = invoiceSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
    const i = issue as { code: string; origin?: string; maximum?: number | bigint };
    if (i.code === "too_big" && i.origin === "string") {
      throw new EngineError("FIELD_TOO_LONG", `${field} is longer than the SII allows (${String(i.maximum)} characters)`, { field, expected: `≤ ${String(i.maximum)} characters` });
    }
    throw new EngineError("INVALID_INPUT", `${field || "body"}: ${issue.message}`, { field: field || undefined });
  }
  return r.data;
}


/** A field or value the document type cannot carry. */
export function notAllowed(field: string, message: string): never {
  throw new EngineError("FIELD_NOT_ALLOWED", `${field}: ${message}`, { field });
}
