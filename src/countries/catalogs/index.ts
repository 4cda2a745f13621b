import { CHILE } from "../cl/catalogs";
import type { Catalog, CountryCatalogs } from "./types";

export * from "./types";
export * from "./query";

/** Countries with catalogs. Add Peru or Mexico here: data plus one CountryCatalogs object. */
export const COUNTRY_CATALOGS: readonly CountryCatalogs[] = [CHILE];

/** Country by alpha-2 or alpha-3, any case (DECISIONS 2). */
export function countryCatalogs(code: string): CountryCatalogs | undefined {
  const c = code.trim().toUpperCase();
  return COUNTRY_CATALOGS.find((x) => x.alpha2 === c || x.alpha3 === c);
}

export function catalogOf(country: CountryCatalogs, slug: string): Catalog {
  const c = country.catalogs.find((x) => x.slug === slug);
  if (!c) throw new Error(`catalog ${slug} missing for ${country.alpha3}`);
  return c;
}

/** Every slug any country serves (the routes are declared once per slug). */
export function allCatalogSlugs(): Catalog[] {
  const seen = new Map<string, Catalog>();
  for (const c of COUNTRY_CATALOGS) for (const k of c.catalogs) if (!seen.has(k.slug)) seen.set(k.slug, k);
  return [...seen.values()];
}

/**
 * The tables other modules already read, re-exported so the catalog is their one entry point
 * (their files stay where they are while other work restructures those folders).
 */
export { COUNTRIES } from "./countries";
export { TAX_ID_DOCUMENTS, taxIdDocumentsFor } from "./tax-id-documents";
export { DOCUMENT_TYPES, REASON_CODES } from "../cl";
