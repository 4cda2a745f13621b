#!/usr/bin/env node
// CPU cost of the printed DTE (src/countries/cl/printed/pdf) against a baseline of pdf-lib's drawing API + bwip-js PDF417,
// drawing the same A4 page in the same run. Measured in Node 22 (same V8 as workerd) with
// process.cpuUsage() (all threads of the process: zlib work is included).
//
// The baseline replays exactly the page our renderer produced: its text items, rectangles, lines and
// logo are parsed from our (uncompressed) content stream beforehand, then drawn with page.drawText /
// drawRectangle / drawLine / drawImage; the PDF417 comes from bwip-js/generic (eclevel 5, same
// columns, rowmult 3) as polygons pushed as path operators with an even-odd fill (platform.md §4).
// A smoke run (BENCH_SMOKE=1): each measurement run once.
import { build } from "esbuild";
import { deflateSync } from "node:zlib";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PDFDocument, PDFName, StandardFonts, rgb, pushGraphicsState, popGraphicsState, moveTo, lineTo, closePath, PDFOperator, PDFOperatorNames } from "pdf-lib";
import { pdf417 as bwipPdf417 } from "bwip-js/generic";
import { knob } from "./smoke.mjs";

const root = path.resolve(import.meta.dirname, "..");
const dir = mkdtempSync(path.join(tmpdir(), "pdf-bench-"));
const out = path.join(dir, "pdf.mjs");
await build({
  stdin: {
    contents: `export * from "./src/countries/cl/printed/pdf/index.ts"; export { sampleDocument, samplePng } from "./test/pdf/samples.ts";`,
    resolveDir: root,
    loader: "ts",
  },
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: out,
  // The renderer reaches modules that import the runtime's own (cloudflare:email); never loaded here.
  external: ["cloudflare:*"],
  // CommonJS dependencies (node-forge) require Node's modules: an ESM bundle needs a require for them.
  banner: { js: `import { createRequire } from "node:module"; const require = createRequire(import.meta.url);` },
  logLevel: "error",
});
const lib = await import(pathToFileURL(out).href);
rmSync(dir, { recursive: true, force: true });

