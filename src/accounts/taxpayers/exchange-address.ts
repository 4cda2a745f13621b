/**
 * A taxpayer's exchange address (`MAIL INTERCAMBIO`), which the SII publishes for exactly this: where
 * DTEs addressed to it and replies to its DTEs are mailed. From the imported directory; in
 * simulator mode also the simulator's own companies. Null when neither knows the RUT.
 */
import { canonicalRut, findTaxpayer } from "./repository";
import { SIMULATOR_TAXPAYERS } from "./simulator-companies";

export const EMAIL_ADDRESS = /^[^\s@<>",;]+@[^\s@<>",;]+$/;

export async function exchangeAddress(db: D1Database, siiMode: string, rutText: string): Promise<string | null> {
  const rut = canonicalRut(rutText);
  if (!rut) return null;
  const listed = (await findTaxpayer(db, rut)) ?? (siiMode === "simulator" ? SIMULATOR_TAXPAYERS.find((t) => t.rut === rut) : undefined);
  return listed?.exchangeEmail && EMAIL_ADDRESS.test(listed.exchangeEmail) ? listed.exchangeEmail : null;
}
