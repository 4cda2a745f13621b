import { describe, expect, it } from "vitest";
import { formatAmount, formatQuantity, resolveSettings } from "../../src/countries/cl/printed/pdf/format";
import { DTE_TYPE_NAMES, isCedible, issuerSiiOffice, type DteTypeCode, type PrintableDocument } from "../../src/countries/cl/printed/pdf/model";
import { pdfFileName, PdfInputError, renderPdf, type PdfFormat } from "../../src/countries/cl/printed/pdf/render";
import { decodePDFRawStream, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef } from "pdf-lib";
import { decodeBarcodesInContent, latin1, loadPdf } from "./helpers";
import { sampleDocument, sampleJpegHeader, samplePixels, samplePng } from "./samples";

const FORMATS: PdfFormat[] = ["A4", "80mm", "58mm"];
const TYPES: DteTypeCode[] = [33, 39, 61, 52, 110];
const MM = 72 / 25.4;

function totalOf(doc: PrintableDocument): string {
  return `$ ${formatAmount(doc.totals.total, resolveSettings(doc.settings), "t")}`;
}

describe("renderPdf: every format x document type", () => {
  for (const format of FORMATS) {
    for (const type of TYPES) {
      it(`${format} / ${type}: legends, folio, RUT with dots, totals, and a timbre that decodes to the TED`, async () => {
        const doc = sampleDocument(type, { lines: 4, logo: type === 33 ? samplePng() : undefined });
        const bytes = await renderPdf(doc, format);
        const { pages } = await loadPdf(bytes);
        const texts = pages.flatMap((p) => p.texts);

        if (format === "A4") {
          for (const p of pages) expect([p.width, p.height]).toEqual([595.28, 841.89]);
        } else {
          expect(pages).toHaveLength(1);
          expect(pages[0]!.width).toBeCloseTo(format === "80mm" ? 226.77 : 164.41, 1);
          expect(pages[0]!.height).toBeGreaterThan(300);
        }
        expect(texts).toContain("R.U.T.: 76.086.428-5");
        expect(texts).toContain(`N° ${doc.folio}`);
        expect(texts).toContain("S.I.I. - SANTIAGO ORIENTE");
        expect(texts).toContain("Timbre Electrónico SII");
        expect(texts).toContain("Res. N° 80 de 2014");
        expect(texts).toContain("Verifique documento: www.sii.cl");
        expect(texts).toContain(totalOf(doc));
        // the document name in words, wrapped to at most 2 lines inside the box
        const name = DTE_TYPE_NAMES[type];
        const nameLines = texts.filter((t) => name.includes(t) && t.length > 3 && t !== "S.I.I.");
        expect(nameLines.slice(0, 2).join(" ")).toContain(name.split(" ")[0]);
        expect(texts.join("\n").replace(/\n/g, " ")).toContain(name.split(" ").slice(0, 2).join(" "));
        // the recipient RUT with dots
        expect(texts).toContain(type === 39 ? "66.666.666-6" : "77.777.777-7");

        // the barcode: rectangles from the content stream, rasterised, decoded by zxing
        // rasterised at the printer's resolution: 203 dpi for thermal rolls, 300 dpi for A4
        const dpi = format === "A4" ? 300 : 203;
        const barcodes = (await Promise.all(pages.map((p) => decodeBarcodesInContent(p.content, dpi)))).flat();
        expect(barcodes.length).toBeGreaterThan(0);
        for (const b of barcodes) {
          expect(b.bytes).toEqual(latin1(doc.ted));
          expect(b.moduleWidth).toBeGreaterThanOrEqual(0.17 * MM - 1e-6);
          expect(b.rowHeight).toBeCloseTo(3, 4);
          expect(b.widthPt).toBeLessThanOrEqual(90 * MM + 0.01);
          expect(b.heightPt).toBeLessThanOrEqual(40 * MM + 0.01);
          expect(b.heightPt).toBeGreaterThanOrEqual(20 * MM - 0.01);
          expect(b.widthPt).toBeGreaterThanOrEqual(50 * MM - 0.01);
          if (format === "A4") expect(b.leftPt).toBeGreaterThanOrEqual(20 * MM); // >= 2 cm from the left edge
        }

        // cedible copy and receipt box: present for 33 and 52 (a sale), absent for 39, 61, 110
        const cedible = type === 33 || type === 52;
        expect(isCedible(doc)).toBe(cedible);
        expect(texts.some((t) => t.startsWith("CEDIBLE"))).toBe(cedible);
        expect(texts.includes("ACUSE DE RECIBO")).toBe(cedible);
        if (cedible) {
          expect(texts).toContain(type === 52 ? "CEDIBLE CON SU FACTURA" : "CEDIBLE");
          expect(texts.join(" ")).toContain("Ley");
          for (const f of ["Nombre:", "RUN:", "Fecha:", "Recinto:", "Firma:"]) expect(texts).toContain(f);
          expect(barcodes).toHaveLength(2); // original and copy
          if (format === "A4") {
            expect(pages).toHaveLength(2);
            expect(pages[0]!.texts.some((t) => t.startsWith("CEDIBLE"))).toBe(false);
            expect(pages[1]!.texts).toContain(type === 52 ? "CEDIBLE CON SU FACTURA" : "CEDIBLE");
          }
        } else {
          expect(barcodes).toHaveLength(1);
          if (format === "A4") expect(pages).toHaveLength(1);
        }

        // the logo is an image XObject
        const xobjects = pages.flatMap((p) => p.xobjects);
        if (type === 33) {
          expect(xobjects).toContain("/Logo:/Image");
          expect(pages[0]!.content).toContain("/Logo Do");
        } else expect(xobjects).toHaveLength(0);
      });
    }
  }
});

