/**
 * Reading a batch's CSV file, treated as hostile: at most MAX_CSV_BYTES; UTF-8 (a BOM is dropped)
 * or, when it is not valid UTF-8, ISO-8859-1 as Excel writes it here (Windows-1252); the separator
 * (comma or semicolon) read from the header line; parsed by csv-parse (quoted fields, doubled
 * quotes, quoted line breaks). What makes the whole file unreadable (empty, binary, no layout header,
 * a quote never closed, more documents than a batch takes) refuses the file; what is wrong on a
 * line (its width, a formula-looking or multi-line cell, a value not in the layout's form) refuses
 * that line's document only, naming the line and the column.
 */
import { parse, CsvError } from "csv-parse/sync";
import { AppError } from "../../../lib/errors";
import { MAX_BATCH_ROWS } from "../rows";
import { COLUMNS, LAYOUT_V1, type Column } from "./layout";

export const MAX_CSV_BYTES = 10 * 1024 * 1024;

export interface CsvLine {
  /** 1-based line of the file where the record starts (the header is line 1). */
  line: number;
  cells: string[];
  /** Why the line cannot be read (its width), or null. */
  problem: string | null;
}

export interface CsvFile {
  encoding: "UTF-8" | "ISO-8859-1";
  separator: "," | ";";
  columns: Column[];
  lines: CsvLine[];
}

const fileError = (message: string, field = "file") => new AppError("BATCH_FILE_INVALID", message, [{ field, message }]);

/** UTF-8 when the bytes are valid UTF-8 (its BOM dropped), else ISO-8859-1 read as Windows-1252 (what Excel writes for "CSV"). */
export function decode(bytes: Uint8Array): { text: string; encoding: CsvFile["encoding"] } {
  if (bytes.includes(0)) throw fileError("The file holds NUL bytes: it is not a CSV text file (an Excel .xlsx must be saved as CSV first).");
  try {
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes), encoding: "UTF-8" };
  } catch {
    return { text: new TextDecoder("windows-1252").decode(bytes), encoding: "ISO-8859-1" };
  }
}

/** The separator of the header line: the one of `;` and `,` it holds more of (Excel in Chile writes `;`). */
function separatorOf(header: string): CsvFile["separator"] {
  const count = (c: string) => header.split(c).length - 1;
  return count(";") >= count(",") && count(";") > 0 ? ";" : ",";
}

/** The header's columns in the layout: every column of the layout, each once, in any order. */
function headerColumns(cells: string[]): Column[] {
  const names = cells.map((c) => c.trim().toLowerCase());
  const unknown = names.filter((n) => !COLUMNS.some((c) => c.name === n));
  const missing = COLUMNS.filter((c) => !names.includes(c.name)).map((c) => c.name);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (!names.includes("document_key")) throw fileError(`Line 1 is not the header of the ${LAYOUT_V1} layout: it has no document_key column. Download the template (GET /api/invoice-batches/csv-template).`, "line 1");
  const problems = [
    unknown.length ? `unknown column(s) ${unknown.join(", ")}` : "",
    missing.length ? `missing column(s) ${missing.join(", ")}` : "",
    repeated.length ? `column(s) named twice: ${[...new Set(repeated)].join(", ")}` : "",
  ].filter(Boolean);
  if (problems.length) throw fileError(`The header (line 1) does not match the ${LAYOUT_V1} layout: ${problems.join("; ")}.`, "line 1");
  return names.map((n) => COLUMNS.find((c) => c.name === n)!);
}

/** The file's header and lines; the whole file refused when it cannot be read at all. */
export function readCsv(bytes: Uint8Array): CsvFile {
  if (bytes.byteLength > MAX_CSV_BYTES) throw new AppError("BATCH_FILE_TOO_LARGE", `The file has ${bytes.byteLength} bytes; a batch file takes at most ${MAX_CSV_BYTES} (10 MB): split it.`);
  const { text, encoding } = decode(bytes);
  const body = text.replace(/^\uFEFF/, "");
  if (body.trim() === "") throw fileError("The file is empty.");
  const separator = separatorOf(body.slice(0, body.search(/\r?\n|$/)));
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(body, { delimiter: separator, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, info: true }) as unknown as typeof records;
  } catch (e) {
    if (e instanceof CsvError) throw fileError(`The file cannot be read as CSV near line ${(e as CsvError & { lines?: number }).lines ?? "?"}: ${e.message.replace(/^[^:]*:\s*/, "")}. Nothing was stored.`);
    throw e;
  }
  const [header, ...rest] = records;
  const columns = headerColumns(header!.record);
  const lines = rest.map(({ record, info }): CsvLine => {
    const line = info.lines - record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
    const problem = record.length === columns.length ? null : `line ${line} has ${record.length} columns where the header has ${columns.length}`;
    return { line, cells: record, problem };
  });
  const at = columns.findIndex((c) => c.name === "document_key");
  const keys = new Set(lines.map((l) => l.cells[at]?.trim() ?? ""));
  if (keys.size > MAX_BATCH_ROWS) throw new AppError("BATCH_TOO_MANY_ROWS", `The file holds ${keys.size} documents; at most ${MAX_BATCH_ROWS} go in one batch: split it.`);
  return { encoding, separator, columns, lines };
}
