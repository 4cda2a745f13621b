/**
 * PDF417 encoder for the SII "timbre electrónico" (ISO/IEC 15438), purpose-built:
 * - byte compaction only (latch 924 when the length is a multiple of 6, else 901), so every byte of the
 *   ISO-8859-1 TED survives unchanged (no text-mode shifts that some readers mis-decode);
 * - Reed-Solomon error correction over GF(929), level 5 by default (64 EC codewords), as the SII asks;
 * - a columns/rows choice that fits a physical box (the SII's 2x5 cm .. 4x9 cm, X >= 0.17 mm, rows 3X);
 * - output: a module matrix (one boolean row per symbol row) plus the bar runs of each row.
 */
import { PDF417_PATTERNS_B64 } from "./pdf417-table";

export type Pdf417ErrorLevel = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

export interface Pdf417Options {
  /** Error-correction level, 0..8. Default 5 (SII). */
  ecLevel?: Pdf417ErrorLevel;
  /** Data columns, 1..30. Default: chosen for a width:height ratio of about 2.25 (the 4 x 9 cm box). */
  columns?: number;
}

export interface Pdf417Symbol {
  /** Number of symbol rows (3..90). Each row is printed `rowHeight` modules tall. */
  rows: number;
  /** Number of data columns (1..30). */
  columns: number;
  ecLevel: Pdf417ErrorLevel;
  /** Modules per row: 17 x (columns + 4) + 1 (start, left indicator, data, right indicator, stop). */
  width: number;
  /** Suggested row height in modules (3, the SII's "about 3X"). */
  rowHeight: number;
  /** All codewords, row by row (length descriptor, data, padding, error correction). */
  codewords: Uint16Array;
  /** matrix[row][module]: true = dark. */
  matrix: boolean[][];
  /** Dark runs per row as flat [start, length, start, length, ...] module offsets. */
  runs: number[][];
}

export class Pdf417Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Pdf417Error";
  }
}

const MAX_CODEWORDS = 928;
const START = [8, 1, 1, 1, 1, 1, 1, 3]; // bar/space widths, 17 modules
const STOP = [7, 1, 1, 3, 1, 1, 1, 2, 1]; // 18 modules

let patterns: Uint32Array | undefined;
/** patterns[cluster * 929 + codeword] = 17-bit pattern, MSB = leftmost module. */
function table(): Uint32Array {
  if (patterns) return patterns;
  const bin = atob(PDF417_PATTERNS_B64);
  const out = new Uint32Array(3 * 929);
  for (let i = 0; i < out.length; i++) out[i] = 0x10000 | bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
  patterns = out;
  return out;
}

const ecCoefficients = new Map<number, Uint16Array>();
/** Coefficients a0..a(k-1) of g(x) = (x - 3)(x - 3^2)...(x - 3^k) mod 929 (monic, leading 1 omitted). */
function generator(level: number): Uint16Array {
  let g = ecCoefficients.get(level);
  if (g) return g;
  const k = 2 << level;
  let poly = [1]; // low -> high
  let root = 1;
  for (let i = 1; i <= k; i++) {
    root = (root * 3) % 929;
    const next = new Array<number>(poly.length + 1).fill(0);
    for (let j = 0; j < poly.length; j++) {
      next[j + 1] = (next[j + 1]! + poly[j]!) % 929; // x * p
      next[j] = (next[j]! + 929 - ((poly[j]! * root) % 929)) % 929; // -root * p
    }
    poly = next;
  }
  g = Uint16Array.from(poly.slice(0, k));
  ecCoefficients.set(level, g);
  return g;
}

/** Error-correction codewords for the given data codewords (length descriptor included). */
export function pdf417ErrorCorrection(data: ArrayLike<number>, level: Pdf417ErrorLevel): Uint16Array {
  const coef = generator(level);
  const k = coef.length;
  const e = new Uint16Array(k);
  for (let i = 0; i < data.length; i++) {
    const t = (data[i]! + e[k - 1]!) % 929;
    for (let j = k - 1; j >= 1; j--) e[j] = (e[j - 1]! + 929 - ((t * coef[j]!) % 929)) % 929;
    e[0] = (929 - ((t * coef[0]!) % 929)) % 929;
  }
  const out = new Uint16Array(k);
  for (let j = 0; j < k; j++) out[j] = e[k - 1 - j] === 0 ? 0 : 929 - e[k - 1 - j]!;
  return out;
}