describe("renderPdf: content", () => {
  it("prints references with the type in words, lines with company decimals, and accents intact", async () => {
    const doc = sampleDocument(61, { lines: 2 });
    doc.settings = { decimal_places: 2, thousand_separator: ",", decimal_separator: "." };
    doc.lines[0]!.quantity = "1234.5";
    doc.lines[0]!.unitPrice = "1500.125";
    const { pages } = await loadPdf(await renderPdf(doc, "A4"));
    const texts = pages[0]!.texts;
    expect(texts).toContain("Factura Electrónica");
    expect(texts).toContain("Orden de Compra");
    expect(texts).toContain("OC-4521");
    expect(texts).toContain("Anula factura por devolución de mercadería");
    expect(texts).toContain("1,234.50");
    expect(texts).toContain("1,500.125");
    expect(texts).toContain("Comercial Ñuñoa & Compañía Limitada");
    expect(texts.join(" ")).toContain("NOTA DE CRÉDITO ELECTRÓNICA"); // wrapped in the box
    expect(texts).toContain(totalOf(doc));
  });

  it("paginates a 60-line factura on A4: header repeated, totals and timbre on the last page of each copy", async () => {
    const doc = sampleDocument(33, { lines: 60 });
    const { pages } = await loadPdf(await renderPdf(doc, "A4", { copies: "original" }));
    expect(pages.length).toBeGreaterThan(1);
    const last = pages[pages.length - 1]!;
    for (const p of pages) expect(p.texts).toContain("R.U.T.: 76.086.428-5");
    for (const p of pages.slice(0, -1)) {
      expect(p.texts).not.toContain("TOTAL");
      expect(p.content).not.toContain("/PDF417 BMC");
    }
    expect(last.texts).toContain("TOTAL");
    expect(last.texts).toContain(totalOf(doc));
    expect(last.texts).toContain(`Página ${pages.length} de ${pages.length}`);
    // every line is printed exactly once
    const all = pages.flatMap((p) => p.texts);
    for (let i = 1; i <= 60; i++) expect(all.filter((t) => t.endsWith(`(${i})`)).length, `line ${i}`).toBe(1);
    const [barcode] = await decodeBarcodesInContent(last.content);
    expect(barcode!.bytes).toEqual(latin1(doc.ted));

    // with the cedible copy: the same pages again, the copy's last page says CEDIBLE
    const both = await loadPdf(await renderPdf(doc, "A4"));
    expect(both.pages).toHaveLength(pages.length * 2);
    expect(both.pages[both.pages.length - 1]!.texts).toContain("CEDIBLE");
  });

  it("flows many references onto the next A4 page instead of overflowing", async () => {
    const doc = sampleDocument(56, { lines: 3 });
    doc.references = Array.from({ length: 40 }, (_, i) => ({ typeCode: 33, folio: 5000 + i, date: "2026-10-01", reasonCode: 3 as const, reason: "Corrige montos por diferencia de precio acordada con el cliente según orden de compra" }));
    const { pages } = await loadPdf(await renderPdf(doc, "A4"));
    expect(pages.length).toBeGreaterThan(1);
    const all = pages.flatMap((p) => p.texts);
    for (let i = 0; i < 40; i++) expect(all.filter((t) => t === String(5000 + i))).toHaveLength(1);
    // no text below the bottom margin (36 pt) of any page, except the page number
    for (const p of pages) {
      for (const m of p.content.matchAll(/ (-?[\d.]+) Td \(([^)]*)\)/g)) {
        if (!m[2]!.startsWith("P")) expect(p.height + Number(m[1]), m[2]).toBeGreaterThan(36);
      }
    }
  });

  it("grows a roll in length for long documents", async () => {
    const short = await loadPdf(await renderPdf(sampleDocument(39, { lines: 2 }), "80mm"));
    const long = await loadPdf(await renderPdf(sampleDocument(39, { lines: 40 }), "80mm"));
    expect(long.pages).toHaveLength(1);
    expect(long.pages[0]!.height).toBeGreaterThan(short.pages[0]!.height + 400);
  });

  it("uses English labels when the language is en-*, keeping the SII legends", async () => {
    const doc = sampleDocument(33, { lines: 2 });
    doc.settings = { language: "en-US" };
    const { pages } = await loadPdf(await renderPdf(doc, "A4", { copies: "original" }));
    const texts = pages[0]!.texts;
    expect(texts).toContain("Customer:");
    expect(texts).toContain("Net amount");
    expect(texts).toContain("Timbre Electrónico SII");
  });

  it("is deterministic: the same document gives the same bytes", async () => {
    const doc = sampleDocument(33, { lines: 5, logo: samplePng({ alpha: true }) });
    expect(await renderPdf(doc, "A4")).toEqual(await renderPdf(doc, "A4"));
  });

  it("keeps the PDF lean: standard fonts not embedded, compressed content", async () => {
    const bytes = await renderPdf(sampleDocument(39, { lines: 5 }), "A4");
    expect(bytes.length).toBeLessThan(30_000);
    const raw = new TextDecoder("latin1").decode(bytes);
    expect(raw).toContain("/BaseFont /Helvetica");
    expect(raw).not.toContain("/FontFile");
    expect(raw).toContain("/FlateDecode");
  });
});

