/** The A4 layout. */
import { widthOf, winAnsi, wrap } from "./text";
import { Canvas } from "./canvas";
import { Prepared, Row } from "./prepared";
import { LogoBox, TimbreFit, headerBox, receiptBox, timbre } from "./blocks";
import { BLACK, GREY, RED } from "./canvas";

// ---------------------------------------------------------------------------------------------------
// A4

export const A4 = { w: 595.28, h: 841.89, m: 36 };

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

/** Transport and customs: a titled box each, fields in two columns. */
function a4Blocks(f: Flow, p: Prepared): void {
  const M = A4.m;
  const W = A4.w - 2 * M;
  const size = 8;
  const lh = size * 1.3;
  const colW = W / 2;
  for (const b of p.blocks) {
    const cells = b.fields.map(([label, value]) => ({ label: `${label}:`, lines: wrap(value, 0, size, colW - 12 - widthOf(winAnsi(`${label}: `), 1, size), 3) }));
    const rows: (typeof cells)[] = [];
    for (let i = 0; i < cells.length; i += 2) rows.push(cells.slice(i, i + 2));
    const h = 14 + rows.reduce((a, r) => a + Math.max(...r.map((c) => c.lines.length)) * lh, 0) + 4;
    if (f.y + h > f.limit) f.newPage();
    const c = f.c;
    c.rect(M, f.y, W, h, { stroke: BLACK, lineWidth: 0.6 });
    c.text(M + 6, f.y + 11, b.title, { font: 1, size: 8.5 });
    let yy = f.y + 14 + size;
    for (const r of rows) {
      r.forEach((cell, i) => {
        const x0 = M + 6 + i * colW;
        c.text(x0, yy, cell.label, { font: 1, size });
        const lw = widthOf(winAnsi(`${cell.label} `), 1, size);
        cell.lines.forEach((l, k) => c.textEnc(x0 + lw, yy + k * lh, l, { size }));
      });
      yy += Math.max(...r.map((c) => c.lines.length)) * lh;
    }
    f.y += h + 8;
  }
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

/** The period's amount and the previous balance, then the amount to pay boxed like the total; returns the height. */
function a4AmountToPay(c: Canvas | null, p: Prepared, tx: number, y: number, tw: number, size: number, rowH: number): number {
  if (!p.toPay && p.period.length === 0) return 0;
  const right = tx + tw - 6;
  let ty = y;
  for (const [label, value] of p.period) {
    c?.text(tx + 6, ty + 10, label, { size });
    c?.textRight(right, ty + 10, `${p.money}${value}`, { size });
    ty += rowH;
  }
  if (!p.toPay) return ty + 6 - y;
  if (c) {
    c.rect(tx, ty + 2, tw, rowH + 4, { stroke: BLACK, lineWidth: 1.5 });
    c.text(tx + 6, ty + 14, p.toPay[0], { font: 1, size: size + 1 });
    c.textRight(right, ty + 14, `${p.money}${p.toPay[1]}`, { font: 1, size: size + 1 });
  }
  return ty + rowH + 6 - y;
}

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
    ty += rowH + 6;
    for (const [label, value] of p.after) {
      const lines = wrap(label, 0, size - 1, tw - 90);
      lines.forEach((l, i) => c.textEnc(tx + 6, ty + 10 + i * (size + 1), l, { size: size - 1 }));
      c.textRight(W - M - 6, ty + 10, value, { size: size - 1 });
      ty += rowH + (lines.length - 1) * (size + 1);
    }
    a4AmountToPay(c, p, tx, ty, tw, size, rowH);
  }
  const afterH = p.after.reduce((a, [label]) => a + rowH + (wrap(label, 0, size - 1, tw - 90).length - 1) * (size + 1), 0);
  const totalsH = p.totals.length * rowH + rowH + 6 + afterH + a4AmountToPay(null, p, tx, 0, tw, size, rowH);
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

export function layoutA4(p: Prepared, logo: LogoBox | undefined, copy: boolean, t: TimbreFit): Canvas[] {
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
  a4Blocks(f, p);
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