/** Byte compaction codewords (mode latch included). */
export function byteCompaction(bytes: Uint8Array): number[] {
  const n = bytes.length;
  const out: number[] = [n % 6 === 0 ? 924 : 901];
  let i = 0;
  for (; i + 6 <= n; i += 6) {
    // 6 bytes (base 256) -> 5 codewords (base 900); 48-bit values fit exactly in a double.
    let v = 0;
    for (let j = 0; j < 6; j++) v = v * 256 + bytes[i + j]!;
    const group = [0, 0, 0, 0, 0];
    for (let j = 4; j >= 0; j--) {
      group[j] = v % 900;
      v = Math.floor(v / 900);
    }
    out.push(...group);
  }
  for (; i < n; i++) out.push(bytes[i]!);
  return out;
}

/** Data codewords needed for `byteLength` bytes (latch + groups + rest), without length descriptor. */
export function byteCompactionLength(byteLength: number): number {
  return 1 + Math.floor(byteLength / 6) * 5 + (byteLength % 6);
}

function defaultColumns(totalCodewords: number, rowHeight: number): number {
  // width = (17c + 69) X, height = rows * rowHeight * X; aim for width/height ~ 2.25 (9 cm x 4 cm).
  let best = 1;
  let bestScore = Infinity;
  for (let c = 1; c <= 30; c++) {
    const rows = Math.ceil(totalCodewords / c);
    if (rows > 90) continue;
    const ratio = (17 * c + 69) / (Math.max(rows, 3) * rowHeight);
    const score = Math.abs(Math.log(ratio / 2.25));
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

/**
 * Encodes bytes as a PDF417 symbol (byte compaction, EC level 5 unless told otherwise): the
 * codewords (symbolCodewords), then each row drawn with its indicators (drawRow) and read as runs of
 * dark modules (darkRuns).
 */
export function encodePdf417(data: Uint8Array, options: Pdf417Options = {}): Pdf417Symbol {
  const ecLevel = options.ecLevel ?? 5;
  if (!Number.isInteger(ecLevel) || ecLevel < 0 || ecLevel > 8) throw new Pdf417Error(`Error-correction level must be 0..8, got ${ecLevel}`);
  const k = 2 << ecLevel;
  const dataLen = 1 + byteCompactionLength(data.length);
  if (dataLen + k > MAX_CODEWORDS) {
    throw new Pdf417Error(`${data.length} bytes do not fit in one PDF417 symbol at error-correction level ${ecLevel}`);
  }
  const rowHeight = 3;
  const columns = options.columns ?? defaultColumns(dataLen + k, rowHeight);
  if (!Number.isInteger(columns) || columns < 1 || columns > 30) throw new Pdf417Error(`Columns must be 1..30, got ${columns}`);
  const rows = Math.max(3, Math.ceil((dataLen + k) / columns));
  if (rows > 90) throw new Pdf417Error(`${data.length} bytes need ${rows} rows at ${columns} columns (at most 90); use more columns`);

  const cw = symbolCodewords(data, rows * columns, k, ecLevel);
  const pat = table();
  const width = 17 * (columns + 4) + 1;
  const matrix: boolean[][] = [];
  const runs: number[][] = [];
  const rowCw = new Uint16Array(columns + 2);
  for (let y = 0; y < rows; y++) {
    const [left, right] = rowIndicators(y, rows, columns, ecLevel);
    rowCw[0] = left;
    rowCw.set(cw.subarray(y * columns, (y + 1) * columns), 1);
    rowCw[columns + 1] = right;
    const row = drawRow(rowCw, y % 3, width, pat);
    matrix.push(row);
    runs.push(darkRuns(row));
  }
  return { rows, columns, ecLevel, width, rowHeight, codewords: cw, matrix, runs };
}

/** The symbol's `total` codewords: length descriptor, compacted data, padding, then the `k` error-correction codewords. */
function symbolCodewords(data: Uint8Array, total: number, k: number, ecLevel: Pdf417ErrorLevel): Uint16Array {
  const nData = total - k; // length descriptor + data + padding
  const cw = new Uint16Array(total);
  cw[0] = nData;
  const compacted = byteCompaction(data);
  cw.set(compacted, 1);
  for (let i = 1 + compacted.length; i < nData; i++) cw[i] = 900;
  cw.set(pdf417ErrorCorrection(cw.subarray(0, nData), ecLevel), nData);
  return cw;
}

/** The left and right row indicator codewords of row `y` (they depend on the row's cluster). */
function rowIndicators(y: number, rows: number, columns: number, ecLevel: number): [number, number] {
  const cluster = y % 3;
  const base = Math.floor(y / 3) * 30;
  if (cluster === 0) return [base + Math.floor((rows - 1) / 3), base + columns - 1];
  if (cluster === 1) return [base + ecLevel * 3 + ((rows - 1) % 3), base + Math.floor((rows - 1) / 3)];
  return [base + columns - 1, base + ecLevel * 3 + ((rows - 1) % 3)];
}

/** One row's modules: start pattern, the row's codewords in its cluster's patterns, stop pattern. */
function drawRow(rowCw: Uint16Array, cluster: number, width: number, pat: Uint32Array): boolean[] {
  const row = new Array<boolean>(width).fill(false);
  let x = 0;
  let dark = true;
  for (const w of START) {
    if (dark) row.fill(true, x, x + w);
    x += w;
    dark = !dark;
  }
  const off = cluster * 929;
  for (let i = 0; i < rowCw.length; i++) {
    const p = pat[off + rowCw[i]!]!;
    for (let b = 16; b >= 0; b--) row[x++] = ((p >>> b) & 1) === 1;
  }
  dark = true;
  for (const w of STOP) {
    if (dark) row.fill(true, x, x + w);
    x += w;
    dark = !dark;
  }
  return row;
}

/** The row's dark runs as (start, length) pairs. */
function darkRuns(row: boolean[]): number[] {
  const width = row.length;
  const r: number[] = [];
  for (let i = 0; i < width; ) {
    if (!row[i]) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < width && row[j]) j++;
    r.push(i, j - i);
    i = j;
  }
  return r;
}

export interface Pdf417Fit {
  symbol: Pdf417Symbol;
  /** Module width (X) in the box's unit. */
  module: number;
  /** Printed symbol size in the box's unit, quiet zones excluded. */
  width: number;
  height: number;
}

export interface Pdf417Box {
  /** Largest printed width and height (same unit, e.g. PDF points). */
  maxWidth: number;
  maxHeight: number;
  /** Smallest module width X (same unit). SII: 0.17 mm = 0.482 pt. */
  minModule: number;
  /** Largest module width worth using (bigger symbols waste paper). */
  maxModule?: number;
  /** Smallest printed width (SII: 5 cm); the fit prefers columns that reach it. */
  minWidth?: number;
  ecLevel?: Pdf417ErrorLevel;
}

/**
 * Chooses the number of columns that gives the largest module inside the box (rows 3X tall), then
 * encodes. Throws Pdf417Error when even the best choice needs a module below `minModule`.
 */
export function fitPdf417(data: Uint8Array, box: Pdf417Box): Pdf417Fit {
  const ecLevel = box.ecLevel ?? 5;
  const k = 2 << ecLevel;
  const total = 1 + byteCompactionLength(data.length) + k;
  if (total > MAX_CODEWORDS) throw new Pdf417Error(`${data.length} bytes do not fit in one PDF417 symbol`);
  let best: { c: number; x: number; score: number } | undefined;
  for (let c = 1; c <= 30; c++) {
    const rows = Math.max(3, Math.ceil(total / c));
    if (rows > 90) continue;
    const wMod = 17 * (c + 4) + 1;
    let x = Math.min(box.maxWidth / wMod, box.maxHeight / (rows * 3));
    if (box.maxModule !== undefined) x = Math.min(x, box.maxModule);
    if (x < box.minModule) continue;
    // Prefer reaching the minimum width, then the biggest module, then fewer rows.
    const reaches = box.minWidth === undefined || wMod * x >= box.minWidth - 1e-9 ? 1 : 0;
    const score = reaches * 1e6 + x * 1e3 - rows * 1e-3;
    if (!best || score > best.score) best = { c, x, score };
  }
  if (!best) {
    throw new Pdf417Error(`A PDF417 of ${data.length} bytes does not fit in ${box.maxWidth} x ${box.maxHeight} with a module of at least ${box.minModule}`);
  }
  const symbol = encodePdf417(data, { ecLevel, columns: best.c });
  return { symbol, module: best.x, width: symbol.width * best.x, height: symbol.rows * symbol.rowHeight * best.x };
}

/** ISO-8859-1 bytes of a string; throws Pdf417Error on characters outside Latin-1. */
export function latin1Bytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff) throw new Pdf417Error(`Character U+${c.toString(16).toUpperCase().padStart(4, "0")} at ${i} is not ISO-8859-1`);
    out[i] = c;
  }
  return out;
}
