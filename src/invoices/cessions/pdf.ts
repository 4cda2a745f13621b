/**
 * The cession's own PDF summary (not the document's cedible copy, which stays as it is): who ceded
 * which document to whom, for how much, when it was signed and registered, under which track id, and
 * the sworn declaration the file carries. One A4 page, Helvetica (WinAnsi: Spanish text prints as is).
 */
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from "pdf-lib";
import { AppError } from "../../lib/errors";
import type { CessionRow } from "./view";

const TYPE_NAMES: Record<number, string> = { 33: "Factura electrónica", 34: "Factura no afecta o exenta electrónica", 43: "Liquidación-factura electrónica", 46: "Factura de compra electrónica" };

type Party = { tax_id: string; legal_name: string; address: string; email: string };

/** Lines of `text` at most `width` points wide in `font` at `size`. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (font.widthOfTextAtSize(next, size) > width && line) {
      out.push(line);
      line = word;
    } else line = next;
  }
  if (line) out.push(line);
  return out;
}

const printable = (s: string) => s.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, "?");

export async function cessionPdf(row: CessionRow): Promise<{ bytes: Uint8Array; fileName: string }> {
  if (row.status !== "REGISTERED") throw new AppError("CESSION_PDF_NOT_READY", `${row.id} is ${row.status}: its summary is printed once the register has annotated it.`);
  const pdf = await PDFDocument.create();
  const page: PDFPage = pdf.addPage([595.28, 841.89]);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  let y = 790;
  const line = (text: string, o: { font?: PDFFont; size?: number; gap?: number } = {}) => {
    const size = o.size ?? 10;
    for (const l of wrap(printable(text), o.font ?? regular, size, 495)) {
      page.drawText(l, { x: 50, y, size, font: o.font ?? regular });
      y -= size + 4;
    }
    y -= o.gap ?? 0;
  };
  const cedent = JSON.parse(row.cedent) as Party;
  const assignee = JSON.parse(row.assignee) as Party;
  line("Cesión de crédito electrónica (Ley 19.983)", { font: bold, size: 16, gap: 4 });
  line(`Anotada en el Registro Público Electrónico de Transferencias de Crédito (RPETC) del SII. Track id ${row.trackId ?? "-"}, estado ${row.fiscalStatus ?? "-"}.`, { gap: 10 });
  line("Documento cedido", { font: bold, size: 12 });
  line(`${TYPE_NAMES[row.documentType] ?? `Tipo ${row.documentType}`} N° ${row.folio}, emitida el ${row.issueDate}, monto total $${row.total}.`);
  line(`Deudor: ${row.debtorName}, RUT ${row.debtorRut}.`, { gap: 10 });
  line("Cedente", { font: bold, size: 12 });
  line(`${cedent.legal_name}, RUT ${cedent.tax_id}. ${cedent.address}. ${cedent.email}.`, { gap: 10 });
  line("Cesionario", { font: bold, size: 12 });
  line(`${assignee.legal_name}, RUT ${assignee.tax_id}. ${assignee.address}. ${assignee.email}.`, { gap: 10 });
  line("Cesión", { font: bold, size: 12 });
  line(`Monto cedido: $${row.amount}. Último vencimiento: ${row.lastDueDate}.`);
  line(`Firmada el ${row.signedAt.replace("T", " ")} (hora de Chile); anotada el ${(row.registeredAt ?? "").slice(0, 19).replace("T", " ")} UTC.`, { gap: 10 });
  if (row.declaration) {
    line("Declaración jurada", { font: bold, size: 12 });
    line(row.declaration, { size: 9, gap: 10 });
  }
  line(`El deudor se entiende notificado de la cesión el día hábil siguiente a su anotación en el registro: desde entonces debe pagar al cesionario. Resumen ${row.id}.`, { size: 8 });
  return { bytes: await pdf.save(), fileName: `Cesion_T${row.documentType}_F${row.folio}.pdf` };
}
