/**
 * The schema walk's simple-type check (documents/dte-schema.ts simpleProblem, with its fast paths)
 * against the check before them (simple-type-reference.ts): the same answer for every simple type
 * of the SII's schemas on generated values (digits, signs, dates, base64 with white space and
 * padding, other white space, surrogate pairs, lengths around each type's bounds).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { simpleProblem, TYPES } from "../../src/countries/cl/documents/dte-schema";
import { referenceSimpleProblem } from "./simple-type-reference";

const piece = fc.constantFrom(
  "0", "1", "7", "12", "99999999999999999999", "-", "+", ".", "5.25", "=", "==", "A", "z", "/", "+",
  " ", "\n", "\t", "\r", "\v", "\f", "\u00a0", "\u2003", "2026-02-29", "2026-11-26", "T10:31:00", "Z", "-03:00",
  "ñ", "😀", "\uD800", "SHA1withRSA", "76086428-5", "&", "<", "_", "x".repeat(40), "QUJD", "ab+/",
  // Around the hand-read forms of dates, times and decimals.
  "2024-02-29", "1900-02-29", "2000-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-12-31", "0000-01-01", "2026-1-01", "2026-1a-01",
  "T23:59:59", "T24:00:00", "T10:60:00", "T10:00:60", "T1:00:00", "T10:00:00.5", "10:31", "-", ".5", "5.", "0.000001", "1.2.3", "+.", "٣",
);
const value = fc.oneof(
  fc.array(piece, { maxLength: 8 }).map((a) => a.join("")),
  fc.tuple(fc.nat(120), fc.constantFrom("a", "1", "Q", "😀", " ")).map(([n, c]) => c.repeat(n)),
);

/** A type: any, or (as often) one that is not a string (numbers, dates, base64, IDs: the fast paths). */
const typeIndex = fc.oneof(fc.nat(TYPES.length - 1), fc.constantFrom(...TYPES.flatMap((t, k) => (t.b === "string" ? [] : [k]))));

describe("simple-type check", () => {
  it("equals the check before its fast paths on every simple type and generated values", () => {
    let problems = 0;
    let passes = 0;
    fc.assert(
      fc.property(typeIndex, value, (k, v) => {
        const t = TYPES[k]!;
        const p = simpleProblem(v, t);
        expect(p).toBe(referenceSimpleProblem(v, t));
        // The type as generated (no compiled pattern, no numeric set): the same answer too.
        const { re: _re, enN: _enN, ...plain } = t;
        expect(simpleProblem(v, plain)).toBe(p);
        if (p) problems++;
        else passes++;
      }),
      { numRuns: 20000, seed: 26 },
    );
    expect(problems).toBeGreaterThan(1000);
    expect(passes).toBeGreaterThan(1000);
  });

  it("agrees on each type's own example values (its enumeration, its bounds' lengths, base64 forms)", () => {
    for (const t of TYPES) {
      const samples = [...(t.en ?? []), t.min ?? "", t.max ?? "", "A".repeat(t.len ?? t.minL ?? 1), "A".repeat(t.maxL ?? 3), "😀".repeat(t.maxL ?? 3), "QUJD\nRA==", "QUJD RA=", "QU=JD", "A===", "QUJD\u00a0RA=="];
      for (const v of samples) expect(simpleProblem(v, t)).toBe(referenceSimpleProblem(v, t));
    }
  });

  it("agrees on dates, times and decimals around their hand-read forms", () => {
    const days = ["2026-11-26", "2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "2026-04-31", "2026-04-30", "2026-13-01", "2026-00-01", "2026-01-00", "2026-1-011", "2026/01/01", "+026-01-01", "2026-01-01Z", "2026-01-01-03:00", " 2026-01-01", "2026-01-0١"];
    const times = ["T00:00:00", "T23:59:59", "T24:00:00", "T10:60:00", "T10:00:60", "T10:00:00.25", "T10:00:00Z", "T10:00:00+05:00", "T10-00-00", "t10:00:00", "T1:00:000"];
    const values = [...days, ...days.flatMap((d) => times.map((t) => d + t)), "0", "1.", ".1", "-1.5", "+0.000001", "1.2.3", ".", "+", "-.", "1e5", "12 ", " 12", "1 2"];
    const types = TYPES.filter((t) => t.b === "date" || t.b === "dateTime" || t.b === "decimal");
    expect(new Set(types.map((t) => t.b)).size).toBe(3);
    let passes = 0;
    for (const t of types) for (const v of values) {
      const p = simpleProblem(v, t);
      expect(p, `${v} as ${t.b}`).toBe(referenceSimpleProblem(v, t));
      if (p === null) passes++;
    }
    expect(passes).toBeGreaterThan(types.length);
  });
});
