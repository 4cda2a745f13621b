import { describe, expect, it } from "vitest";
import {
  byteCompaction,
  encodePdf417,
  fitPdf417,
  latin1Bytes,
  Pdf417Error,
  pdf417ErrorCorrection,
} from "../../src/countries/cl/printed/pdf/pdf417";
import { decodePdf417, rasterMatrix } from "./helpers";
import { sampleTed } from "./samples";

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomBytes(len: number, seed: number): Uint8Array {
  const rnd = seeded(seed);
  return Uint8Array.from({ length: len }, () => Math.floor(rnd() * 256));
}

async function roundTrip(bytes: Uint8Array, columns?: number): Promise<Uint8Array | undefined> {
  const sym = encodePdf417(bytes, columns ? { columns } : {});
  const decoded = await decodePdf417(rasterMatrix(sym.matrix, sym.rowHeight));
  return decoded[0];
}

const MM = 72 / 25.4;

describe("PDF417 encoder (decoded by zxing-wasm)", () => {
  it("round-trips random payloads of every tail length, including whole groups of 6 (latch 924)", async () => {
    const lengths = [1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 17, 18, 100, 399, 400, 401, 555, 600, 702, 800, 1000];
    for (const [i, len] of lengths.entries()) {
      const bytes = randomBytes(len, 1000 + i);
      expect(await roundTrip(bytes), `length ${len}`).toEqual(bytes);
    }
  });

  it("round-trips all 256 byte values, at several column counts", async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    for (const columns of [4, 8, 12, 17, 25, 30]) {
      expect(await roundTrip(bytes, columns), `columns ${columns}`).toEqual(bytes);
    }
  });

  it("round-trips real-looking TEDs with á é í ó ú ñ Ñ ° and & < > \" exactly (ISO-8859-1 bytes)", async () => {
    const names = ["Ñandú Ñuñoa & Cía \"Ltda\"", "Peña <Ríos> Óptica ° 100%", "Comercial Ñañez y Úbeda", "José Muñoz & Hijos Ltda."];
    for (const [i, name] of names.entries()) {
      const ted = sampleTed(
        { type: 33, folio: 4000 + i, issuerRut: "76086428-5", recipientRut: "77777777-7", recipientName: name, total: "1190000", firstItem: "Café, té y azúcar ° 1 kg <oferta> & \"más\"", date: "2026-11-20" },
        i,
      );
      const bytes = latin1Bytes(ted);
      expect(ted).toMatch(/[ñÑ°]/);
      expect(bytes.length).toBeGreaterThan(600);
      const got = await roundTrip(bytes);
      expect(got).toEqual(bytes);
      // and the bytes are Latin-1, not UTF-8: "ñ" is the single byte 0xF1
      expect(got!.includes(0xf1)).toBe(true);
      expect(got!.includes(0xc3)).toBe(false);
    }
  });

  it("uses byte compaction: latch 901 (or 924 for multiples of 6), 5 codewords per 6 bytes", () => {
    expect(byteCompaction(new Uint8Array([65]))).toEqual([901, 65]);
    const six = byteCompaction(new Uint8Array([1, 2, 3, 4, 5, 6]));
    expect(six[0]).toBe(924);
    expect(six).toHaveLength(6);
    expect(byteCompaction(new Uint8Array(13))).toHaveLength(1 + 10 + 1);
  });

  it("encodes with error-correction level 5 (64 EC codewords) and a correct length descriptor", () => {
    const sym = encodePdf417(randomBytes(700, 7));
    expect(sym.ecLevel).toBe(5);
    const k = 64;
    expect(sym.codewords[0]).toBe(sym.rows * sym.columns - k);
    // the EC codewords are those of the data codewords
    const data = sym.codewords.subarray(0, sym.rows * sym.columns - k);
    expect([...pdf417ErrorCorrection(data, 5)]).toEqual([...sym.codewords.subarray(sym.rows * sym.columns - k)]);
    expect(sym.width).toBe(17 * (sym.columns + 4) + 1);
    expect(sym.matrix).toHaveLength(sym.rows);
    expect(sym.matrix.every((r) => r.length === sym.width)).toBe(true);
  });

  it("still decodes with damaged modules thanks to Reed-Solomon", async () => {
    const bytes = randomBytes(300, 99);
    const sym = encodePdf417(bytes, { columns: 10 });
    // flip a block of modules inside two data columns of three rows
    for (let r = 4; r < 7; r++) for (let x = 60; x < 90; x++) sym.matrix[r]![x] = !sym.matrix[r]![x];
    const decoded = await decodePdf417(rasterMatrix(sym.matrix, sym.rowHeight));
    expect(decoded[0]).toEqual(bytes);
  });

  it("fits TEDs of 400-800 bytes into the SII size box (2x5 .. 4x9 cm, X >= 0.17 mm)", () => {
    for (const len of [400, 550, 700, 800]) {
      for (const maxWidth of [90 * MM, 70 * MM, 52 * MM]) {
        const fit = fitPdf417(randomBytes(len, len), { maxWidth, maxHeight: 40 * MM, minModule: 0.17 * MM, minWidth: 50 * MM });
        expect(fit.module).toBeGreaterThanOrEqual(0.17 * MM - 1e-9);
        expect(fit.width).toBeLessThanOrEqual(maxWidth + 1e-6);
        expect(fit.width).toBeGreaterThanOrEqual(50 * MM - 1e-6);
        expect(fit.height).toBeLessThanOrEqual(40 * MM + 1e-6);
        expect(fit.height).toBeGreaterThanOrEqual(20 * MM - 1e-6);
      }
    }
  });

  it("rejects what it cannot encode with typed errors", () => {
    expect(() => encodePdf417(new Uint8Array(1200))).toThrow(Pdf417Error);
    expect(() => encodePdf417(new Uint8Array(10), { columns: 31 })).toThrow(Pdf417Error);
    expect(() => encodePdf417(new Uint8Array(10), { ecLevel: 9 as 5 })).toThrow(Pdf417Error);
    expect(() => encodePdf417(new Uint8Array(900), { columns: 2 })).toThrow(/rows/);
    expect(() => fitPdf417(new Uint8Array(800), { maxWidth: 20 * MM, maxHeight: 10 * MM, minModule: 0.17 * MM })).toThrow(Pdf417Error);
    expect(() => latin1Bytes("precio 10 €")).toThrow(/U\+20AC/);
  });
});
