/**
 * Test helpers for the PDF module: content-stream text extraction, barcode rasterisation from the
 * content stream, and decoding with zxing-wasm (an independent PDF417 reader) inside workerd.
 */
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef, type PDFPage } from "pdf-lib";
import { prepareZXingModule, readBarcodes } from "zxing-wasm/reader";
// The vitest workers pool imports .wasm files as compiled WebAssembly.Module objects (workerd cannot
// compile wasm from bytes at run time); the package's own type says string, hence the cast.
import zxingWasm from "zxing-wasm/reader/zxing_reader.wasm";

let prepared = false;
function prepareZxing(): void {
  if (prepared) return;
  prepareZXingModule({
    overrides: {
      instantiateWasm(imports: WebAssembly.Imports, ok: (instance: WebAssembly.Instance) => void) {
        void WebAssembly.instantiate(zxingWasm as unknown as WebAssembly.Module, imports).then((instance) => ok(instance));
        return {};
      },
    },
  });
  prepared = true;
}

export interface Bitmap {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

/** Decodes every PDF417 in an RGBA bitmap; returns the raw bytes of each symbol. */
export async function decodePdf417(bitmap: Bitmap): Promise<Uint8Array[]> {
  prepareZxing();
  const results = await readBarcodes({ ...bitmap, colorSpace: "srgb" } as unknown as Parameters<typeof readBarcodes>[0], { formats: ["PDF417"], tryHarder: true, maxNumberOfSymbols: 4 });
  return results.filter((r) => r.isValid).map((r) => r.bytes);
}

/** Rasterises a module matrix (rows of booleans, each row `rowHeight` modules tall) with a quiet zone. */
export function rasterMatrix(matrix: boolean[][], rowHeight: number, px = 2): Bitmap {
  const rects: Rect[] = [];
  matrix.forEach((row, y) => row.forEach((dark, x) => dark && rects.push({ x, y, w: 1, h: 1 })));
  return rasterRects(rects, matrix[0]!.length, matrix.length, px, px * rowHeight);
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

function rasterRects(rects: Rect[], width: number, height: number, pxX: number, pxY: number): Bitmap {
  const q = 4; // quiet zone, modules
  const W = Math.round((width + 2 * q) * pxX);
  const H = Math.round(height * pxY + 2 * q * pxX);
  const data = new Uint8ClampedArray(W * H * 4).fill(255);
  for (const r of rects) {
    const x0 = Math.round((q + r.x) * pxX);
    const x1 = Math.round((q + r.x + r.w) * pxX);
    const y0 = Math.round(q * pxX + r.y * pxY);
    const y1 = Math.round(q * pxX + (r.y + r.h) * pxY);
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const o = (y * W + x) * 4;
        data[o] = data[o + 1] = data[o + 2] = 0;
      }
    }
  }
  return { data, width: W, height: H };
}

/** The decoded content stream of a page, as a binary (latin1) string. */
export function pageContent(pdf: PDFDocument, page: PDFPage): string {
  const contents = page.node.get(PDFName.of("Contents"));
  const refs = contents instanceof PDFArray ? contents.asArray() : [contents];
  let out = "";
  for (const ref of refs) {
    const stream = pdf.context.lookup(ref as PDFRef);
    if (!(stream instanceof PDFRawStream)) throw new Error("unexpected content stream type");
    const bytes = decodePDFRawStream(stream).decode();
    for (let i = 0; i < bytes.length; i++) out += String.fromCharCode(bytes[i]!);
  }
  return out;
}

const WIN_ANSI_HIGH: Record<number, string> = { 0x80: "€", 0x85: "…", 0x91: "‘", 0x92: "’", 0x93: "“", 0x94: "”", 0x95: "•", 0x96: "–", 0x97: "—", 0x99: "™" };

/** Every string shown with Tj, unescaped and decoded from WinAnsi, in drawing order. */
export function extractTexts(content: string): string[] {
  const out: string[] = [];
  const re = /\(((?:[^\\)]|\\.)*)\)\s*Tj/gs;
  for (const m of content.matchAll(re)) {
    const raw = m[1]!.replace(/\\([0-7]{1,3}|.)/gs, (_, e: string) => (/^[0-7]+$/.test(e) ? String.fromCharCode(parseInt(e, 8)) : e === "n" ? "\n" : e === "r" ? "\r" : e === "t" ? "\t" : e));
    let s = "";
    for (const ch of raw) {
      const c = ch.charCodeAt(0);
      s += c >= 0x80 && c <= 0x9f ? (WIN_ANSI_HIGH[c] ?? "?") : ch;
    }
    out.push(s);
  }
  return out;
}

