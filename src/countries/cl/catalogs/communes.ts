import { fold } from "../../catalogs/query";
import { entry, type CatalogEntry } from "../../catalogs/types";
import rows from "./data/communes.json";

/**
 * Chile's 346 communes: `code` is the official numeric code (Código Único Territorial), `name` the
 * official name in capitals, `aliases` the other spellings in use (the SII's lists, older names).
 * Each names the SII unit with jurisdiction over it: the one home of that fact (the PDF prints it).
 */
export interface Commune {
  code: string;
  name: string;
  regionCode: string;
  siiOffice: string;
  aliases: readonly string[];
}

export const COMMUNES: readonly Commune[] = rows.map((r) => ({ code: r.code, name: r.name, regionCode: r.region_code, siiOffice: r.sii_office, aliases: r.aliases }));

export const COMMUNE_ENTRIES: readonly CatalogEntry[] = COMMUNES.map((c) =>
  entry(c.code, c.name, { region_code: c.regionCode, sii_office: c.siiOffice, aliases: c.aliases }),
);

/** Spaces, dots, hyphens and apostrophes do not tell communes apart ("Til Til" = "TILTIL"). */
const key = (s: string) => fold(s).replace(/[^a-z0-9]/g, "");

const BY_KEY = new Map<string, Commune>();
for (const c of COMMUNES) for (const k of [c.code, String(Number(c.code)), c.name, ...c.aliases]) BY_KEY.set(key(k), c);

/** The commune written as its code, its name or a known spelling, ignoring case and accents. */
export function findCommune(text: string | undefined): Commune | undefined {
  return text === undefined || text.trim() === "" ? undefined : BY_KEY.get(key(text));
}

/**
 * "S.I.I. - ÑUÑOA" for "Ñuñoa": what the PDF prints under the red box, from the first of the places
 * given (the commune, then the city) that is a known commune; undefined when none is.
 */
export function siiOfficeLabel(...places: (string | undefined)[]): string | undefined {
  for (const p of places) {
    const c = findCommune(p);
    if (c) return `S.I.I. - ${c.siiOffice}`;
  }
  return undefined;
}
