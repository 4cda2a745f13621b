/**
 * Reference catalogs, one module per country (spec §1: "Reference catalogs are organised per
 * country"). A country is data plus a small adapter: its list of catalogs and the code checks its
 * invoice engine uses. Adding Peru or Mexico means a new folder with its tables and one
 * `CountryCatalogs` object registered in ./index.ts.
 */

/** One row of a catalog: a code, a name and the table's own attributes. */
export interface CatalogEntry {
  code: string;
  name: string;
  attributes: Record<string, string | number | boolean | null | readonly (string | number)[]>;
}

/** Where a table comes from, and whether we hold all of it. */
export interface CatalogSource {
  /** Issuing body and document, e.g. "SII, Formato DTE v2.2, tabla de impuestos adicionales". */
  document: string;
  /** Date (YYYY-MM-DD) of the edition the data follows. */
  date: string;
  /** false when only part of the official table is held: `note` says what is missing. */
  complete: boolean;
  note?: string;
}

export interface Catalog {
  /** Last path segment(s) under /api/catalogs/{country}/, e.g. "measurement-units". */
  slug: string;
  /** OpenAPI tag (spec §1 functional area). */
  tag: string;
  title: string;
  description: string;
  source: CatalogSource;
  entries: readonly CatalogEntry[];
}

export interface CountryCatalogs {
  /** ISO 3166-1 alpha-2 and alpha-3 of the country. */
  alpha2: string;
  alpha3: string;
  catalogs: readonly Catalog[];
}

/** A catalog entry from a plain row: `code`, `name`, everything else becomes an attribute. */
export function entry(code: string | number, name: string, attributes: CatalogEntry["attributes"] = {}): CatalogEntry {
  return { code: String(code), name, attributes };
}

/** Rows of `{code, name, ...}` (the JSON data files) as entries. */
export function entriesOf(rows: readonly Record<string, any>[]): CatalogEntry[] {
  return rows.map(({ code, name, ...rest }) => entry(code, name, rest));
}
