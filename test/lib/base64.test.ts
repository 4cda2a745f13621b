import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64 } from "../../src/lib/base64";

// The decoder as it was before atob was asked first: every \s removed, then atob, its refusal a TypeError.
const reference = (s: string) => {
  let bin: string;
  try {
    bin = atob(s.replace(/\s+/g, ""));
  } catch {
    throw new TypeError("invalid base64");
  }
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
};
const outcome = (f: () => Uint8Array) => {
  try {
    return Array.from(f());
  } catch (e) {
    return e instanceof TypeError ? "TypeError" : `other: ${String(e)}`;
  }
};
// ASCII whitespace (atob skips it) and other \s characters (atob refuses them, the regex pass removes them).
const SPACES = [" ", "\n", "\r\n", "\t", "\f", "\v", "\u00a0", "\u2028", "\ufeff"];
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_*".split("");

describe("bytesToBase64", () => {
  it("encodes like btoa over the bytes' characters, on both sides of the short-input loop", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 1200 }), (bytes) => {
      expect(bytesToBase64(bytes)).toBe(btoa(Array.from(bytes, (c) => String.fromCharCode(c)).join("")));
      expect(bytesToBase64(bytes.buffer)).toBe(bytesToBase64(bytes));
    }), { numRuns: 200 });
    expect(bytesToBase64(new Uint8Array([65, 66, 67, 68]).subarray(1, 3))).toBe("QkM=");
  });
});

describe("base64ToBytes", () => {
  it("decodes like the regex-first decoder: encoded bytes with any whitespace inserted", () => {
    const withSpaces = fc.uint8Array({ maxLength: 200 }).chain((bytes) => {
      const text = bytesToBase64(bytes);
      return fc.tuple(fc.constant(bytes), fc.array(fc.tuple(fc.nat(text.length), fc.constantFrom(...SPACES)), { maxLength: 8 }).map((ins) => {
        let s = text;
        for (const [at, sp] of ins.sort((a, b) => b[0] - a[0])) s = s.slice(0, at) + sp + s.slice(at);
        return s;
      }));
    });
    fc.assert(fc.property(withSpaces, ([bytes, s]) => {
      expect(base64ToBytes(s)).toEqual(bytes);
      expect(outcome(() => base64ToBytes(s))).toEqual(outcome(() => reference(s)));
    }), { numRuns: 300 });
  });

  it("refuses and accepts exactly what the regex-first decoder does, on arbitrary text", () => {
    const text = fc.array(fc.constantFrom(...ALPHABET, ...SPACES), { maxLength: 24 }).map((cs) => cs.join(""));
    fc.assert(fc.property(text, (s) => {
      expect(outcome(() => base64ToBytes(s))).toEqual(outcome(() => reference(s)));
    }), { numRuns: 1000 });
    expect(() => base64ToBytes("QUJD\u00a0R")).toThrow(TypeError);
    expect(Array.from(base64ToBytes("QU\u00a0JD\vRA=="))).toEqual([65, 66, 67, 68]);
  });
});

describe("base64ToBytes in workerd", () => {
  it("has the native decoder (Uint8Array.fromBase64) to ask first: the properties above hold with it", () => {
    expect(typeof (Uint8Array as unknown as { fromBase64?: unknown }).fromBase64).toBe("function");
    // The last chunk as atob takes it: padding optional, bits after the last byte ignored; a lone '=' or a sixth of a byte refused.
    expect(Array.from(base64ToBytes("QQ"))).toEqual([65]);
    expect(Array.from(base64ToBytes("QR=="))).toEqual([65]);
    expect(() => base64ToBytes("QQ=")).toThrow(TypeError);
    expect(() => base64ToBytes("QUJDR")).toThrow(TypeError);
    expect(() => base64ToBytes("QQ==QQ==")).toThrow(TypeError);
  });
});
