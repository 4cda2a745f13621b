/**
 * Printed representation of a DTE as PDF: A4 pages and 80 mm / 58 mm thermal rolls.
 *
 * pdf-lib builds the document structure (catalog, pages, standard fonts, logo image, save); the page
 * content streams are written directly as PDF operators (one string per page, deflated natively), which
 * keeps a page to a few milliseconds. Fonts are the standard Helvetica pair with WinAnsi encoding (no
 * embedding). The timbre is a PDF417 drawn as filled rectangles, one per horizontal bar run, inside a
 * marked-content block `/PDF417 BMC … EMC` whose `cm` maps one unit to one module (x) and one symbol
 * row (y).
 */
import { deflateSync } from "node:zlib";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRawStream, StandardFonts, type PDFContext, type PDFFont, type PDFObject, type PDFRef } from "pdf-lib";
import { checkImage, ImageFormatError, prepareImage, sniffImage, type ImageStream } from "./image";
import { formatRutWithDots, parseRut, RutError } from "../countries/cl/rut";
import {
  dateYear,
  formatAmount,
  formatDate,
  formatQuantity,
  formatRate,
  labelsFor,
  PdfInputError,
  resolveSettings,
  toDecimal,
  type Labels,
} from "./format";
import {
  DTE_TYPE_CODES,
  documentName,
  isCedible,
  issuerSiiOffice,
  referenceTypeName,
  REFERENCE_REASON_NAMES,
  TRANSFER_TYPE_NAMES,
  type Amount,
  type PrintableDocument,
  type PrintableSettings,
} from "./model";
import { fitPdf417, latin1Bytes, Pdf417Error, type Pdf417Symbol } from "./pdf417";

export type PdfFormat = "A4" | "80mm" | "58mm";
export const PDF_FORMATS: readonly PdfFormat[] = ["A4", "80mm", "58mm"];

export interface RenderOptions {
  /**
   * "auto" (default): cedible types (33, 34, 46, 52 when a sale) get the CEDIBLE copy after the original
   * (A4: its own page(s); rolls: after a cut line on the same roll). "original": the original only.
   * "cedible": the CEDIBLE copy only.
   */
  copies?: "auto" | "original" | "cedible";
  /**
   * Deflate the page content streams: true (default, zlib level 4), false, or a zlib level 1..9.
   * Level 4 costs about a third of level 6's CPU for a few percent more bytes.
   */
  compress?: boolean | number;
}

export { PdfInputError } from "./format";

