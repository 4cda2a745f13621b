// Writes sample PDFs (every format x several document types, with and without logo) to a folder for a
// visual check: `npx tsx scripts/pdf-samples.ts /tmp/pdf-samples`, then e.g. `pdftoppm -png -r 80`.
// The documents are fictitious test material (test/unit/pdf/samples.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PDF_FORMATS, pdfFileName, renderPdf, type DteTypeCode } from "../src/countries/cl/printed/pdf/index";
import { sampleDocument, samplePng } from "../test/pdf/samples";

const out = process.argv[2] ?? "/tmp/pdf-samples";
mkdirSync(out, { recursive: true });
const logo = samplePng();
const jobs: { type: DteTypeCode; lines: number; english?: boolean }[] = [
  { type: 33, lines: 4 },
  { type: 33, lines: 60 },
  { type: 34, lines: 3 },
  { type: 39, lines: 5 },
  { type: 52, lines: 3 },
  { type: 56, lines: 2 },
  { type: 61, lines: 2 },
  { type: 110, lines: 3, english: true },
];
for (const job of jobs) {
  for (const format of PDF_FORMATS) {
    const doc = sampleDocument(job.type, { lines: job.lines, logo: job.type === 33 || job.type === 39 ? logo : undefined });
    if (job.english) {
      doc.settings = { language: "en", decimal_places: 2, thousand_separator: ",", decimal_separator: "." };
      doc.totals.currency = "USD";
    }
    const file = path.join(out, `${job.lines}lines_${pdfFileName(doc, format)}`);
    writeFileSync(file, await renderPdf(doc, format));
    console.log(file);
  }
}
