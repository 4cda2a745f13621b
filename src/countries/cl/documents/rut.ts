/**
 * Chilean RUT (Rol Único Tributario): parsing, check digit (modulo 11) and the forms in use.
 * Accepted input: `760864285`, `76086428-5`, `76.086.428-5`, with `k` or `K` as check digit,
 * surrounding spaces ignored. Canonical form (the SII XML RUTType): `76086428-5`.
 */
export interface Rut {
  body: string;
  dv: string;
}

export type RutProblem = "FORMAT" | "CHECK_DIGIT";

export class RutError extends Error {
  constructor(
    readonly problem: RutProblem,
    message: string,
  ) {
    super(message);
    this.name = "RutError";
  }
}

const SHAPE = /^(\d{1,3}(?:\.\d{3})+|\d+)-?([\dkK])$/;

/** Check digit of a RUT body: weights 2..7 right to left, 11 - (sum mod 11); 11 -> 0, 10 -> K. */
export function computeDv(body: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * weight;
    weight = weight === 7 ? 2 : weight + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? "0" : r === 10 ? "K" : String(r);
}

/** Parses any accepted form and checks the digit. Throws RutError with a message fit for users. */
export function parseRut(input: string): Rut {
  const trimmed = input.trim();
  const m = SHAPE.exec(trimmed);
  if (!m) {
    throw new RutError("FORMAT", "A RUT is digits with a final check digit (0-9 or K), e.g. 76086428-5, 76.086.428-5 or 760864285");
  }
  const body = m[1]!.replace(/\./g, "").replace(/^0+(?=\d)/, "");
  const dv = m[2]!.toUpperCase();
  const expected = computeDv(body);
  if (dv !== expected) {
    throw new RutError("CHECK_DIGIT", `The check digit of RUT ${body} is ${expected}, not ${dv}`);
  }
  return { body, dv };
}

/** `76086428-5`: the canonical form (no dots, uppercase K), as the SII XML expects it. */
export function formatRut(rut: Rut): string {
  return `${rut.body}-${rut.dv}`;
}

/** `76.086.428-5`: the printed form. */
export function formatRutWithDots(rut: Rut): string {
  return `${rut.body.replace(/\B(?=(\d{3})+(?!\d))/g, ".")}-${rut.dv}`;
}

export function normalizeRut(input: string): string {
  return formatRut(parseRut(input));
}

export function isValidRut(input: string): boolean {
  try {
    parseRut(input);
    return true;
  } catch {
    return false;
  }
}

/** Well-known RUTs. */
export const SII_RUT = "60803000-K";
export const ANONYMOUS_BUYER_RUT = "66666666-6";
export const FOREIGN_RECEIVER_RUT = "55555555-5";