/** A realistic company logo: 400x150 RGBA PNG (gradient, round alpha edge), about 10-20 KB. */
function realisticLogo() {
  const w = 400, h = 150;
  const raw = Buffer.alloc(h * (w * 4 + 1));
  for (let y = 0; y < h; y++) {
    raw[y * (w * 4 + 1)] = 0; // filter "none"
    for (let x = 0; x < w; x++) {
      const o = y * (w * 4 + 1) + 1 + x * 4;
      const inside = ((x - 75) ** 2 + (y - 75) ** 2 < 70 ** 2) || (x > 160 && x < 390 && y > 40 && y < 110);
      raw[o] = 30 + (x >> 2);
      raw[o + 1] = 90 + (y >> 1);
      raw[o + 2] = 160;
      raw[o + 3] = inside ? 255 : 0;
    }
  }
  const crcTable = Array.from({ length: 256 }, (_, k) => { let c = k; for (let i = 0; i < 8; i++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
  const crc = (b) => { let c = 0xffffffff; for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const chunk = (type, data) => { const td = Buffer.concat([Buffer.from(type, "latin1"), data]); const len = Buffer.alloc(4); len.writeUInt32BE(data.length); const c = Buffer.alloc(4); c.writeUInt32BE(crc(td)); return Buffer.concat([len, td, c]); };
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr.set([8, 6, 0, 0, 0], 8);
  return new Uint8Array(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]));
}
const logo = realisticLogo();
const doc = lib.sampleDocument(33, { lines: 12, logo });

// ---- parse our page into drawing commands for the baseline --------------------------------------
const plain = await lib.renderPdf(doc, "A4", { copies: "original", compress: false });
const parsed = await PDFDocument.load(plain);
const page0 = parsed.getPage(0);
const contentRef = page0.node.get(PDFName.of("Contents"));
const content = Buffer.from(parsed.context.lookup(contentRef).getContents()).toString("latin1");
const H = 841.89;
const WIN = { 0x85: "…" };
const cmds = [];
let color = [0, 0, 0];
for (const line of content.split("\n")) {
  let m;
  if ((m = /^([\d.]+) ([\d.]+) ([\d.]+) rg/.exec(line))) color = [Number(m[1]), Number(m[2]), Number(m[3])];
  if ((m = /^BT \/F(\d) ([\d.]+) Tf (-?[\d.]+) (-?[\d.]+) Td \(((?:[^\\)]|\\.)*)\) Tj ET$/.exec(line))) {
    const text = [...m[5].replace(/\\(.)/g, "$1")].map((c) => WIN[c.charCodeAt(0)] ?? c).join("");
    cmds.push({ k: "text", font: Number(m[1]) - 1, size: Number(m[2]), x: Number(m[3]), y: H + Number(m[4]), text, color });
  } else if ((m = /(?:([\d.]+) w )?(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re (S|f|B)$/.exec(line))) {
    cmds.push({ k: "rect", x: Number(m[2]), y: H + Number(m[3]), w: Number(m[4]), h: Number(m[5]), op: m[6], lw: Number(m[1] ?? 1), color });
  } else if ((m = /(?:\[([\d.]+)\] 0 d )?([\d.]+) w (-?[\d.]+) (-?[\d.]+) m (-?[\d.]+) (-?[\d.]+) l S/.exec(line))) {
    cmds.push({ k: "line", x1: Number(m[3]), y1: H + Number(m[4]), x2: Number(m[5]), y2: H + Number(m[6]), lw: Number(m[2]), dash: m[1] ? Number(m[1]) : 0, color });
  } else if ((m = /^q ([\d.]+) 0 0 ([\d.]+) (-?[\d.]+) (-?[\d.]+) cm \/Logo Do Q$/.exec(line))) {
    cmds.push({ k: "logo", w: Number(m[1]), h: Number(m[2]), x: Number(m[3]), y: H + Number(m[4]) });
  } else if ((m = /^\/PDF417 BMC q ([\d.]+) 0 0 (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) cm$/.exec(line))) {
    cmds.push({ k: "pdf417", mod: Number(m[1]), x: Number(m[3]), top: H + Number(m[4]) });
  }
}
const sym = lib.fitPdf417(lib.latin1Bytes(doc.ted), { maxWidth: 255.1, maxHeight: 113.4, minModule: 0.482, minWidth: 141.7, maxModule: 0.35 * 72 / 25.4 }).symbol;
const tedBinary = doc.ted; // Latin-1 chars = bytes
const counts = cmds.reduce((a, c) => ((a[c.k] = (a[c.k] ?? 0) + 1), a), {});

let baselineLogo = true;
async function baseline() {
  const pdf = await PDFDocument.create();
  const fonts = [await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold)];
  const image = baselineLogo ? await pdf.embedPng(logo) : undefined;
  const page = pdf.addPage([595.28, 841.89]);
  for (const c of cmds) {
    if (c.k === "text") page.drawText(c.text, { x: c.x, y: c.y, size: c.size, font: fonts[c.font], color: rgb(...c.color) });
    else if (c.k === "rect") {
      if (c.op === "S") page.drawRectangle({ x: c.x, y: c.y, width: c.w, height: c.h, borderColor: rgb(...c.color), borderWidth: c.lw });
      else page.drawRectangle({ x: c.x, y: c.y, width: c.w, height: c.h, color: rgb(...c.color) });
    } else if (c.k === "line") {
      page.drawLine({ start: { x: c.x1, y: c.y1 }, end: { x: c.x2, y: c.y2 }, thickness: c.lw, color: rgb(...c.color), dashArray: c.dash ? [c.dash] : undefined });
    } else if (c.k === "logo") {
      if (image) page.drawImage(image, { x: c.x, y: c.y, width: c.w, height: c.h });
    }
    else if (c.k === "pdf417") {
      const polys = [];
      bwipPdf417(
        { bcid: "pdf417", text: tedBinary, binarytext: true, eclevel: 5, columns: sym.columns, rowmult: 3, scaleX: 1, scaleY: 1 },
        {
          scale: () => [1, 1],
          measure: () => ({ width: 0, ascent: 0, descent: 0 }),
          init() {},
          line() {},
          polygon(pts) {
            polys.push(pts);
          },
          hexagon() {},
          ellipse() {},
          fill() {},
          text() {},
          end() {},
        },
      );
      const ops = [pushGraphicsState()];
      for (const pts of polys) {
        ops.push(moveTo(c.x + pts[0][0] * c.mod, c.top - pts[0][1] * c.mod));
        for (let i = 1; i < pts.length; i++) ops.push(lineTo(c.x + pts[i][0] * c.mod, c.top - pts[i][1] * c.mod));
        ops.push(closePath());
      }
      ops.push(PDFOperator.of(PDFOperatorNames.FillEvenOdd), popGraphicsState());
      page.pushOperators(...ops);
    }
  }
  return pdf.save();
}

const ours = () => lib.renderPdf(doc, "A4", { copies: "original" });
// Logo cache cold: a different logo byte string every call (the IEND CRC byte changes; nothing checks it).
let variant = 0;
const oursCold = () => {
  const l = logo.slice();
  l[l.length - 1] = variant++ & 255;
  l[l.length - 2] = (variant >> 8) & 255;
  return lib.renderPdf({ ...doc, logo: l }, "A4", { copies: "original" });
};
const docNoLogo = { ...doc, logo: undefined };

/** PDF_BENCH_RUNS sets every measurement's run count (a smoke run, BENCH_SMOKE=1, runs each once). */
const RUNS = knob("PDF_BENCH_RUNS", 0, 1);

async function measure(fn, runs) {
  const n = RUNS || runs;
  for (let i = 0; i < Math.min(20, n); i++) await fn(); // warm-up
  const rounds = [];
  let size = 0;
  for (let r = 0; r < 3; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) size = (await fn()).length;
    const u = process.cpuUsage(t0);
    rounds.push((u.user + u.system) / 1000 / n);
  }
  rounds.sort((a, b) => a - b);
  return { ms: rounds[1], size };
}

