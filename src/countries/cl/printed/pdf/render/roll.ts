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

/**
 * Longest page of a roll. A long document (a 1,000-line boleta is over 7 m) is cut into pages of at
 * most this length, which thermal printer drivers and PDF readers accept (PDF readers stop at 5.08 m,
 * drivers often at 1 to 3 m); a line never straddles two pages.
 */
export const ROLL_PAGE_MAX = 1000 * MM;

/** The pages of a roll being written, the current one last, and the running y on it. */
export interface RollSheet {
  width: number;
  margin: number;
  done: { c: Canvas; h: number }[];
  c: Canvas;
  y: number;
}

export function startRoll(g: RollGeom): RollSheet {
  return { width: g.w, margin: g.m, done: [], c: new Canvas(g.w), y: g.m };
}

/** Every page of the roll: full pages, then the current one cut below its content. */
export function finishRoll(sheet: RollSheet): { c: Canvas; h: number }[] {
  return [...sheet.done, { c: sheet.c, h: Math.ceil(sheet.y + sheet.margin) }];
}

/** A roll being written: the canvas, the prepared data, the geometry and the running y. */
interface Roll {
  sheet: RollSheet;
  c: Canvas;
  p: Prepared;
  m: number;
  size: number;
  /** Printable width, centre and line height. */
  W: number;
  cx: number;
  lh: number;
  y: number;
}

/** Writes one copy of the document on the sheet, continuing on a new page when the next part does not fit. */
export function layoutRoll(sheet: RollSheet, p: Prepared, g: RollGeom, logo: LogoBox | undefined, t: TimbreFit, copy: boolean): void {
  const r: Roll = { sheet, c: sheet.c, p, m: g.m, size: g.size, W: g.w - 2 * g.m, cx: g.w / 2, lh: g.size * 1.3, y: sheet.y };
  rollIssuer(r, logo);
  rollParties(r);
  rollLines(r);
  rollTotals(r);
  rollFooter(r, t, copy);
  sheet.c = r.c;
  sheet.y = r.y;
}

/** Starts a new page when `h` more points do not fit on this one. */
function need(r: Roll, h: number): void {
  if (r.y + h + r.m <= ROLL_PAGE_MAX || r.y <= r.m + 1) return;
  r.c.textCenter(r.cx, r.y + r.size, r.p.L.continued, { size: r.size - 1, color: GREY });
  r.sheet.done.push({ c: r.c, h: Math.ceil(Math.min(ROLL_PAGE_MAX, r.y + r.size * 2 + r.m)) });
  r.c = new Canvas(r.sheet.width);
  r.y = r.m;
}

function centered(r: Roll, text: string, font: FontId, sz: number, maxLines = Infinity) {
  for (const l of wrap(text, font, sz, r.W, maxLines)) {
    r.c.textCenterEnc(r.cx, r.y + sz, l, { font, size: sz });
    r.y += sz * 1.3;
  }
}

function dashedRule(r: Roll, before: number) {
  r.y += before;
  r.c.line(r.m, r.y, r.m + r.W, r.y, { lineWidth: 0.4, dash: 2 });
  r.y += 3;
}

/** Logo, issuer, the red box and the SII office. */
function rollIssuer(r: Roll, logo: LogoBox | undefined) {
  const { c, p, size } = r;
  if (logo) {
    c.image(r.cx - logo.w / 2, r.y, logo.w, logo.h);
    r.y += logo.h + 4;
  }
  const iss = p.doc.issuer;
  centered(r, iss.name, 1, size + 1.5, 3);
  if (iss.activity) centered(r, iss.activity, 0, size, 3);
  if (iss.address) centered(r, iss.address, 0, size, 2);
  const place = [iss.comuna, iss.city].filter(Boolean).join(", ");
  if (place) centered(r, place, 0, size, 1);
  if (iss.branch) centered(r, iss.branch, 0, size, 1);
  r.y += 3;
  r.y += headerBox(c, p, r.m, r.y, r.W, { big: size + 2.5, name: size + 1.5 }, BLACK) + 2;
  if (p.office) centered(r, p.office, 1, size);
  dashedRule(r, 3);
}

function rollField(r: Roll, label: string, value: string) {
  const lab = winAnsi(`${label}: `);
  const lw = widthOf(lab, 1, r.size);
  const vals = wrapEnc(winAnsi(value), 0, r.size, r.W - lw);
  r.c.textEnc(r.m, r.y + r.size, lab, { font: 1, size: r.size });
  for (const v of vals) {
    r.c.textEnc(r.m + lw, r.y + r.size, v, { size: r.size });
    r.y += r.lh;
  }
}

/** Dates, recipient, payment, transfer and references. */
function rollParties(r: Roll) {
  const { c, p, m, size, W, lh } = r;
  const L = p.L;
  const rc = p.doc.recipient;
  rollField(r, L.issueDate, p.issueDate);
  if (p.dueDate) rollField(r, L.dueDate, p.dueDate);
  rollField(r, L.recipient, rc.name);
  rollField(r, L.rutShort, p.recipientRut);
  if (rc.activity) rollField(r, L.activity, rc.activity);
  if (rc.address) rollField(r, L.address, [rc.address, rc.comuna, rc.city].filter(Boolean).join(", "));
  else if (rc.comuna || rc.city) rollField(r, L.comuna, [rc.comuna, rc.city].filter(Boolean).join(", "));
  if (rc.phone || rc.email) rollField(r, L.contact, [rc.phone, rc.email].filter(Boolean).join("  "));
  if (p.doc.paymentMethod) rollField(r, L.payment, L.paymentMethods[p.doc.paymentMethod]);
  if (p.transfer) rollField(r, L.transfer, p.transfer);
  for (const b of p.blocks) {
    r.y += 2;
    c.text(m, r.y + size, `${b.title}:`, { font: 1, size });
    r.y += lh;
    for (const [label, value] of b.fields) rollField(r, label, value);
  }
  if (p.refs.length) {
    r.y += 2;
    c.text(m, r.y + size, `${L.references}:`, { font: 1, size });
    r.y += lh;
    for (const ref of p.refs) {
      const text = `${ref.type} ${L.folio} ${ref.folio}${ref.date ? ` (${ref.date})` : ""}${ref.reason ? ` - ${ref.reason}` : ""}`;
      for (const l of wrap(text, 0, size, W)) {
        c.textEnc(m, r.y + size, l, { size });
        r.y += lh;
      }
    }
  }
  dashedRule(r, 2);
}