/** PNG predictor (PDF /Predictor 15) reversal, written independently of src/countries/cl/printed/pdf/image.ts. */
function pngUnpredict(data: Uint8Array, columns: number, bpp: number): Uint8Array {
  const stride = columns * bpp;
  const rows = data.length / (stride + 1);
  const out = new Uint8Array(rows * stride);
  for (let y = 0; y < rows; y++) {
    const f = data[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const v = data[y * (stride + 1) + 1 + x]!;
      const a = x >= bpp ? out[y * stride + x - bpp]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + x]! : 0;
      const c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp]! : 0;
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const pred = f === 0 ? 0 : f === 1 ? a : f === 2 ? b : f === 3 ? Math.floor((a + b) / 2) : pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      out[y * stride + x] = (v + pred) % 256;
    }
  }
  return out;
}

describe("logo embedding", () => {
  async function logoStreams(logo: Uint8Array) {
    const pdf = await PDFDocument.load(await renderPdf(sampleDocument(39, { lines: 1, logo }), "A4"));
    const xobjects = pdf.getPage(0).node.Resources()!.lookup(PDFName.of("XObject"), PDFDict);
    const image = pdf.context.lookup(xobjects.get(PDFName.of("Logo")));
    if (!(image instanceof PDFRawStream)) throw new Error("the logo is not a stream");
    const smaskRef = image.dict.get(PDFName.of("SMask"));
    const smask = smaskRef instanceof PDFRef ? pdf.context.lookup(smaskRef) : undefined;
    if (smask !== undefined && !(smask instanceof PDFRawStream)) throw new Error("the soft mask is not a stream");
    const get = (s: PDFRawStream, k: string) => String(s.dict.get(PDFName.of(k)));
    return { image, smask, get };
  }

  it("passes an RGB PNG's image data through with the PNG predictor (no re-encoding)", async () => {
    const png = samplePng({ width: 40, height: 10 });
    const { image, smask, get } = await logoStreams(png);
    expect(get(image, "Width")).toBe("40");
    expect(get(image, "ColorSpace")).toBe("/DeviceRGB");
    expect(String(image.dict.get(PDFName.of("DecodeParms")))).toContain("/Predictor 15");
    expect(smask).toBeUndefined();
    // the stream inflates to PNG-filtered rows (one filter byte each) that unfilter to the original pixels
    expect(pngUnpredict(decodePDFRawStream(image).decode(), 40, 3)).toEqual(samplePixels(40, 10, false));
  });

  it("splits an RGBA PNG (all five row filters) into colour and a soft mask", async () => {
    const { image, smask, get } = await logoStreams(samplePng({ width: 33, height: 15, alpha: true }));
    const px = samplePixels(33, 15, true);
    const rgb = px.filter((_, i) => i % 4 !== 3);
    const alpha = px.filter((_, i) => i % 4 === 3);
    expect(get(image, "ColorSpace")).toBe("/DeviceRGB");
    expect(decodePDFRawStream(image).decode()).toEqual(rgb);
    expect(smask).toBeDefined();
    expect(get(smask!, "ColorSpace")).toBe("/DeviceGray");
    expect(decodePDFRawStream(smask!).decode()).toEqual(alpha);
  });

  it("passes a JPEG through as DCTDecode with the frame's size", async () => {
    const { image, get } = await logoStreams(sampleJpegHeader(321, 123));
    expect(get(image, "Filter")).toBe("/DCTDecode");
    expect(get(image, "Width")).toBe("321");
    expect(get(image, "Height")).toBe("123");
  });
});