console.log(`Runtime: Node ${process.version} (V8 ${process.versions.v8}); workerd ships its own V8 build: figures measured in Node, not inside workerd.`);
console.log(`Page: A4 factura (33), 12 lines, logo ${logo.length}-byte 400x150 RGBA PNG, TED ${tedBinary.length} bytes -> PDF417 ${sym.columns} columns x ${sym.rows} rows, ECL 5.`);
console.log(`Baseline replays ${counts.text} texts, ${counts.rect ?? 0} rects, ${counts.line ?? 0} lines, ${counts.logo ?? 0} logo, ${counts.pdf417} PDF417.`);
const fmt = (x) => x.toFixed(2).padStart(7);
const row = (label, r, extra = "") => console.log(`${label.padEnd(58)}: ${fmt(r.ms)} ms CPU/PDF ${String(r.size).padStart(7)} bytes${extra}`);
const b = await measure(baseline, 30);
const o = await measure(ours, 200);
const cold = await measure(oursCold, 100);
row("baseline: pdf-lib draw API + bwip-js, A4 1 page + logo", b);
row("ours: renderPdf A4 1 page + logo (logo cache warm)", o, `   ratio ${(b.ms / o.ms).toFixed(1)}x`);
row("ours: renderPdf A4 1 page + logo (logo cache cold)", cold, `   ratio ${(b.ms / cold.ms).toFixed(1)}x`);
const logoSave = baselineLogo;
baselineLogo = false;
const bn = await measure(baseline, 30);
baselineLogo = logoSave;
const on = await measure(() => lib.renderPdf(docNoLogo, "A4", { copies: "original" }), 200);
row("baseline: same page without logo", bn);
row("ours: same page without logo", on, `   ratio ${(bn.ms / on.ms).toFixed(1)}x`);
const both = await measure(() => lib.renderPdf(doc, "A4"), 100);
row("ours: A4 original + CEDIBLE copy (2 pages)", both, `   ${(both.ms / 2).toFixed(2)} ms/page`);
row("ours: 80mm roll, original only", await measure(() => lib.renderPdf(doc, "80mm", { copies: "original" }), 200));
row("ours: 58mm roll, original only", await measure(() => lib.renderPdf(doc, "58mm", { copies: "original" }), 200));
if (process.env.PDF_BENCH_OUT) {
  writeFileSync(path.join(process.env.PDF_BENCH_OUT, "bench-ours.pdf"), await ours());
  writeFileSync(path.join(process.env.PDF_BENCH_OUT, "bench-baseline.pdf"), await baseline());
}
