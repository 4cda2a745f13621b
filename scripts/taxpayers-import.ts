// `npm run taxpayers:import -- FILE [--remote] [--persist-to DIR] [--encoding latin1|utf8] [--chunk-rows N]`
// Loads the SII's list of authorised DTE taxpayers (RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA
// RESOLUCION;MAIL INTERCAMBIO;URL) into D1 (local by default, --remote for the deployed one) as a
// new versioned load: rows go in by chunks with progress on stderr, the load becomes current in one
// step only after every chunk is in, then older and abandoned loads are pruned. Bad lines are
// reported (first 20 on stderr, all in FILE.rejected.txt) and skipped. Prints one JSON summary.
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { parseTaxpayerLine, type BadLine, type TaxpayerRow } from "../src/accounts/taxpayers/csv";
import { wrangler } from "./local-env.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    remote: { type: "boolean", default: false },
    "persist-to": { type: "string" },
    encoding: { type: "string" },
    "chunk-rows": { type: "string", default: "100000" },
    "skip-migrations": { type: "boolean", default: false },
  },
});
const file = positionals[0];
if (!file) {
  process.stderr.write("usage: npm run taxpayers:import -- FILE [--remote] [--persist-to DIR] [--encoding latin1|utf8]\n");
  process.exit(2);
}
const where = values.remote ? ["--remote"] : ["--local", ...(values["persist-to"] ? ["--persist-to", values["persist-to"]] : [])];
const chunkRows = Math.max(1000, Number(values["chunk-rows"]));
const ROWS_PER_STATEMENT = 200; // keeps each statement well under D1's 100 KB statement limit

/** The SII serves ISO-8859-1; a file that is valid UTF-8 is read as UTF-8. */
function encodingOf(f: string): BufferEncoding {
  if (values.encoding) return values.encoding === "utf8" ? "utf8" : "latin1";
  const head = readFileSync(f).subarray(0, 1 << 20);
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head);
    return "utf8";
  } catch {
    return "latin1";
  }
}

async function readRows(f: string): Promise<{ rows: TaxpayerRow[]; bad: BadLine[] }> {
  const byRut = new Map<string, TaxpayerRow>();
  const bad: BadLine[] = [];
  const lines = createInterface({ input: createReadStream(f, { encoding: encodingOf(f) }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim() || (n === 1 && /^\s*RUT\s*;/i.test(line))) continue;
    const p = parseTaxpayerLine(line);
    if (!p.ok) bad.push({ line: n, reason: p.reason });
    else {
      if (byRut.has(p.row.rut)) bad.push({ line: n, reason: `RUT ${p.row.rut} repeated; the later row is kept` });
      byRut.set(p.row.rut, p.row);
    }
    if (n % 200_000 === 0) process.stderr.write(`read ${n} lines\n`);
  }
  return { rows: [...byRut.values()], bad };
}

const q = (v: string | number | null) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${v.replace(/'/g, "''")}'`);

function insertSql(loadId: string, rows: TaxpayerRow[]): string {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const values = rows
      .slice(i, i + ROWS_PER_STATEMENT)
      .map((r) => `(${q(loadId)},${q(r.rut)},${q(r.legalName)},${r.resolutionNumber},${q(r.resolutionDate)},${q(r.exchangeEmail)},${q(r.url)})`);
    out.push(`INSERT OR REPLACE INTO taxpayers (load_id, rut, legal_name, resolution_number, resolution_date, exchange_email, url) VALUES ${values.join(",")};`);
  }
  return out.join("\n");
}

function execute(sql: string): Record<string, unknown>[] {
  const out = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", sql]);
  return (JSON.parse(out.slice(out.indexOf("["))) as { results?: Record<string, unknown>[] }[]).flatMap((p) => p.results ?? []);
}

const t0 = Date.now();
if (!values["skip-migrations"]) wrangler(["d1", "migrations", "apply", "DB", ...where]);
const { rows, bad } = await readRows(file);
const tParsed = Date.now();
writeFileSync(`${file}.rejected.txt`, bad.map((b) => `${b.line}\t${b.reason}`).join("\n") + (bad.length ? "\n" : ""));
for (const b of bad.slice(0, 20)) process.stderr.write(`line ${b.line}: ${b.reason}\n`);
if (bad.length > 20) process.stderr.write(`… ${bad.length - 20} more in ${file}.rejected.txt\n`);

const loadId = `tpl_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
const now = new Date().toISOString();
execute(`INSERT INTO taxpayer_loads (id, source, status, started_at) VALUES (${q(loadId)}, ${q(path.basename(file))}, 'LOADING', ${q(now)})`);
const dir = mkdtempSync(path.join(tmpdir(), "taxpayers-"));
try {
  for (let i = 0; i < rows.length; i += chunkRows) {
    const chunkFile = path.join(dir, `chunk-${i}.sql`);
    writeFileSync(chunkFile, insertSql(loadId, rows.slice(i, i + chunkRows)));
    wrangler(["d1", "execute", "DB", ...where, "--yes", "--file", chunkFile]);
    process.stderr.write(`loaded ${Math.min(i + chunkRows, rows.length)} / ${rows.length} rows (${Math.round((Date.now() - tParsed) / 1000)} s)\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const at = new Date().toISOString();
execute(
  [
    "UPDATE taxpayer_loads SET status = 'REPLACED' WHERE status = 'CURRENT'",
    `UPDATE taxpayer_loads SET status = 'CURRENT', rows_loaded = ${rows.length}, rows_rejected = ${bad.length}, finished_at = ${q(at)} WHERE id = ${q(loadId)}`,
    `INSERT INTO taxpayer_directory (id, load_id, updated_at) VALUES (1, ${q(loadId)}, ${q(at)}) ON CONFLICT (id) DO UPDATE SET load_id = excluded.load_id, updated_at = excluded.updated_at`,
  ].join(";\n"),
);
const tLoaded = Date.now();
let pruned = 0;
for (const { id } of execute(`SELECT id FROM taxpayer_loads WHERE id <> ${q(loadId)}`) as { id: string }[]) {
  for (;;) {
    const r = execute(`DELETE FROM taxpayers WHERE load_id = ${q(id)} AND rut IN (SELECT rut FROM taxpayers WHERE load_id = ${q(id)} LIMIT 50000) RETURNING 1 AS x`);
    pruned += r.length;
    if (r.length < 50000) break;
  }
  execute(`DELETE FROM taxpayer_loads WHERE id = ${q(id)}`);
}
const summary = {
  load_id: loadId, loaded: rows.length, rejected: bad.length, pruned,
  parse_seconds: (tParsed - t0) / 1000, load_seconds: (tLoaded - tParsed) / 1000,
  rows_per_second: Math.round(rows.length / Math.max(0.001, (tLoaded - tParsed) / 1000)),
};
process.stdout.write(JSON.stringify(summary) + "\n");
