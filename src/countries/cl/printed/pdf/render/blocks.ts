/** Blocks shared by the A4 and roll layouts (stamp, references, totals...). */
import { PdfInputError } from "../format";
import { fitPdf417, Pdf417Error, type Pdf417Symbol } from "../pdf417";
import { widthOf, winAnsi, wrap } from "./text";
import { Canvas } from "./canvas";
import { Prepared } from "./prepared";
import { BLACK, GREY, MM, Rgb } from "./canvas";

// ---------------------------------------------------------------------------------------------------
// Shared blocks

export interface LogoBox {
  w: number;
  h: number;
}

export function fitLogo(img: { width: number; height: number } | undefined, maxW: number, maxH: number): LogoBox | undefined {
  if (!img || img.width <= 0 || img.height <= 0) return undefined;
  const k = Math.min(maxW / img.width, maxH / img.height);
  return { w: img.width * k, h: img.height * k };
}

/** The red (A4) or black (roll) box: RUT, name in at most 2 lines, N° folio. Returns its height. */
export function headerBox(c: Canvas | null, p: Prepared, x: number, y: number, w: number, sizes: { big: number; name: number }, color: Rgb): number {
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

export interface TimbreFit {
  sym: Pdf417Symbol;
  mod: number;
  w: number;
  h: number;
}

export function fitTimbre(p: Prepared, maxW: number, maxH: number, minW: number): TimbreFit {
  try {
    const f = fitPdf417(p.ted, { maxWidth: maxW, maxHeight: maxH, minModule: 0.17 * MM, minWidth: minW, maxModule: 0.35 * MM });
    return { sym: f.symbol, mod: f.module, w: f.width, h: f.height };
  } catch (e) {
    if (e instanceof Pdf417Error) throw new PdfInputError("ted", `The TED does not fit in a printable PDF417: ${e.message}`);
    throw e;
  }
}

/** Draws the timbre centred on cx with its legends; returns the height used. */
export function timbre(c: Canvas | null, p: Prepared, t: TimbreFit, cx: number, y: number, size: number): number {
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
export function receiptBox(c: Canvas | null, p: Prepared, x: number, y: number, w: number, size: number, twoColumns: boolean): number {
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
