/**
 * The CSV side of the batch routes: the upload's parts, the file read into rows
 * (src/invoices/batches/csv), and the template.
 */
import { z } from "@hono/zod-openapi";
import { csvRows, onCsvLines, type Decimal } from "../../../invoices/batches/csv/documents";
import { COLUMNS, LAYOUT_V1, template } from "../../../invoices/batches/csv/layout";
import { MAX_CSV_BYTES, readCsv } from "../../../invoices/batches/csv/read";
import type { BatchInput } from "../../../invoices/batches/intake";
import type { RowInput } from "../../../invoices/batches/rows";
import { filePart } from "../../openapi/common";

export const BatchUploadSchema = z
  .object({
    file: filePart("the CSV file", `The documents in the ${LAYOUT_V1} layout (docs/batches.md; template: GET /api/invoice-batches/csv-template): UTF-8 or ISO-8859-1, comma or semicolon separated, at most ${MAX_CSV_BYTES} bytes.`),
    decimal_separator: z.enum([",", "."]).optional().openapi({ description: "The decimal mark of the file's numbers; default: a comma when the file is separated by semicolons, a point when by commas." }),
  })
  .openapi("BatchUpload");

export const TemplateQuery = z.object({
  separator: z.enum([";", ","]).optional().openapi({ param: { name: "separator", in: "query" }, description: "Default `;` (Excel in Chile)." }),
  decimal_separator: z.enum([",", "."]).optional().openapi({ param: { name: "decimal_separator", in: "query" }, description: "Default: a comma with `;`, a point with `,`." }),
});

export const TEMPLATE_DESCRIPTION = `The ${LAYOUT_V1} layout: a header line, then one line per line item; lines with the same document_key make one document. Columns: ${COLUMNS.map((c) => `\`${c.name}\` (${c.description})`).join("; ")}`;

/** The upload read into the batch's rows, each CSV document checked with `validate` as a JSON row is. */
export async function csvBatch(form: z.infer<typeof BatchUploadSchema>, validate: (body: unknown) => RowInput): Promise<BatchInput> {
  const file = readCsv(new Uint8Array(await form.file.arrayBuffer()));
  const decimal: Decimal = form.decimal_separator ?? (file.separator === ";" ? "," : ".");
  const rows = csvRows(file, decimal, validate);
  const layout = `${LAYOUT_V1} (${file.encoding}, separator "${file.separator}", decimal "${decimal}")`;
  return { source: "CSV", rows, fileName: form.file.name.slice(0, 200) || null, layout, annotate: (i, d) => onCsvLines(rows[i]?.lines ?? [], d) };
}

export function csvTemplate(q: z.infer<typeof TemplateQuery>): Response {
  const separator = q.separator ?? ";";
  const decimal = q.decimal_separator ?? (separator === ";" ? "," : ".");
  return new Response(template(separator, decimal), { headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="dte-batch-csv-1.csv"` } });
}
