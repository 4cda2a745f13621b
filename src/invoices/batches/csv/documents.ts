/**
 * A CSV file's lines as a batch's rows: the lines that share a document_key make one document's
 * body (documents in the order their first line comes), or that document's error naming each line
 * and column at fault. Values are read in the layout's forms: numbers with the file's decimal mark
 * (thousands grouped by the other mark), dates as YYYY-MM-DD or DD-MM-YYYY, flags as S/N.
 */
import type { DocumentBody } from "../../../countries/port";
import type { ErrorDetail } from "../../../lib/errors";
import type { RowInput } from "../rows";
import { columnOfField, fieldOfColumn, type Column } from "./layout";
import type { CsvFile, CsvLine } from "./read";

export type Decimal = "," | ".";

class CellError extends Error {}

/** A text cell: no line break, nothing a spreadsheet would run as a formula. */
function text(v: string): string {
  if (/[\r\n]/.test(v)) throw new CellError("holds a line break; a cell of this layout is one line");
  if (/^[=+@\t\r]|^-(?![\d.,])/.test(v)) throw new CellError(`starts with "${v[0]}" like a spreadsheet formula (${JSON.stringify(v.slice(0, 20))}); remove it or prefix it with an apostrophe in the spreadsheet`);
  return v;
}

/** A number with `decimal` as the decimal mark and, optionally, the other mark between groups of three digits. */
export function number(v: string, decimal: Decimal): string {
  const group = decimal === "," ? "\\." : ",";
  const mark = decimal === "," ? "," : "\\.";
  const m = new RegExp(`^(-?)(\\d{1,3}(?:${group}\\d{3})+|\\d+)(?:${mark}(\\d+))?$`).exec(v.replace(/\s/g, ""));
  if (!m) throw new CellError(`${JSON.stringify(v)} is not a number with a decimal ${decimal === "," ? "comma" : "point"}`);
  return `${m[1]}${m[2]!.replace(/[.,]/g, "")}${m[3] ? `.${m[3]}` : ""}`;
}

/** A date: YYYY-MM-DD, DD-MM-YYYY or DD/MM/YYYY, and (`withTime`) optionally HH:MM[:SS] after it. */
export function date(v: string, withTime: boolean): string {
  const m = /^(?:(\d{4})-(\d{2})-(\d{2})|(\d{1,2})[-/](\d{1,2})[-/](\d{4}))(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(v);
  if (!m || (!withTime && m[7])) throw new CellError(`${JSON.stringify(v)} is not a date as YYYY-MM-DD or DD-MM-YYYY${withTime ? ", optionally with HH:MM:SS" : ""}`);
  const day = m[1] ? `${m[1]}-${m[2]}-${m[3]}` : `${m[6]}-${m[5]!.padStart(2, "0")}-${m[4]!.padStart(2, "0")}`;
  return withTime ? `${day} ${(m[7] ?? "00").padStart(2, "0")}:${m[8] ?? "00"}:${m[9] ?? "00"}` : day;
}

function flag(v: string): boolean {
  const u = v.toUpperCase();
  if (["S", "SI", "SÍ", "1", "X", "Y", "YES", "TRUE"].includes(u)) return true;
  if (["N", "NO", "0", "FALSE"].includes(u)) return false;
  throw new CellError(`${JSON.stringify(v)} is not S or N`);
}

function set(target: Record<string, unknown>, path: string, value: unknown) {
  const parts = path.split(".");
  let at: Record<string, unknown> = target;
  for (const [k, part] of parts.slice(0, -1).entries()) {
    at[part] ??= /^\d+$/.test(parts[k + 1]!) ? [] : {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts.at(-1)!] = value;
}

/** A cell's value in the body, or undefined for an empty cell. */
function valueOf(c: Column, raw: string, decimal: Decimal): unknown {
  const v = raw.trim();
  if (v === "") return undefined;
  if (c.kind === "number") return c.path.endsWith("activity_codes") ? [Number(number(v, "."))] : number(v, decimal);
  if (c.kind === "date" || c.kind === "datetime") return date(v, c.kind === "datetime");
  if (c.kind === "flag") return flag(v) ? [{ type: "EXE" }] : undefined;
  return text(v);
}

/** One document from its lines, or the problems of its lines (each naming the line and column). */
function documentOf(file: CsvFile, lines: CsvLine[], decimal: Decimal): { body: DocumentBody } | { problems: ErrorDetail[] } {
  const body: Record<string, unknown> = {};
  const items: Record<string, unknown>[] = [];
  const problems: ErrorDetail[] = [];
  const first = lines[0]!;
  for (const l of lines) {
    if (l.problem) {
      problems.push({ field: "(line)", message: l.problem });
      continue;
    }
    const item: Record<string, unknown> = {};
    for (const [k, c] of file.columns.entries()) {
      if (c.name === "document_key") continue;
      try {
        const value = valueOf(c, l.cells[k]!, decimal);
        if (value === undefined) continue;
        if (c.item) set(item, c.path, value);
        else if (l === first) set(body, c.path, value);
        else if (l.cells[k]!.trim() !== first.cells[k]!.trim()) throw new CellError(`differs from the document's first line (${first.line}); leave it empty on later lines`);
      } catch (e) {
        if (!(e instanceof CellError)) throw e;
        problems.push({ field: fieldOfColumn(c, items.length), message: `line ${l.line}, column ${c.name}: ${e.message}` });
      }
    }
    items.push(item);
  }
  if (problems.length > 0) return { problems };
  for (const party of ["issuer", "recipient"] as const) {
    const p = body[party] as Record<string, Record<string, unknown>> | undefined;
    if (!p) continue;
    if (p.document_number) p.document_type ??= "RUT" as never;
    if (p.address) p.address.country ??= "CL";
  }
  return { body: { ...body, items } as unknown as DocumentBody };
}

/** The documents of the file, in the order of their first line; a row's `lines` are the file's lines that made it. */
export function csvRows(file: CsvFile, decimal: Decimal, validate: (body: unknown) => RowInput): RowInput[] {
  const at = file.columns.findIndex((c) => c.name === "document_key");
  const groups = new Map<string, CsvLine[]>();
  for (const l of file.lines) {
    const key = (l.cells[at] ?? "").trim();
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  return [...groups].map(([key, lines]): RowInput => {
    const numbers = lines.map((l) => l.line);
    if (key === "") return { ok: false, error: { code: "BATCH_ROW_INVALID", message: `Lines ${numbers.join(", ")} have no document_key.`, details: [{ field: "document_key", message: "Required" }] }, lines: numbers };
    const doc = documentOf(file, lines, decimal);
    if ("problems" in doc) return { ok: false, error: { code: "BATCH_ROW_INVALID", message: `Document ${key}: ${doc.problems.map((p) => p.message).join("; ")}.`, details: doc.problems }, lines: numbers };
    return { ...validate(doc.body), lines: numbers };
  });
}

/** A detail of a CSV row's error with the line and column that wrote its field, when one did. */
export function onCsvLines(lines: number[], d: ErrorDetail): ErrorDetail {
  const at = columnOfField(d.field.replace(/^rows\[\d+\]\.?/, ""));
  if (!at || d.message.startsWith("line ")) return d;
  const line = at.item !== null ? lines[at.item] : lines[0];
  return line === undefined ? d : { field: d.field, message: `line ${line}, column ${at.column.name}: ${d.message}` };
}
