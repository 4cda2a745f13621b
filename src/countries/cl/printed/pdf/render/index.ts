/**
 * Printed representation of a DTE as PDF: A4 pages and 80 mm / 58 mm thermal rolls.
 *
 * pdf-lib builds the document structure (catalog, pages, standard fonts, logo image, save); the page
 * content streams are written directly as PDF operators (one string per page, deflated natively), which
 * keeps a page to a few milliseconds. Fonts are the standard Helvetica pair with WinAnsi encoding (no
 * embedding). The timbre is a PDF417 drawn as filled rectangles, one per horizontal bar run, inside a
 * marked-content block `/PDF417 BMC … EMC` whose `cm` maps one unit to one module (x) and one symbol
 * row (y).
 *
 * Files: text (WinAnsi metrics), canvas (page operators), prepared (data formatted once), blocks
 * (shared blocks), a4 and roll (the layouts), this file (assembly).
 */
import { deflateSync } from "node:zlib";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRawStream, StandardFonts, type PDFContext, type PDFObject, type PDFRef } from "pdf-lib";
import { checkImage, ImageFormatError, prepareImage, sniffImage, type ImageStream } from "../image";
import { log } from "../../../../../lib/log";
import { normalizeRut } from "../../../documents/rut";
import { PdfInputError } from "../format";
import { type PrintableDocument } from "../model";
import { loadWidthTables, n } from "./text";
import { Canvas, GREY, MM } from "./canvas";
import { prepare } from "./prepared";
import { fitLogo, fitTimbre } from "./blocks";
import { A4, layoutA4 } from "./a4";
import { ROLLS, finishRoll, layoutRoll, startRoll } from "./roll";

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

export { PdfInputError } from "../format";


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
    log("warn", "logo cannot be drawn; rendering without it", { error: (e as Error).message });
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
  loadWidthTables(regular, bold);

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
    const sheet = startRoll(g);
    copies.forEach((copy, i) => {
      if (i > 0) {
        sheet.y += 6;
        sheet.c.textCenter(g.w / 2, sheet.y + 4, p.L.cutHere, { size: 6, color: GREY });
        sheet.y += 14;
      }
      layoutRoll(sheet, p, g, logo, t, copy);
    });
    pages.push(...finishRoll(sheet));
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
export function pdfFileName(doc: { issuer: { rut: string }; type: PrintableDocument["type"]; folio: number }, format: PdfFormat): string {
  let rut: string;
  try {
    rut = normalizeRut(doc.issuer.rut);
  } catch {
    rut = String(doc.issuer.rut).replace(/[^0-9kK-]/g, "") || "sin-rut";
  }
  return `${rut}_T${doc.type}_F${doc.folio}_${format}.pdf`;
}
