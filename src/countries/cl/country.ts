/**
 * Chile as the product sees it (the country port, ../port.ts): the SII as tax authority, RUTs as tax
 * identification numbers, the SII's response window for received documents, the simulated SII.
 */
import type { Country, TaxIdResult } from "../port";
import { addSixMonths } from "./documents/caf";
import { EXPIRING_CAF_TYPES } from "./documents/document-types";
import { ACTIONABLE_TYPES, APPROACHING_MS, deadlineOf } from "./documents/response-window";
import { formatRutWithDots, isValidRut, normalizeRut, parseRut, RutError } from "./documents/rut";
import { siiAuthority, siiReception } from "./sii/authority";
import { useInProcessSimulator } from "./sii";
import { chileanDocuments, parseRange } from "./issuing";
import { chileanPrinting } from "./printed/issued";
import { chileanCertificates } from "./certificates";
import { chileanInbound } from "./reception/inbound";
import { chileanCessions } from "./cession";

/**
 * A RUT in its stored form (`76086428-5`) from any of `760864285`, `76086428-5`, `76.086.428-5`,
 * `12345678-k`, or why not; the length rule (4 to 20) applies to the digits, check digit included.
 */
function checkRut(input: string): TaxIdResult {
  const digits = input.trim().replace(/[.\s-]/g, "");
  if (digits.length < 4 || digits.length > 20) return { ok: false, message: "A RUT has 4 to 20 characters, check digit included" };
  try {
    const rut = parseRut(input);
    return { ok: true, canonical: `${rut.body}-${rut.dv}` };
  } catch (e) {
    if (e instanceof RutError && e.problem === "CHECK_DIGIT") return { ok: false, message: e.message };
    return { ok: false, message: "Not a RUT: use digits and a check digit (0-9 or K), e.g. 76086428-5, 76.086.428-5 or 760864285" };
  }
}

export const chile: Country = {
  code: "CL",
  alpha3: "CHL",
  taxId: {
    normalize: normalizeRut,
    isValid: isValidRut,
    check: checkRut,
    printed: (input) => formatRutWithDots(parseRut(input)),
  },
  certificates: chileanCertificates,
  authority: (env, ctx) => siiAuthority(env, ctx),
  reception: (env, ctx) => siiReception(env, ctx),
  responseWindow: { types: ACTIONABLE_TYPES, approachingMs: APPROACHING_MS, deadlineOf },
  // A CAF of the expiring types may be used for 6 calendar months from its authorisation (FA).
  numberRanges: { expiryDate: (documentType, authorizedOn) => (EXPIRING_CAF_TYPES.includes(documentType) ? addSixMonths(authorizedOn) : null), parse: parseRange },
  documents: chileanDocuments,
  printing: chileanPrinting,
  inbound: chileanInbound,
  cessions: chileanCessions,
  useInProcessSimulator,
};
