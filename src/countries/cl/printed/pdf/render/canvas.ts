/** A page under construction, written as PDF operators (y grows downward from the top). */
import { type Pdf417Symbol } from "../pdf417";
import { FontId, n, pdfString, widthOf, winAnsi } from "./text";

/** Points per millimetre, and the three colours of the printed page. */
export const MM = 72 / 25.4;
export const RED: Rgb = [0.8, 0.05, 0.05];
export const BLACK: Rgb = [0, 0, 0];
export const GREY: Rgb = [0.35, 0.35, 0.35];
export type Rgb = [number, number, number];

// ---------------------------------------------------------------------------------------------------
// A page under construction: y grows downward from the top; converted when written.

interface TextOpts {
  font?: FontId;
  size: number;
  color?: Rgb;
}

export class Canvas {
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
