/**
 * The country registry: the one place outside src/countries that knows the countries' folders.
 * Everything else reaches a country through `countryOf(code)` and the port (countries/port.ts).
 * Adding a country is adding its folder and one line here.
 */
import type { Country } from "./port";
import { chile } from "./cl";

const COUNTRIES: readonly Country[] = [chile];

/** The country companies issue in today: the product serves Chile's SII only. */
export const ISSUING_COUNTRY = "CL";

/** The implementation for an ISO 3166-1 alpha-2 code; throws for a country the product does not serve. */
export function countryOf(code: string): Country {
  const found = COUNTRIES.find((c) => c.code === code.trim().toUpperCase());
  if (!found) throw new Error(`No country implementation for ${code}`);
  return found;
}

/** The country companies issue in (see ISSUING_COUNTRY). */
export const issuingCountry = (): Country => countryOf(ISSUING_COUNTRY);