const MM = 72 / 25.4;
const RED: Rgb = [0.8, 0.05, 0.05];
const BLACK: Rgb = [0, 0, 0];
const GREY: Rgb = [0.35, 0.35, 0.35];
type Rgb = [number, number, number];

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
function winAnsi(text: string): string {
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

type FontId = 0 | 1; // Helvetica, Helvetica-Bold
let widthTables: [Float64Array, Float64Array] | undefined;

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

function widthOf(enc: string, font: FontId, size: number): number {
  const t = widthTables![font];
  let w = 0;
  for (let i = 0; i < enc.length; i++) w += t[enc.charCodeAt(i)]!;
  return w * size;
}

/** Greedy word wrap of WinAnsi-encoded text; words longer than the width are broken. */
function wrapEnc(enc: string, font: FontId, size: number, maxWidth: number): string[] {
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

function wrap(text: string, font: FontId, size: number, maxWidth: number, maxLines = Infinity): string[] {
  const lines = wrapEnc(winAnsi(text.replace(/\r\n?/g, "\n")), font, size, maxWidth);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  let last = kept[maxLines - 1]!;
  while (last.length > 0 && widthOf(last + "\x85", font, size) > maxWidth) last = last.slice(0, -1);
  kept[maxLines - 1] = last + "\x85"; // ellipsis
  return kept;
}

function pdfString(enc: string): string {
  let out = "(";
  for (let i = 0; i < enc.length; i++) {
    const ch = enc[i]!;
    if (ch === "(" || ch === ")" || ch === "\\") out += "\\" + ch;
    else out += ch;
  }
  return out + ")";
}

function n(v: number): string {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? "0" : String(r);
}

// ---------------------------------------------------------------------------------------------------
// A page under construction: y grows downward from the top; converted when written.

interface TextOpts {
  font?: FontId;
  size: number;
  color?: Rgb;
}

class Canvas {
  readonly ops: string[] = [];
  private color = "0 0 0";
  usesLogo = false;

  constructor(readonly width: number) {}

  private fill(c: Rgb): void {
    const s = `${c[0]} ${c[1]} ${c[2]}`;
    if (s !== this.color) {
      this.ops.push(`${s} rg ${s} RG`);
      this.color = s;
    }
  }

  /** Draws pre-encoded text with its baseline at `y` (from the top). */
  textEnc(x: number, y: number, enc: string, o: TextOpts): void {
    if (!enc) return;
    this.fill(o.color ?? BLACK);
    this.ops.push(`BT /F${(o.font ?? 0) + 1} ${n(o.size)} Tf ${n(x)} ${n(-y)} Td ${pdfString(enc)} Tj ET`);
  }

  text(x: number, y: number, text: string, o: TextOpts): void {
    this.textEnc(x, y, winAnsi(text), o);
  }

  textRight(xRight: number, y: number, text: string, o: TextOpts): void {
    const enc = winAnsi(text);
    this.textEnc(xRight - widthOf(enc, o.font ?? 0, o.size), y, enc, o);
  }

  textCenterEnc(cx: number, y: number, enc: string, o: TextOpts): void {
    this.textEnc(cx - widthOf(enc, o.font ?? 0, o.size) / 2, y, enc, o);
  }

  textCenter(cx: number, y: number, text: string, o: TextOpts): void {
    this.textCenterEnc(cx, y, winAnsi(text), o);
  }

  rect(x: number, y: number, w: number, h: number, o: { stroke?: Rgb; fill?: Rgb; lineWidth?: number }): void {
    const parts: string[] = [];
    if (o.lineWidth !== undefined) parts.push(`${n(o.lineWidth)} w`);
    if (o.fill) {
      this.fill(o.fill);
    }
    if (o.stroke && !o.fill) this.fill(o.stroke);
    parts.push(`${n(x)} ${n(-y - h)} ${n(w)} ${n(h)} re ${o.fill && o.stroke ? "B" : o.fill ? "f" : "S"}`);
    this.ops.push(parts.join(" "));
  }

  line(x1: number, y1: number, x2: number, y2: number, o: { color?: Rgb; lineWidth?: number; dash?: number }): void {
    this.fill(o.color ?? BLACK);
    const dash = o.dash ? `[${n(o.dash)}] 0 d ` : "";
    this.ops.push(`${dash}${n(o.lineWidth ?? 0.5)} w ${n(x1)} ${n(-y1)} m ${n(x2)} ${n(-y2)} l S${o.dash ? " [] 0 d" : ""}`);
  }

  image(x: number, y: number, w: number, h: number): void {
    this.usesLogo = true;
    this.ops.push(`q ${n(w)} 0 0 ${n(h)} ${n(x)} ${n(-y - h)} cm /Logo Do Q`);
  }

  /** The PDF417 at (x, y) top-left with module width `mod`: one rect per bar run, start/stop merged. */
  pdf417(x: number, y: number, sym: Pdf417Symbol, mod: number): void {
    this.fill(BLACK);
    const rowH = sym.rowHeight * mod;
    const parts: string[] = [`/PDF417 BMC q ${n4(mod)} 0 0 ${n4(-rowH)} ${n4(x)} ${n4(-y)} cm`];
    const first = sym.runs[0]!;
    const startBars = 4;
    const stopBars = 5;
    // Start and stop patterns are the same on every row: one tall rect each.
    for (let i = 0; i < startBars * 2; i += 2) parts.push(`${first[i]} 0 ${first[i + 1]} ${sym.rows} re`);
    for (let i = first.length - stopBars * 2; i < first.length; i += 2) parts.push(`${first[i]} 0 ${first[i + 1]} ${sym.rows} re`);
    for (let r = 0; r < sym.rows; r++) {
      const runs = sym.runs[r]!;
      let line = "";
      for (let i = startBars * 2; i < runs.length - stopBars * 2; i += 2) line += `${runs[i]} ${r} ${runs[i + 1]} 1 re `;
      parts.push(line);
    }
    parts.push("f Q EMC");
    this.ops.push(parts.join("\n"));
  }
}

function n4(v: number): string {
  return String(Math.round(v * 1e6) / 1e6);
}

// ---------------------------------------------------------------------------------------------------
// Prepared data (validated and formatted once, shared by every layout)

interface Row {
  code: string;
  description: string;
  detail: string;
  quantity: string;
  unit: string;
  unitPrice: string;
  discount: string;
  amount: string;
  exempt: boolean;
}

interface Prepared {
  doc: PrintableDocument;
  s: PrintableSettings;
  L: Labels;
  name: string;
  issuerRut: string;
  recipientRut: string;
  office: string | undefined;
  issueDate: string;
  dueDate: string | undefined;
  rows: Row[];
  refs: { type: string; folio: string; date: string; reason: string }[];
  totals: [string, string][];
  total: [string, string];
  /** "$ " for CLP, "USD " etc. otherwise. */
  money: string;
  transfer: string | undefined;
  resolution: string;
  verify: string;
  ted: Uint8Array;
  cedible: boolean;
}

function printedRut(rut: string, field: string): string {
  try {
    return formatRutWithDots(parseRut(rut));
  } catch (e) {
    if (e instanceof RutError) throw new PdfInputError(field, `${field}: ${e.message}`);
    throw e;
  }
}

function requireText(v: unknown, field: string): string {
  if (typeof v !== "string" || v.trim() === "") throw new PdfInputError(field, `${field} is required`);
  return v;
}

function prepare(doc: PrintableDocument): Prepared {
  if (!doc || typeof doc !== "object") throw new PdfInputError("document", "The document must be an object");
  if (!DTE_TYPE_CODES.includes(doc.type)) throw new PdfInputError("type", `Unsupported document type ${String(doc.type)}`);
  if (!Number.isSafeInteger(doc.folio) || doc.folio <= 0) throw new PdfInputError("folio", "folio must be a positive integer");
  if (!doc.issuer || !doc.recipient) throw new PdfInputError(doc.issuer ? "recipient" : "issuer", "issuer and recipient are required");
  requireText(doc.issuer.name, "issuer.name");
  requireText(doc.recipient.name, "recipient.name");
  if (!Array.isArray(doc.lines)) throw new PdfInputError("lines", "lines must be an array");
  if (!doc.totals) throw new PdfInputError("totals", "totals are required");
  if (!doc.resolution || !Number.isInteger(doc.resolution.number) || doc.resolution.number < 0) {
    throw new PdfInputError("resolution.number", "resolution.number must be a non-negative integer");
  }
  const s = resolveSettings(doc.settings);
  const L = labelsFor(s.language);
  const cur = doc.totals.currency;
  let ted: Uint8Array;
  try {
    ted = latin1Bytes(requireText(doc.ted, "ted"));
  } catch (e) {
    if (e instanceof Pdf417Error) throw new PdfInputError("ted", `ted: ${e.message}`);
    throw e;
  }
  const amt = (v: Amount, f: string) => formatAmount(v, s, f, cur);
  // Mark exempt lines only when the document mixes exempt and taxable lines.
  const markExempt = doc.lines.some((l) => l?.exempt === true) && doc.lines.some((l) => l?.exempt !== true);
  const rows: Row[] = doc.lines.map((l, i) => {
    const f = `lines[${i}]`;
    requireText(l?.description, `${f}.description`);
    const d = l.discount !== undefined ? toDecimal(l.discount, `${f}.discount`) : undefined;
    const hasDiscount = d !== undefined && (d.int !== "0" || d.frac !== "");
    const discount = hasDiscount
      ? (l.discountPercent ? `${formatRate(l.discountPercent, s, `${f}.discountPercent`)} ` : "") + amt(l.discount!, `${f}.discount`)
      : "";
    return {
      code: l.code ?? "",
      description: l.description,
      detail: l.detail ?? "",
      quantity: l.quantity !== undefined ? formatQuantity(l.quantity, s, `${f}.quantity`) : "",
      unit: l.unit ?? "",
      unitPrice: l.unitPrice !== undefined ? formatQuantity(l.unitPrice, s, `${f}.unitPrice`) : "",
      discount,
      amount: amt(l.amount, `${f}.amount`),
      exempt: markExempt && l.exempt === true,
    };
  });
  const refs = (doc.references ?? []).map((r, i) => ({
    type: referenceTypeName(r.typeCode),
    folio: String(r.folio),
    date: r.date ? formatDate(r.date, s.language, `references[${i}].date`) : "",
    reason: r.reason?.trim() || (r.reasonCode ? REFERENCE_REASON_NAMES[r.reasonCode] ?? "" : ""),
  }));
  const t = doc.totals;
  const totals: [string, string][] = [];
  if (t.net !== undefined) totals.push([L.net, amt(t.net, "totals.net")]);
  if (t.exempt !== undefined) totals.push([L.exempt, amt(t.exempt, "totals.exempt")]);
  if (t.iva !== undefined) {
    const rate = t.ivaRate !== undefined ? ` ${formatRate(t.ivaRate, s, "totals.ivaRate")}` : "";
    totals.push([`${L.iva}${rate}`, amt(t.iva, "totals.iva")]);
  }
  (t.otherTaxes ?? []).forEach((o, i) => {
    const rate = o.rate !== undefined ? ` ${formatRate(o.rate, s, `totals.otherTaxes[${i}].rate`)}` : "";
    totals.push([`${o.name}${rate}`, amt(o.amount, `totals.otherTaxes[${i}].amount`)]);
  });
  const total: [string, string] = [L.total, amt(t.total, "totals.total")];
  return {
    doc,
    s,
    L,
    name: documentName(doc),
    issuerRut: printedRut(doc.issuer.rut, "issuer.rut"),
    recipientRut: printedRut(doc.recipient.rut, "recipient.rut"),
    office: issuerSiiOffice(doc.issuer),
    issueDate: formatDate(doc.issueDate, s.language, "issueDate"),
    dueDate: doc.dueDate ? formatDate(doc.dueDate, s.language, "dueDate") : undefined,
    rows,
    refs,
    totals,
    total,
    money: cur && cur.toUpperCase() !== "CLP" ? `${cur.toUpperCase()} ` : "$ ",
    transfer: doc.type === 52 && doc.transferType !== undefined ? TRANSFER_TYPE_NAMES[doc.transferType] ?? String(doc.transferType) : undefined,
    resolution: L.resolution(doc.resolution.number, dateYear(doc.resolution.date, "resolution.date")),
    verify: L.verify(doc.verificationUrl ?? "www.sii.cl"),
    ted,
    cedible: isCedible(doc),
  };
}

// ---------------------------------------------------------------------------------------------------
// Shared blocks

interface LogoBox {
  w: number;
  h: number;
}

function fitLogo(img: { width: number; height: number } | undefined, maxW: number, maxH: number): LogoBox | undefined {
  if (!img || img.width <= 0 || img.height <= 0) return undefined;
  const k = Math.min(maxW / img.width, maxH / img.height);
  return { w: img.width * k, h: img.height * k };
}

/** The red (A4) or black (roll) box: RUT, name in at most 2 lines, N° folio. Returns its height. */
function headerBox(c: Canvas | null, p: Prepared, x: number, y: number, w: number, sizes: { big: number; name: number }, color: Rgb): number {
  let nameSize = sizes.name;
  let nameLines = wrap(p.name, 1, nameSize, w - 12);
  while (nameLines.length > 2 && nameSize > 6) {
    nameSize -= 0.5;
    nameLines = wrap(p.name, 1, nameSize, w - 12);
  }
  nameLines = wrap(p.name, 1, nameSize, w - 12, 2);
  const gap = sizes.big * 0.55;
  const lineH = sizes.big * 1.3;
  const nameH = nameSize * 1.25;
  const h = gap * 2 + lineH * 2 + nameH * nameLines.length + sizes.big * 0.2;
  if (c) {
    c.rect(x, y, w, h, { stroke: color, lineWidth: sizes.big > 10 ? 2 : 1.2 });
    const cx = x + w / 2;
    let yy = y + gap + sizes.big;
    c.textCenter(cx, yy, `${p.L.rut}: ${p.issuerRut}`, { font: 1, size: sizes.big, color });
    yy += lineH - sizes.big + nameSize + 1;
    for (const l of nameLines) {
      c.textCenterEnc(cx, yy, l, { font: 1, size: nameSize, color });
      yy += nameH;
    }
    yy += lineH - nameH + 1;
    c.textCenter(cx, yy - 2, `${p.L.folio} ${p.doc.folio}`, { font: 1, size: sizes.big, color });
  }
  return h;
}

const TIMBRE_LEGEND_LINES = 3;

interface TimbreFit {
  sym: Pdf417Symbol;
  mod: number;
  w: number;
  h: number;
}

function fitTimbre(p: Prepared, maxW: number, maxH: number, minW: number): TimbreFit {
  try {
    const f = fitPdf417(p.ted, { maxWidth: maxW, maxHeight: maxH, minModule: 0.17 * MM, minWidth: minW, maxModule: 0.35 * MM });
    return { sym: f.symbol, mod: f.module, w: f.width, h: f.height };
  } catch (e) {
    if (e instanceof Pdf417Error) throw new PdfInputError("ted", `The TED does not fit in a printable PDF417: ${e.message}`);
    throw e;
  }
}

/** Draws the timbre centred on cx with its legends; returns the height used. */
function timbre(c: Canvas | null, p: Prepared, t: TimbreFit, cx: number, y: number, size: number): number {
  if (c) {
    c.pdf417(cx - t.w / 2, y, t.sym, t.mod);
    let yy = y + t.h + size * 1.5;
    c.textCenter(cx, yy, p.L.timbre, { font: 1, size });
    yy += size * 1.3;
    c.textCenter(cx, yy, p.resolution, { size });
    yy += size * 1.3;
    c.textCenter(cx, yy, p.verify, { size });
  }
  return t.h + size * 1.5 + size * 1.3 * (TIMBRE_LEGEND_LINES - 1) + size * 0.4;
}

/** The "Acuse de recibo" box; returns its height. */
function receiptBox(c: Canvas | null, p: Prepared, x: number, y: number, w: number, size: number, twoColumns: boolean): number {
  const pad = size * 0.8;
  const lawLines = wrap(p.L.receiptLaw, 0, size * 0.85, w - 2 * pad);
  const fields = p.L.receiptFields;
  const fieldRows = twoColumns ? Math.ceil(fields.length / 2) : fields.length;
  const rowH = size * 2.2;
  const h = pad + size * 1.2 + fieldRows * rowH + size * 0.9 + lawLines.length * size * 0.85 * 1.2 + pad;
  if (c) {
    c.rect(x, y, w, h, { stroke: BLACK, lineWidth: 0.8 });
    let yy = y + pad + size;
    c.textCenter(x + w / 2, yy, p.L.receiptTitle, { font: 1, size });
    yy += size * 0.2;
    const colW = twoColumns ? (w - 2 * pad) / 2 : w - 2 * pad;
    fields.forEach((f, i) => {
      const col = twoColumns ? i % 2 : 0;
      const row = twoColumns ? Math.floor(i / 2) : i;
      const fx = x + pad + col * colW;
      const fy = yy + (row + 1) * rowH;
      const label = `${f}:`;
      c.text(fx, fy, label, { size });
      const lx = fx + widthOf(winAnsi(label), 0, size) + 3;
      c.line(lx, fy + 1, fx + colW - pad, fy + 1, { lineWidth: 0.4 });
    });
    yy += fieldRows * rowH + size * 0.85 * 1.3 + size * 0.9;
    for (const l of lawLines) {
      c.textEnc(x + pad, yy, l, { size: size * 0.85, color: GREY });
      yy += size * 0.85 * 1.2;
    }
  }
  return h;
}

// ---------------------------------------------------------------------------------------------------
// A4

const A4 = { w: 595.28, h: 841.89, m: 36 };

interface A4Ctx {
  p: Prepared;
  logo: LogoBox | undefined;
  cols: { key: keyof Row; label: string; w: number; align: "l" | "r" }[];
  t: TimbreFit;
}

/** Issuer block + red box + office; returns the y below it. */
function a4Header(c: Canvas, x: A4Ctx): number {
  const { p } = x;
  const W = A4.w;
  const M = A4.m;
  const boxW = 200;
  const boxX = W - M - boxW;
  const boxH = headerBox(c, p, boxX, M, boxW, { big: 13, name: 11.5 }, RED);
  let bottomRight = M + boxH;
  if (p.office) {
    bottomRight += 14;
    c.textCenter(boxX + boxW / 2, bottomRight, p.office, { font: 1, size: 9.5, color: RED });
    bottomRight += 4;
  }
  let tx = M;
  let ty = M;
  let textW = boxX - 14 - M;
  if (x.logo) {
    c.image(M, M, x.logo.w, x.logo.h);
    if (textW - x.logo.w - 10 >= 150) {
      tx = M + x.logo.w + 10;
      textW -= x.logo.w + 10;
    } else ty = M + x.logo.h + 6;
  }
  const iss = p.doc.issuer;
  let nameSize = 11;
  while (nameSize > 8 && wrap(iss.name, 1, nameSize, textW).length > 2) nameSize -= 0.5;
  let yy = ty + nameSize;
  for (const l of wrap(iss.name, 1, nameSize, textW, 3)) {
    c.textEnc(tx, yy, l, { font: 1, size: nameSize });
    yy += nameSize * 1.22;
  }
  const small = 8.5;
  const lh = small * 1.3;
  const lines: string[] = [];
  if (iss.activity) lines.push(...wrap(iss.activity, 0, small, textW, 3));
  if (iss.address) lines.push(...wrap(iss.address, 0, small, textW, 2));
  const place = [iss.comuna, iss.city].filter(Boolean).join(", ");
  if (place) lines.push(...wrap(place, 0, small, textW, 1));
  if (iss.branch) lines.push(...wrap(iss.branch, 0, small, textW, 1));
  const contact = [iss.phone, iss.email].filter(Boolean).join("  ");
  if (contact) lines.push(...wrap(contact, 0, small, textW, 2));
  yy += 1;
  for (const l of lines) {
    c.textEnc(tx, yy, l, { size: small });
    yy += lh;
  }
  const bottomLeft = Math.max(yy - small, x.logo ? M + x.logo.h : 0);
  return Math.max(bottomLeft, bottomRight) + 12;
}

/** Recipient block (first page); returns the y below it. */
function a4Recipient(c: Canvas, p: Prepared, y: number): number {
  const M = A4.m;
  const W = A4.w - 2 * M;
  const size = 8.5;
  const lh = size * 1.3;
  const r = p.doc.recipient;
  const L = p.L;
  const left: [string, string][] = [[L.recipient, r.name], [L.rutShort, p.recipientRut]];
  if (r.activity) left.push([L.activity, r.activity]);
  if (r.address) left.push([L.address, r.address]);
  if (r.comuna) left.push([L.comuna, r.comuna]);
  const right: [string, string][] = [[L.issueDate, p.issueDate]];
  if (p.dueDate) right.push([L.dueDate, p.dueDate]);
  if (r.city) right.push([L.city, r.city]);
  if (p.doc.paymentMethod) right.push([L.payment, L.paymentMethods[p.doc.paymentMethod]]);
  if (p.transfer) right.push([L.transfer, p.transfer]);
  if (r.phone || r.email) right.push(["", [r.phone, r.email].filter(Boolean).join("  ")]);
  const pad = 6;
  const split = W * 0.64;
  const labelWidth = (rows: [string, string][]) => Math.max(0, ...rows.map(([l]) => (l ? widthOf(winAnsi(`${l}:`), 1, size) : 0))) + 6;
  const leftL = labelWidth(left);
  const rightL = labelWidth(right);
  const draw = (rows: [string, string][], colW: number, labelW: number): string[][] => rows.map(([, v]) => wrap(v, 0, size, colW - labelW - 4, 3));
  const leftV = draw(left, split - pad, leftL);
  const rightV = draw(right, W - split - pad, rightL);
  const hOf = (vs: string[][]) => vs.reduce((a, v) => a + v.length * lh, 0);
  const h = Math.max(hOf(leftV), hOf(rightV)) + 2 * pad;
  c.rect(M, y, W, h, { stroke: BLACK, lineWidth: 0.6 });
  const put = (rows: [string, string][], vals: string[][], x0: number, labelW: number) => {
    let yy = y + pad + size;
    rows.forEach(([label, _], i) => {
      if (label) c.text(x0, yy, `${label}:`, { font: 1, size });
      for (const l of vals[i]!) {
        c.textEnc(x0 + labelW, yy, l, { size });
        yy += lh;
      }
    });
  };
  put(left, leftV, M + pad, leftL);
  put(right, rightV, M + split, rightL);
  return y + h + 10;
}

/** A4 page flow: the current canvas and cursor, and how to continue on a new page. */
interface Flow {
  c: Canvas;
  y: number;
  limit: number;
  /** Closes the current page ("continued" note) and starts a new one below the repeated header. */
  newPage(): void;
}

function a4References(f: Flow, p: Prepared): void {
  if (p.refs.length === 0) return;
  const M = A4.m;
  const W = A4.w - 2 * M;
  const size = 8;
  const lh = size * 1.3;
  const cols = [0, 160, 235, 295];
  const header = () => {
    f.c.text(M, f.y + size, p.L.references, { font: 1, size: 9 });
    f.y += 13;
    f.c.rect(M, f.y, W, 12, { fill: [0.9, 0.9, 0.9] });
    [p.L.refType, p.L.refFolio, p.L.refDate, p.L.refReason].forEach((h, i) => f.c.text(M + 4 + cols[i]!, f.y + 9, h, { font: 1, size }));
    f.y += 12;
  };
  if (f.y + 25 + lh * 2 > f.limit) f.newPage();
  header();
  for (const r of p.refs) {
    const reason = wrap(r.reason, 0, size, W - cols[3]! - 8, 3);
    const type = wrap(r.type, 0, size, cols[1]! - 8, 3);
    const folio = wrap(r.folio, 0, size, cols[2]! - cols[1]! - 6, 2);
    const h = Math.max(reason.length, type.length, folio.length) * lh + 3;
    if (f.y + h > f.limit) {
      f.newPage();
      header();
    }
    const { c, y } = f;
    type.forEach((l, i) => c.textEnc(M + 4, y + size + 1 + i * lh, l, { size }));
    folio.forEach((l, i) => c.textEnc(M + 4 + cols[1]!, y + size + 1 + i * lh, l, { size }));
    c.text(M + 4 + cols[2]!, y + size + 1, r.date, { size });
    reason.forEach((l, i) => c.textEnc(M + 4 + cols[3]!, y + size + 1 + i * lh, l, { size }));
    f.y += h;
    c.line(M, f.y, M + W, f.y, { lineWidth: 0.3, color: [0.7, 0.7, 0.7] });
  }
  f.y += 10;
}

const A4_SIZE = 8;
const A4_LH = A4_SIZE * 1.25;

interface RowLayout {
  desc: string[];
  detail: string[];
  h: number;
}

function a4Columns(p: Prepared): A4Ctx["cols"] {
  const L = p.L;
  const hasCode = p.rows.some((r) => r.code);
  const hasDiscount = p.rows.some((r) => r.discount);
  const hasUnit = p.rows.some((r) => r.unit);
  const cols: A4Ctx["cols"] = [];
  if (hasCode) cols.push({ key: "code", label: L.code, w: 55, align: "l" });
  cols.push({ key: "description", label: L.description, w: 0, align: "l" });
  cols.push({ key: "quantity", label: L.quantity, w: 48, align: "r" });
  if (hasUnit) cols.push({ key: "unit", label: L.unit, w: 40, align: "l" });
  cols.push({ key: "unitPrice", label: L.unitPrice, w: 68, align: "r" });
  if (hasDiscount) cols.push({ key: "discount", label: L.discount, w: 62, align: "r" });
  cols.push({ key: "amount", label: L.lineTotal, w: 72, align: "r" });
  const fixed = cols.reduce((a, c) => a + c.w, 0);
  cols.find((c) => c.key === "description")!.w = A4.w - 2 * A4.m - fixed;
  return cols;
}

function a4RowLayouts(x: A4Ctx): RowLayout[] {
  const descW = x.cols.find((c) => c.key === "description")!.w - 8;
  return x.p.rows.map((r) => {
    const desc = wrap(r.exempt ? `${r.description} ${x.p.L.exemptMark}` : r.description, 0, A4_SIZE, descW);
    const detail = r.detail ? wrap(r.detail, 0, A4_SIZE - 1, descW) : [];
    return { desc, detail, h: desc.length * A4_LH + detail.length * (A4_SIZE - 1) * 1.25 + 4 };
  });
}

function a4TableHeader(c: Canvas, x: A4Ctx, y: number): number {
  let cx = A4.m;
  c.rect(A4.m, y, A4.w - 2 * A4.m, 14, { fill: [0.88, 0.88, 0.88] });
  for (const col of x.cols) {
    if (col.align === "r") c.textRight(cx + col.w - 4, y + 10, col.label, { font: 1, size: A4_SIZE });
    else c.text(cx + 4, y + 10, col.label, { font: 1, size: A4_SIZE });
    cx += col.w;
  }
  return y + 14;
}

function a4Row(c: Canvas, x: A4Ctx, r: Row, lay: RowLayout, y: number): void {
  let cx = A4.m;
  const base = y + A4_SIZE + 2;
  for (const col of x.cols) {
    if (col.key === "description") {
      let yy = base;
      for (const l of lay.desc) {
        c.textEnc(cx + 4, yy, l, { size: A4_SIZE });
        yy += A4_LH;
      }
      for (const l of lay.detail) {
        c.textEnc(cx + 4, yy, l, { size: A4_SIZE - 1, color: GREY });
        yy += (A4_SIZE - 1) * 1.25;
      }
    } else {
      const v = String(r[col.key]);
      if (v) {
        if (col.align === "r") c.textRight(cx + col.w - 4, base, v, { size: A4_SIZE });
        else c.text(cx + 4, base, wrap(v, 0, A4_SIZE, col.w - 6, 1)[0] ?? "", { size: A4_SIZE });
      }
    }
    cx += col.w;
  }
  c.line(A4.m, y + lay.h, A4.w - A4.m, y + lay.h, { lineWidth: 0.3, color: [0.75, 0.75, 0.75] });
}

const A4_FOOTER = 16;

/** Height of the closing block: totals and timbre side by side, then the receipt box. */
function a4Bottom(c: Canvas | null, x: A4Ctx, y: number, copy: boolean): number {
  const { p, t } = x;
  const M = A4.m;
  const W = A4.w;
  const timbreX = 62; // >= 2 cm from the left edge
  const timbreCx = timbreX + Math.max(t.w, 200) / 2;
  const th = timbre(c, p, t, timbreCx, y, 7.5);
  // totals
  const size = 9;
  const rowH = 14;
  const tw = 230;
  const tx = W - M - tw;
  let ty = y;
  if (c) {
    for (const [label, value] of p.totals) {
      c.text(tx + 6, ty + 10, label, { size });
      c.textRight(W - M - 6, ty + 10, `${p.money}${value}`, { size });
      ty += rowH;
    }
    c.rect(tx, ty + 2, tw, rowH + 4, { stroke: BLACK, lineWidth: 1 });
    c.text(tx + 6, ty + 14, p.total[0], { font: 1, size: size + 1 });
    c.textRight(W - M - 6, ty + 14, `${p.money}${p.total[1]}`, { font: 1, size: size + 1 });
  }
  const totalsH = p.totals.length * rowH + rowH + 6;
  let h = Math.max(th, totalsH) + 10;
  if (p.cedible) {
    h += receiptBox(c, p, M, y + h, W - 2 * M, 8, true) + 6;
    if (copy) {
      const legend = p.doc.type === 52 ? p.L.cedibleGuia : p.L.cedible;
      if (c) c.textRight(W - M, y + h + 16, legend, { font: 1, size: 16 });
      h += 22;
    }
  }
  return h;
}

function a4Notes(p: Prepared): string[] {
  return p.doc.notes ? wrap(`${p.L.notes}: ${p.doc.notes}`, 0, A4_SIZE, A4.w - 2 * A4.m, 6) : [];
}

function layoutA4(p: Prepared, logo: LogoBox | undefined, copy: boolean, t: TimbreFit): Canvas[] {
  const x: A4Ctx = { p, logo, cols: a4Columns(p), t };
  const lays = a4RowLayouts(x);
  const bottomH = a4Bottom(null, x, 0, copy);
  const notes = a4Notes(p);
  const notesH = notes.length ? notes.length * A4_LH + 8 : 0;
  const pages: Canvas[] = [new Canvas(A4.w)];
  const f: Flow = {
    c: pages[0]!,
    y: 0,
    limit: A4.h - A4.m - A4_FOOTER,
    newPage() {
      f.c.textRight(A4.w - A4.m, Math.min(f.y + 12, f.limit + 8), p.L.continued, { size: 7, color: GREY });
      f.c = new Canvas(A4.w);
      pages.push(f.c);
      f.y = a4Header(f.c, x);
    },
  };
  f.y = a4Header(f.c, x);
  f.y = a4Recipient(f.c, p, f.y);
  a4References(f, p);
  if (p.rows.length > 0 && f.y + 14 + lays[0]!.h > f.limit) f.newPage();
  f.y = a4TableHeader(f.c, x, f.y);
  for (let i = 0; i < p.rows.length; i++) {
    const lay = lays[i]!;
    if (f.y + lay.h > f.limit) {
      f.newPage();
      f.y = a4TableHeader(f.c, x, f.y);
    }
    a4Row(f.c, x, p.rows[i]!, lay, f.y);
    f.y += lay.h;
  }
  f.y += 6;
  if (f.y + notesH + bottomH > f.limit) f.newPage();
  for (const l of notes) {
    f.c.textEnc(A4.m, f.y + A4_SIZE, l, { size: A4_SIZE });
    f.y += A4_LH;
  }
  a4Bottom(f.c, x, Math.max(f.y + (notes.length ? 8 : 0), f.limit - bottomH), copy);
  return pages;
}

// ---------------------------------------------------------------------------------------------------
// Thermal rolls

interface RollGeom {
  w: number;
  m: number;
  size: number;
  timbreMaxW: number;
}

const ROLLS: Record<"80mm" | "58mm", RollGeom> = {
  "80mm": { w: 80 * MM, m: 4 * MM, size: 7.5, timbreMaxW: 70 * MM },
  "58mm": { w: 58 * MM, m: 2.5 * MM, size: 6.5, timbreMaxW: 52 * MM },
};

function layoutRoll(c: Canvas, p: Prepared, g: RollGeom, logo: LogoBox | undefined, t: TimbreFit, y0: number, copy: boolean): number {
  const { m, size } = g;
  const W = g.w - 2 * m;
  const cx = g.w / 2;
  const lh = size * 1.3;
  const L = p.L;
  let y = y0;
  const centered = (text: string, font: FontId, sz: number, maxLines = Infinity) => {
    for (const l of wrap(text, font, sz, W, maxLines)) {
      c.textCenterEnc(cx, y + sz, l, { font, size: sz });
      y += sz * 1.3;
    }
  };
  if (logo) {
    c.image(cx - logo.w / 2, y, logo.w, logo.h);
    y += logo.h + 4;
  }
  const iss = p.doc.issuer;
  centered(iss.name, 1, size + 1.5, 3);
  if (iss.activity) centered(iss.activity, 0, size, 3);
  if (iss.address) centered(iss.address, 0, size, 2);
  const place = [iss.comuna, iss.city].filter(Boolean).join(", ");
  if (place) centered(place, 0, size, 1);
  if (iss.branch) centered(iss.branch, 0, size, 1);
  y += 3;
  y += headerBox(c, p, m, y, W, { big: size + 2.5, name: size + 1.5 }, BLACK) + 2;
  if (p.office) centered(p.office, 1, size);
  y += 3;
  c.line(m, y, m + W, y, { lineWidth: 0.4, dash: 2 });
  y += 3;
  const field = (label: string, value: string) => {
    const lab = winAnsi(`${label}: `);
    const lw = widthOf(lab, 1, size);
    const vals = wrapEnc(winAnsi(value), 0, size, W - lw);
    c.textEnc(m, y + size, lab, { font: 1, size });
    for (const v of vals) {
      c.textEnc(m + lw, y + size, v, { size });
      y += lh;
    }
  };
  const r = p.doc.recipient;
  field(L.issueDate, p.issueDate);
  if (p.dueDate) field(L.dueDate, p.dueDate);
  field(L.recipient, r.name);
  field(L.rutShort, p.recipientRut);
  if (r.activity) field(L.activity, r.activity);
  if (r.address) field(L.address, [r.address, r.comuna, r.city].filter(Boolean).join(", "));
  else if (r.comuna || r.city) field(L.comuna, [r.comuna, r.city].filter(Boolean).join(", "));
  if (p.doc.paymentMethod) field(L.payment, L.paymentMethods[p.doc.paymentMethod]);
  if (p.transfer) field(L.transfer, p.transfer);
  if (p.refs.length) {
    y += 2;
    c.text(m, y + size, `${L.references}:`, { font: 1, size });
    y += lh;
    for (const ref of p.refs) {
      const text = `${ref.type} ${L.folio} ${ref.folio}${ref.date ? ` (${ref.date})` : ""}${ref.reason ? ` - ${ref.reason}` : ""}`;
      for (const l of wrap(text, 0, size, W)) {
        c.textEnc(m, y + size, l, { size });
        y += lh;
      }
    }
  }
  y += 2;
  c.line(m, y, m + W, y, { lineWidth: 0.4, dash: 2 });
  y += 3;
  // lines
  c.text(m, y + size, L.description, { font: 1, size });
  c.textRight(m + W, y + size, L.lineTotal, { font: 1, size });
  y += lh + 1;
  for (const row of p.rows) {
    const desc = row.exempt ? `${row.description} ${L.exemptMark}` : row.description;
    for (const l of wrap(desc, 0, size, W)) {
      c.textEnc(m, y + size, l, { size });
      y += lh;
    }
    if (row.detail) {
      for (const l of wrap(row.detail, 0, size - 1, W)) {
        c.textEnc(m, y + size - 1, l, { size: size - 1, color: GREY });
        y += (size - 1) * 1.3;
      }
    }
    const qty = [row.quantity && `${row.quantity}${row.unit ? ` ${row.unit}` : ""}`, row.unitPrice && `x ${row.unitPrice}`].filter(Boolean).join(" ");
    const disc = row.discount ? `  ${L.discount} ${row.discount}` : "";
    const amount = row.amount;
    const aw = widthOf(winAnsi(amount), 0, size);
    const left = wrap(qty + disc, 0, size, W - aw - 6);
    left.forEach((l, i) => {
      c.textEnc(m + 6, y + size, l, { size });
      if (i < left.length - 1) y += lh;
    });
    c.textRight(m + W, y + size, amount, { size });
    y += lh + 1;
  }
  y += 1;
  c.line(m, y, m + W, y, { lineWidth: 0.4, dash: 2 });
  y += 3;
  for (const [label, value] of p.totals) {
    c.textRight(m + W * 0.62, y + size, `${label}:`, { size });
    c.textRight(m + W, y + size, `${p.money}${value}`, { size });
    y += lh;
  }
  c.textRight(m + W * 0.62, y + size + 1.5, `${p.total[0]}:`, { font: 1, size: size + 1.5 });
  c.textRight(m + W, y + size + 1.5, `${p.money}${p.total[1]}`, { font: 1, size: size + 1.5 });
  y += lh + 6;
  if (p.doc.notes) {
    for (const l of wrap(`${L.notes}: ${p.doc.notes}`, 0, size, W)) {
      c.textEnc(m, y + size, l, { size });
      y += lh;
    }
    y += 4;
  }
  y += 4;
  y += timbre(c, p, t, cx, y, Math.max(size - 1, 5.5)) + 6;
  if (p.cedible) {
    y += receiptBox(c, p, m, y, W, size - 0.5, false) + 4;
    if (copy) {
      const legend = p.doc.type === 52 ? L.cedibleGuia : L.cedible;
      c.textCenter(cx, y + size + 6, legend, { font: 1, size: size + 6 });
      y += size + 10;
    }
  }
  return y;
}

// ---------------------------------------------------------------------------------------------------
// Document assembly

/** zlib (RFC 1950) stream for FlateDecode; node:zlib is native in Node and in workerd (nodejs_compat). */
function deflate(bytes: Uint8Array, level: number): Uint8Array {
  return deflateSync(bytes, { level });
}

function toBytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function pdfValue(ctx: PDFContext, v: unknown): PDFObject {
  if (typeof v === "string") return PDFName.of(v);
  if (typeof v === "number") return PDFNumber.of(v);
  if (Array.isArray(v)) {
    const a = PDFArray.withContext(ctx);
    for (const x of v) a.push(pdfValue(ctx, x));
    return a;
  }
  if (v && typeof v === "object" && "hex" in v) return PDFHexString.of(String((v as { hex: string }).hex));
  const d = PDFDict.withContext(ctx);
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) d.set(PDFName.of(k), pdfValue(ctx, x));
  return d;
}

function registerImageStream(ctx: PDFContext, s: ImageStream, smask?: PDFRef): PDFRef {
  const dict = pdfValue(ctx, s.dict) as PDFDict;
  if (smask) dict.set(PDFName.of("SMask"), smask);
  return ctx.register(PDFRawStream.of(dict, s.data));
}

/** Embeds the logo (fast path with a per-isolate cache, else pdf-lib); throws PdfInputError. */
async function embedLogo(pdf: PDFDocument, bytes: Uint8Array): Promise<{ ref: PDFRef; width: number; height: number }> {
  const kind = sniffImage(bytes);
  if (!kind) throw new PdfInputError("logo", "The logo must be a PNG or JPEG image");
  try {
    checkImage(bytes);
    const prepared = prepareImage(bytes);
    if (prepared) {
      const smask = prepared.smask ? registerImageStream(pdf.context, prepared.smask) : undefined;
      return { ref: registerImageStream(pdf.context, prepared.image, smask), width: prepared.width, height: prepared.height };
    }
    const image = kind === "png" ? await pdf.embedPng(bytes) : await pdf.embedJpg(bytes);
    return { ref: image.ref, width: image.width, height: image.height };
  } catch (e) {
    if (e instanceof PdfInputError) throw e;
    const why = e instanceof ImageFormatError ? e.message : (e as Error).message;
    throw new PdfInputError("logo", `The logo could not be read as ${kind.toUpperCase()}: ${why}`);
  }
}

/**
 * Why a logo cannot be drawn, or undefined when it can: the very routine renderPdf uses, on a
 * scratch document. The logo upload refuses what this refuses.
 */
export async function logoProblem(bytes: Uint8Array): Promise<string | undefined> {
  try {
    await embedLogo(await PDFDocument.create({ updateMetadata: false }), bytes);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The logo, or none when it cannot be drawn (stored before upload checks, or corrupted): never a failure. */
async function embedLogoOrNone(pdf: PDFDocument, bytes: Uint8Array | undefined) {
  if (!bytes || bytes.length === 0) return undefined;
  try {
    return await embedLogo(pdf, bytes);
  } catch (e) {
    console.warn(JSON.stringify({ level: "warn", msg: "logo cannot be drawn; rendering without it", error: (e as Error).message }));
    return undefined;
  }
}

/**
 * Renders the printed representation. Throws PdfInputError (with the offending `field`) on invalid input:
 * bad RUT, non-Latin-1 TED, malformed amount or date, unsupported logo, TED too large for the timbre.
 */
export async function renderPdf(doc: PrintableDocument, format: PdfFormat, opts: RenderOptions = {}): Promise<Uint8Array> {
  if (!PDF_FORMATS.includes(format)) throw new PdfInputError("format", `format must be one of ${PDF_FORMATS.join(", ")}`);
  const p = prepare(doc);
  const pdf = await PDFDocument.create({ updateMetadata: false });
  const regular = pdf.embedStandardFont(StandardFonts.Helvetica);
  const bold = pdf.embedStandardFont(StandardFonts.HelveticaBold);
  widthTables ??= [widthTable(regular), widthTable(bold)];

  const image = await embedLogoOrNone(pdf, doc.logo);

  const mode = opts.copies ?? "auto";
  const copies: boolean[] = mode === "original" ? [false] : mode === "cedible" ? [true] : p.cedible ? [false, true] : [false];
  const pages: { c: Canvas; h: number }[] = [];
  if (format === "A4") {
    const t = fitTimbre(p, 9 * 10 * MM, 4 * 10 * MM, 5 * 10 * MM);
    const logo = fitLogo(image, 120, 66);
    for (const copy of copies) {
      const canvases = layoutA4(p, logo, copy, t);
      canvases.forEach((c, i) => {
        if (canvases.length > 1) c.textCenter(A4.w / 2, A4.h - 20, p.L.page(i + 1, canvases.length), { size: 7, color: GREY });
        pages.push({ c, h: A4.h });
      });
    }
  } else {
    const g = ROLLS[format];
    const t = fitTimbre(p, Math.min(g.timbreMaxW, g.w - 2 * g.m), 4 * 10 * MM, Math.min(5 * 10 * MM, g.w - 2 * g.m));
    const logo = fitLogo(image, (g.w - 2 * g.m) * 0.6, 48);
    const c = new Canvas(g.w);
    let y = g.m;
    copies.forEach((copy, i) => {
      if (i > 0) {
        y += 6;
        c.textCenter(g.w / 2, y + 4, p.L.cutHere, { size: 6, color: GREY });
        y += 14;
      }
      y = layoutRoll(c, p, g, logo, t, y, copy);
    });
    pages.push({ c, h: Math.ceil(y + g.m) });
  }

  const fontRegular = PDFName.of("F1");
  const fontBold = PDFName.of("F2");
  const logoName = PDFName.of("Logo");
  const level = opts.compress === false ? 0 : opts.compress === true || opts.compress === undefined ? 4 : opts.compress;
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new PdfInputError("compress", "compress must be a boolean or a zlib level 1..9");
  const compress = level > 0;
  const streams = pages.map(({ c, h }) => toBytes(`1 0 0 1 0 ${n(h)} cm\n${c.ops.join("\n")}\n`));
  const bodies = compress ? streams.map((b) => deflate(b, level)) : streams;
  pages.forEach(({ c, h }, i) => {
    const page = pdf.addPage([c.width, h]);
    page.node.setFontDictionary(fontRegular, regular.ref);
    page.node.setFontDictionary(fontBold, bold.ref);
    if (image && c.usesLogo) page.node.setXObject(logoName, image.ref);
    const stream = pdf.context.stream(bodies[i]!, compress ? { Filter: "FlateDecode" } : {});
    page.node.set(PDFName.of("Contents"), pdf.context.register(stream));
  });
  pdf.setTitle(`${p.name} N° ${doc.folio}`);
  pdf.setSubject(`${p.issuerRut} T${doc.type} F${doc.folio}`);
  pdf.setProducer("dte-api");
  return pdf.save({ useObjectStreams: false, objectsPerTick: Infinity, updateFieldAppearances: false });
}

/** `76086428-5_T33_F123_A4.pdf` (issuer RUT without dots, type, folio, format). */
export function pdfFileName(doc: Pick<PrintableDocument, "issuer" | "type" | "folio">, format: PdfFormat): string {
  let rut: string;
  try {
    const r = parseRut(doc.issuer.rut);
    rut = `${r.body}-${r.dv}`;
  } catch {
    rut = String(doc.issuer.rut).replace(/[^0-9kK-]/g, "") || "sin-rut";
  }
  return `${rut}_T${doc.type}_F${doc.folio}_${format}.pdf`;
}