/**
 * Finds the `/PDF417 BMC q a 0 0 d e f cm … f Q EMC` blocks of a page's content stream, maps each
 * rectangle through the block's `cm` and the page's leading `1 0 0 1 0 H cm` to page coordinates (pt,
 * y up), rasterises them at `dpi` like a printer would (y flipped to image rows) and decodes the image
 * with zxing. Returns per block the decoded bytes (undefined when it does not decode) and its geometry.
 */
export async function decodeBarcodesInContent(
  content: string,
  dpi = 300,
): Promise<{ bytes: Uint8Array | undefined; rects: number; moduleWidth: number; rowHeight: number; widthPt: number; heightPt: number; leftPt: number }[]> {
  const page = /^1 0 0 1 0 ([\d.]+) cm/.exec(content);
  if (!page) throw new Error("page content does not start with its translation");
  const H = Number(page[1]);
  const blocks = [...content.matchAll(/\/PDF417 BMC q ([\d.-]+) 0 0 ([\d.-]+) ([\d.-]+) ([\d.-]+) cm\n([\s\S]*?)f Q EMC/g)];
  const out = [];
  for (const b of blocks) {
    const [a, d, e, f] = [Number(b[1]), Number(b[2]), Number(b[3]), Number(b[4])];
    // page coordinates of each rect: x' = e + a x, y' = H + f + d y (d < 0: rows go down the page)
    const boxes: { x0: number; x1: number; y0: number; y1: number }[] = [];
    for (const m of b[5]!.matchAll(/(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re/g)) {
      const [x, y, w, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
      const xa = e + a * x;
      const xb = e + a * (x + w);
      const ya = H + f + d * y;
      const yb = H + f + d * (y + h);
      boxes.push({ x0: Math.min(xa, xb), x1: Math.max(xa, xb), y0: Math.min(ya, yb), y1: Math.max(ya, yb) });
    }
    const left = Math.min(...boxes.map((r) => r.x0));
    const right = Math.max(...boxes.map((r) => r.x1));
    const bottom = Math.min(...boxes.map((r) => r.y0));
    const top = Math.max(...boxes.map((r) => r.y1));
    const k = dpi / 72;
    const quiet = 4 * a;
    const W = Math.ceil((right - left + 2 * quiet) * k);
    const Hpx = Math.ceil((top - bottom + 2 * quiet) * k);
    const data = new Uint8ClampedArray(W * Hpx * 4).fill(255);
    for (const r of boxes) {
      // pixel centres inside the rect are dark (a printer's rasteriser, no anti-aliasing)
      const px0 = Math.round((r.x0 - left + quiet) * k);
      const px1 = Math.round((r.x1 - left + quiet) * k);
      const py0 = Math.round((top + quiet - r.y1) * k);
      const py1 = Math.round((top + quiet - r.y0) * k);
      for (let y = py0; y < py1; y++) {
        for (let x = px0; x < px1; x++) {
          const o = (y * W + x) * 4;
          data[o] = data[o + 1] = data[o + 2] = 0;
        }
      }
    }
    const decoded = await decodePdf417({ data, width: W, height: Hpx });
    out.push({ bytes: decoded[0], rects: boxes.length, moduleWidth: a, rowHeight: Math.abs(d) / a, widthPt: right - left, heightPt: top - bottom, leftPt: left });
  }
  return out;
}

export function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

export interface LoadedPdf {
  pdf: PDFDocument;
  pages: { width: number; height: number; content: string; texts: string[]; xobjects: string[] }[];
}

export async function loadPdf(bytes: Uint8Array): Promise<LoadedPdf> {
  const pdf = await PDFDocument.load(bytes);
  const pages = pdf.getPages().map((page) => {
    const content = pageContent(pdf, page);
    const { width, height } = page.getSize();
    const xobjects: string[] = [];
    const dict = page.node.Resources()?.lookupMaybe(PDFName.of("XObject"), PDFDict);
    for (const [name, ref] of dict?.entries() ?? []) {
      const obj = pdf.context.lookup(ref);
      const subtype = obj instanceof PDFRawStream ? obj.dict.get(PDFName.of("Subtype")) : undefined;
      xobjects.push(`${name.asString()}:${String(subtype)}`);
    }
    return { width, height, content, texts: extractTexts(content), xobjects };
  });
  return { pdf, pages };
}