describe("input validation and helpers", () => {
  it("rejects bad input with PdfInputError naming the field", async () => {
    const bad: [string, (d: PrintableDocument) => void][] = [
      ["issuer.rut", (d) => (d.issuer.rut = "76086428-0")],
      ["ted", (d) => (d.ted = "<TED>€</TED>")],
      ["lines[0].amount", (d) => (d.lines[0]!.amount = "12,5")],
      ["issueDate", (d) => (d.issueDate = "20/11/2026")],
      ["type", (d) => (d.type = 99 as DteTypeCode)],
      ["settings.decimal_places", (d) => (d.settings = { decimal_places: 7 })],
      ["ted", (d) => (d.ted = "x".repeat(1500))],
    ];
    for (const [field, mutate] of bad) {
      const doc = sampleDocument(33, { lines: 1 });
      mutate(doc);
      const err = await renderPdf(doc, "A4").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, field).toBeInstanceOf(PdfInputError);
      expect((err as PdfInputError).field, field).toBe(field);
    }
    await expect(renderPdf(sampleDocument(33), "A5" as PdfFormat)).rejects.toBeInstanceOf(PdfInputError);
  });

  it("formats amounts and quantities without floats, half away from zero", () => {
    const s = resolveSettings({ decimal_places: 2 });
    expect(formatAmount(1234567, s, "a")).toBe("1.234.567");
    expect(formatAmount("1234.5", s, "a")).toBe("1.235");
    expect(formatAmount("-1234.5", s, "a")).toBe("-1.235");
    expect(formatAmount("99999999999999999999", s, "a")).toBe("99.999.999.999.999.999.999");
    expect(formatAmount("1234.565", s, "a", "USD")).toBe("1.234,57");
    expect(formatQuantity("2.5", resolveSettings({}), "q")).toBe("2,5");
    expect(formatQuantity(3, s, "q")).toBe("3,00");
    expect(formatQuantity("0.123456", s, "q")).toBe("0,123456");
    expect(() => resolveSettings({ thousand_separator: ",", decimal_separator: "," })).toThrow(PdfInputError);
  });

  it("decides the cedible copy by type (52 only when the transfer is a sale) and honours copies", async () => {
    expect(isCedible({ type: 52, transferType: 5 })).toBe(false);
    expect(isCedible({ type: 52, transferType: 9 })).toBe(true);
    expect(isCedible({ type: 46 })).toBe(true);
    expect(isCedible({ type: 56 })).toBe(false);
    const guia = sampleDocument(52, { lines: 1 });
    guia.transferType = 5;
    const g = await loadPdf(await renderPdf(guia, "A4"));
    expect(g.pages).toHaveLength(1);
    expect(g.pages[0]!.texts.some((t) => t.startsWith("CEDIBLE") || t === "ACUSE DE RECIBO")).toBe(false);
    expect(g.pages[0]!.texts).toContain("Traslados internos");
    const only = await loadPdf(await renderPdf(sampleDocument(33, { lines: 1 }), "58mm", { copies: "original" }));
    expect(only.pages[0]!.texts).not.toContain("CEDIBLE");
    expect(only.pages[0]!.texts).toContain("ACUSE DE RECIBO");
  });

  it("prints the SII office it is given (the app reads it from the communes catalog) and names files", async () => {
    const issuer = sampleDocument(33, { lines: 1 }).issuer;
    expect(issuerSiiOffice({ ...issuer, siiOffice: "ñuñoa" })).toBe("S.I.I. - ÑUÑOA");
    expect(issuerSiiOffice({ ...issuer, siiOffice: "S.I.I. - SANTIAGO SUR" })).toBe("S.I.I. - SANTIAGO SUR");
    const without = sampleDocument(33, { lines: 1 });
    without.issuer = { ...without.issuer, siiOffice: undefined };
    expect(issuerSiiOffice(without.issuer)).toBeUndefined();
    const texts = (await loadPdf(await renderPdf(without, "A4"))).pages.flatMap((p) => p.texts);
    expect(texts.some((t) => t.startsWith("S.I.I. -"))).toBe(false);
    expect(pdfFileName({ issuer: { rut: "76.086.428-5" }, type: 33, folio: 123 }, "A4")).toBe("76086428-5_T33_F123_A4.pdf");
    expect(pdfFileName({ issuer: { rut: "76086428-5" }, type: 39, folio: 7 }, "58mm")).toBe("76086428-5_T39_F7_58mm.pdf");
  });
});
