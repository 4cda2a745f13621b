/** The 80 mm and 58 mm thermal roll layouts. */
import { FontId, widthOf, winAnsi, wrap, wrapEnc } from "./text";
import { Canvas } from "./canvas";
import { Prepared } from "./prepared";
import { LogoBox, TimbreFit, headerBox, receiptBox, timbre } from "./blocks";
import { BLACK, GREY, MM } from "./canvas";

// ---------------------------------------------------------------------------------------------------
// Thermal rolls

interface RollGeom {
  w: number;
  m: number;
  size: number;
  timbreMaxW: number;
}

export const ROLLS: Record<"80mm" | "58mm", RollGeom> = {
  "80mm": { w: 80 * MM, m: 4 * MM, size: 7.5, timbreMaxW: 70 * MM },
  "58mm": { w: 58 * MM, m: 2.5 * MM, size: 6.5, timbreMaxW: 52 * MM },
};

export function layoutRoll(c: Canvas, p: Prepared, g: RollGeom, logo: LogoBox | undefined, t: TimbreFit, y0: number, copy: boolean): number {
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
