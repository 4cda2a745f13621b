import { describe, expect, it } from "vitest";
import { computeDv, formatRutWithDots, normalizeRut, parseRut, RutError } from "../../src/countries/cl/documents/rut";

describe("RUT", () => {
  it.each([
    ["60910000", "1"], ["76555835", "2"], ["76369187", "K"], ["77879240", "0"],
    ["96874030", "K"], ["60803000", "K"], ["66666666", "6"], ["55555555", "5"],
  ])("check digit of %s is %s", (body, dv) => {
    expect(computeDv(body)).toBe(dv);
  });

  it.each([
    ["760864285", "76086428-5"],
    ["76086428-5", "76086428-5"],
    ["76.086.428-5", "76086428-5"],
    [" 76086428-5 ", "76086428-5"],
    ["76369187-k", "76369187-K"],
    ["76.369.187-K", "76369187-K"],
    ["76369187k", "76369187-K"],
    ["0076086428-5", "76086428-5"],
  ])("normalises %j to %s", (input, expected) => {
    expect(normalizeRut(input)).toBe(expected);
  });

  it("rejects a wrong check digit with the expected digit in the message", () => {
    expect(() => parseRut("76086428-4")).toThrowError(/is 5, not 4/);
    try {
      parseRut("76086428-4");
    } catch (e) {
      expect(e).toBeInstanceOf(RutError);
      expect((e as RutError).problem).toBe("CHECK_DIGIT");
    }
  });

  it.each(["", "abc", "76-086-428-5", "76.08.428-5", "7608642.8-5", "-760864285", "76086428-X"])("rejects malformed %j", (bad) => {
    expect(() => parseRut(bad)).toThrowError(RutError);
  });

  it("prints with dots", () => {
    expect(formatRutWithDots(parseRut("760864285"))).toBe("76.086.428-5");
    expect(formatRutWithDots(parseRut("1-9"))).toBe("1-9");
  });
});
