/** WinAnsi text for the standard Helvetica fonts: encoding, widths, wrapping. */
import { type PDFFont } from "pdf-lib";

// ---------------------------------------------------------------------------------------------------
// WinAnsi text: encoding and metrics

const WIN_ANSI_SPECIAL: Record<number, number> = {
  0x20ac: 0x80, 0x201a: 0x82, 0x0192: 0x83, 0x201e: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87, 0x02c6: 0x88,
  0x2030: 0x89, 0x0160: 0x8a, 0x2039: 0x8b, 0x0152: 0x8c, 0x017d: 0x8e, 0x2018: 0x91, 0x2019: 0x92, 0x201c: 0x93,
  0x201d: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02dc: 0x98, 0x2122: 0x99, 0x0161: 0x9a, 0x203a: 0x9b,
  0x0153: 0x9c, 0x017e: 0x9e, 0x0178: 0x9f,
};
const WIN_ANSI_DECODE = new Map<number, number>(Object.entries(WIN_ANSI_SPECIAL).map(([u, c]) => [c, Number(u)]));

/** Text as a string of WinAnsi byte values (each char code 0..255); unsupported characters become "?". */
export function winAnsi(text: string): string {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text;
  const s = text.normalize("NFC");
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x20 && cp <= 0x7e) out += ch;
    else if (cp >= 0xa0 && cp <= 0xff) out += ch === "\u00ad" ? "-" : ch;
    else if (cp === 0x09 || cp === 0x0a || cp === 0x0d) out += " ";
    else {
      const code = WIN_ANSI_SPECIAL[cp];
      out += code !== undefined ? String.fromCharCode(code) : "?";
    }
  }
  return out;
}

export type FontId = 0 | 1; // Helvetica, Helvetica-Bold
let widthTables: [Float64Array, Float64Array] | undefined;

/** Character widths of the two standard fonts, computed once per isolate. */
export function loadWidthTables(regular: PDFFont, bold: PDFFont): void {
  widthTables ??= [widthTable(regular), widthTable(bold)];
}

function widthTable(font: PDFFont): Float64Array {
  const t = new Float64Array(256);
  for (let code = 0x20; code < 256; code++) {
    if (code === 0x7f) continue;
    const cp = code >= 0x80 && code <= 0x9f ? WIN_ANSI_DECODE.get(code) : code;
    if (cp === undefined) continue;
    try {
      t[code] = font.widthOfTextAtSize(String.fromCodePoint(cp), 1);
    } catch {
      t[code] = 0.5;
    }
  }
  return t;
}

export function widthOf(enc: string, font: FontId, size: number): number {
  const t = widthTables![font];
  let w = 0;
  for (let i = 0; i < enc.length; i++) w += t[enc.charCodeAt(i)]!;
  return w * size;
}

/** Greedy word wrap of WinAnsi-encoded text; words longer than the width are broken. */
export function wrapEnc(enc: string, font: FontId, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  for (const para of enc.split("\n")) {
    const words = para.split(/ +/).filter((w) => w.length > 0);
    let line = "";
    for (let word of words) {
      const candidate = line ? `${line} ${word}` : word;
      if (widthOf(candidate, font, size) <= maxWidth) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      line = "";
      while (widthOf(word, font, size) > maxWidth && word.length > 1) {
        let cut = word.length - 1;
        while (cut > 1 && widthOf(word.slice(0, cut), font, size) > maxWidth) cut--;
        lines.push(word.slice(0, cut));
        word = word.slice(cut);
      }
      line = word;
    }
    if (line || lines.length === 0) lines.push(line);
  }
  return lines;
}

export function wrap(text: string, font: FontId, size: number, maxWidth: number, maxLines = Infinity): string[] {
  const lines = wrapEnc(winAnsi(text.replace(/\r\n?/g, "\n")), font, size, maxWidth);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  let last = kept[maxLines - 1]!;
  while (last.length > 0 && widthOf(last + "\x85", font, size) > maxWidth) last = last.slice(0, -1);
  kept[maxLines - 1] = last + "\x85"; // ellipsis
  return kept;
}

export function pdfString(enc: string): string {
  let out = "(";
  for (let i = 0; i < enc.length; i++) {
    const ch = enc[i]!;
    if (ch === "(" || ch === ")" || ch === "\\") out += "\\" + ch;
    else out += ch;
  }
  return out + ")";
}

export function n(v: number): string {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? "0" : String(r);
}