/** The detail lines: description (and detail), quantity × price, discount, amount. */
function rollLines(r: Roll) {
  const { p, m, size, W, lh } = r;
  const L = p.L;
  need(r, lh * 3);
  r.c.text(m, r.y + size, L.description, { font: 1, size });
  r.c.textRight(m + W, r.y + size, L.lineTotal, { font: 1, size });
  r.y += lh + 1;
  for (const row of p.rows) {
    const named = row.code ? `${row.code} ${row.description}` : row.description;
    const desc = wrap(row.exempt ? `${named} ${L.exemptMark}` : named, 0, size, W);
    const detail = row.detail ? wrap(row.detail, 0, size - 1, W) : [];
    const qty = [row.quantity && `${row.quantity}${row.unit ? ` ${row.unit}` : ""}`, row.unitPrice && `x ${row.unitPrice}`].filter(Boolean).join(" ");
    const disc = row.discount ? `  ${row.discount}` : "";
    const amount = row.amount;
    const aw = widthOf(winAnsi(amount), 0, size);
    const left = wrap(qty + disc, 0, size, W - aw - 6);
    need(r, desc.length * lh + detail.length * (size - 1) * 1.3 + left.length * lh + 1);
    const c = r.c;
    for (const l of desc) {
      c.textEnc(m, r.y + size, l, { size });
      r.y += lh;
    }
    for (const l of detail) {
      c.textEnc(m, r.y + size - 1, l, { size: size - 1, color: GREY });
      r.y += (size - 1) * 1.3;
    }
    left.forEach((l, i) => {
      c.textEnc(m + 6, r.y + size, l, { size });
      if (i < left.length - 1) r.y += lh;
    });
    c.textRight(m + W, r.y + size, amount, { size });
    r.y += lh + 1;
  }
  dashedRule(r, 1);
}

/** The period's amount and the previous balance, then the amount to pay in bold like the total. */
function rollAmountToPay(r: Roll) {
  const { p, m, size, W, lh, c } = r;
  for (const [label, value] of p.period) {
    c.textRight(m + W * 0.62, r.y + size, `${label}:`, { size });
    c.textRight(m + W, r.y + size, `${p.money}${value}`, { size });
    r.y += lh;
  }
  if (!p.toPay) return;
  c.textRight(m + W * 0.62, r.y + size + 1.5, `${p.toPay[0]}:`, { font: 1, size: size + 1.5 });
  c.textRight(m + W, r.y + size + 1.5, `${p.money}${p.toPay[1]}`, { font: 1, size: size + 1.5 });
  r.y += lh + 6;
}

/** Totals, the grand total and the notes. */
function rollTotals(r: Roll) {
  const { p, m, size, W, lh } = r;
  need(r, (p.totals.length + p.after.length * 2 + p.period.length + (p.toPay ? 2 : 0) + 2) * lh + 6);
  const c = r.c;
  for (const [label, value] of p.totals) {
    c.textRight(m + W * 0.62, r.y + size, `${label}:`, { size });
    c.textRight(m + W, r.y + size, `${p.money}${value}`, { size });
    r.y += lh;
  }
  c.textRight(m + W * 0.62, r.y + size + 1.5, `${p.total[0]}:`, { font: 1, size: size + 1.5 });
  c.textRight(m + W, r.y + size + 1.5, `${p.money}${p.total[1]}`, { font: 1, size: size + 1.5 });
  r.y += lh + 6;
  for (const [label, value] of p.after) {
    for (const l of wrap(`${label}: ${value}`, 0, size, W)) {
      c.textEnc(m, r.y + size, l, { size });
      r.y += lh;
    }
  }
  rollAmountToPay(r);
  if (p.doc.notes) {
    for (const l of wrap(`${p.L.notes}: ${p.doc.notes}`, 0, size, W)) {
      c.textEnc(m, r.y + size, l, { size });
      r.y += lh;
    }
    r.y += 4;
  }
  r.y += 4;
}

/** The timbre, and on cedible copies the receipt box and the CEDIBLE legend. */
function rollFooter(r: Roll, t: TimbreFit, copy: boolean) {
  const { p, m, size, W, cx } = r;
  need(r, timbre(null, p, t, cx, 0, Math.max(size - 1, 5.5)) + 6 + (p.cedible ? receiptBox(null, p, m, 0, W, size - 0.5, false) + size + 14 : 0));
  const c = r.c;
  r.y += timbre(c, p, t, cx, r.y, Math.max(size - 1, 5.5)) + 6;
  if (!p.cedible) return;
  r.y += receiptBox(c, p, m, r.y, W, size - 0.5, false) + 4;
  if (copy) {
    const legend = p.doc.type === 52 ? p.L.cedibleGuia : p.L.cedible;
    c.textCenter(cx, r.y + size + 6, legend, { font: 1, size: size + 6 });
    r.y += size + 10;
  }
}
