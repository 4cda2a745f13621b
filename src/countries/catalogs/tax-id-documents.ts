import { countryOf } from "../index";
import { TAX_ID_DOCUMENTS } from "./tax-id-kinds";

/**
 * Tax identification document types per country (./tax-id-kinds.ts). Chile's RUT is validated with
 * its check digit; other countries' numbers are digits only.
 */
export { TAX_ID_DOCUMENTS };

/** Any other country: a generic tax number. */
export const GENERIC_TAX_ID = { code: "TIN", name: "Taxpayer Identification Number" };

export function taxIdDocumentsFor(countryAlpha3: string) {
  return TAX_ID_DOCUMENTS[countryAlpha3] ?? [GENERIC_TAX_ID];
}

export type TaxIdResult = { ok: true; canonical: string } | { ok: false; message: string };

/**
 * Normalises a tax identification number (DECISIONS 1). Chile: any of `760864285`, `76086428-5`,
 * `76.086.428-5`, `12345678-k`; stored as `76086428-5`. Elsewhere: digits only. The length rule
 * (4 to 20) applies to the digits, check digit included.
 */
export function normalizeTaxId(countryAlpha3: string, input: string): TaxIdResult {
  if (countryAlpha3 === "CHL") return countryOf("CL").taxId.check(input);
  const compact = input.trim().replace(/[.\s]/g, "");
  if (!/^(?!-)[0-9]+$/.test(compact)) return { ok: false, message: "Digits only" };
  if (compact.length < 4 || compact.length > 20) return { ok: false, message: "4 to 20 digits" };
  return { ok: true, canonical: compact };
}

/** Best-effort canonical form for list filters: the same value whatever form the caller typed. */
export function taxIdFilterForms(input: string): string[] {
  const compact = input.trim().replace(/[.\s]/g, "").toUpperCase();
  const forms = new Set<string>([compact, compact.replace(/-/g, "")]);
  const m = /^(\d+)-?([\dK])$/.exec(compact);
  if (m && countryOf("CL").taxId.isValid(`${m[1]}-${m[2]}`)) forms.add(`${m[1]}-${m[2]}`);
  return [...forms];
}
