/**
 * Bytes stored in D1, for the capacity benchmark: every row of every table, sized as SQLite stores
 * it (the record format of https://www.sqlite.org/fileformat2.html §2.1 and §1.6: a header of one
 * serial type per column, then the values; a table leaf cell adds the payload length and rowid
 * varints and a 2-byte cell pointer), plus one entry per index (its columns and the rowid, as an
 * index cell), partial indexes only for the rows their WHERE selects. D1 does not offer `dbstat` nor
 * `PRAGMA page_count`, so this is the logical size; the physical growth comes from the `size_after`
 * that D1 reports with every query (whole pages, free space included).
 */

type Value = null | number | string | number[] | ArrayBuffer;

interface IndexInfo {
  name: string;
  columns: (string | null)[]; // null: an expression (sized as 8 bytes)
  where: string | null;
}

export interface TableInfo {
  name: string;
  columns: string[];
  rowidAlias: string | null; // an INTEGER PRIMARY KEY column is the rowid, stored as NULL in the record
  indexes: IndexInfo[];
}

const varintLen = (v: number) => {
  let n = 1;
  for (let x = Math.max(0, v); x >= 128 && n < 9; x = Math.floor(x / 128)) n++;
  return n;
};

const enc = new TextEncoder();

/** [header bytes, body bytes] of one value in a record. */
function valueSize(v: Value | undefined): [number, number] {
  if (v === null || v === undefined) return [1, 0];
  if (typeof v === "number") {
    if (!Number.isInteger(v)) return [1, 8];
    const a = v < 0 ? -v - 1 : v;
    if (v === 0 || v === 1) return [1, 0];
    const body = a < 2 ** 7 ? 1 : a < 2 ** 15 ? 2 : a < 2 ** 23 ? 3 : a < 2 ** 31 ? 4 : a < 2 ** 47 ? 6 : 8;
    return [1, body];
  }
  if (typeof v === "string") {
    const n = enc.encode(v).length;
    return [varintLen(2 * n + 13), n];
  }
  const n = Array.isArray(v) ? v.length : v.byteLength;
  return [varintLen(2 * n + 12), n];
}

function recordSize(values: (Value | undefined)[]): number {
  let header = 0;
  let body = 0;
  for (const v of values) {
    const [h, b] = valueSize(v);
    header += h;
    body += b;
  }
  return varintLen(header + 1) + header + body;
}

export async function schemaOf(db: D1Database): Promise<TableInfo[]> {
  const { results } = await db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table','index') AND name NOT LIKE 'sqlite_stat%' AND tbl_name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND tbl_name NOT IN ('d1_migrations', 'sqlite_sequence')").all<{ type: string; name: string; tbl_name: string; sql: string | null }>();
  const out: TableInfo[] = [];
  for (const t of results.filter((r) => r.type === "table")) {
    // WITHOUT ROWID tables (the taxpayer directory) are reference data that does not grow with documents.
    if (/WITHOUT\s+ROWID/i.test(t.sql ?? "")) continue;
    const cols = (await db.prepare(`PRAGMA table_info("${t.name}")`).all<{ name: string; type: string; pk: number }>()).results;
    const pks = cols.filter((c) => c.pk > 0);
    const rowidAlias = pks.length === 1 && /^INTEGER$/i.test(pks[0]!.type) ? pks[0]!.name : null;
    const indexes: IndexInfo[] = [];
    for (const ix of (await db.prepare(`PRAGMA index_list("${t.name}")`).all<{ name: string }>()).results) {
      const info = (await db.prepare(`PRAGMA index_info("${ix.name}")`).all<{ seqno: number; name: string | null }>()).results.sort((a, b) => a.seqno - b.seqno);
      const sql = results.find((r) => r.type === "index" && r.name === ix.name)?.sql ?? null;
      const where = sql ? (/\)\s+WHERE\s+([\s\S]+)$/i.exec(sql)?.[1] ?? null) : null;
      indexes.push({ name: ix.name, columns: info.map((c) => c.name), where });
    }
    out.push({ name: t.name, columns: cols.map((c) => c.name), rowidAlias, indexes });
  }
  return out;
}

export interface RowSize {
  sig: string; // the row's content, to see updates
  table: number; // table b-tree cell
  index: number; // all its index cells
  ix: Map<string, { key: string; size: number }>; // each index cell of the row
}

export type Snapshot = Map<string, Map<number, RowSize>>;

export async function snapshot(db: D1Database, tables: TableInfo[]): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const t of tables) {
    const rows = (await db.prepare(`SELECT rowid AS "__rowid", * FROM "${t.name}"`).raw<Value[]>()) as Value[][];
    const inPartial = new Map<string, Set<number>>();
    for (const ix of t.indexes.filter((i) => i.where)) {
      const ids = (await db.prepare(`SELECT rowid FROM "${t.name}" WHERE ${ix.where}`).raw<[number]>()).map((r) => r[0]);
      inPartial.set(ix.name, new Set(ids));
    }
    const sized = new Map<number, RowSize>();
    for (const r of rows) {
      const rowid = r[0] as number;
      const values = r.slice(1);
      const byName = new Map(t.columns.map((c, i) => [c, values[i]]));
      const record = recordSize(t.columns.map((c, i) => (c === t.rowidAlias ? null : values[i])));
      const table = varintLen(record) + varintLen(rowid) + record + 2;
      let index = 0;
      const ixCells = new Map<string, { key: string; size: number }>();
      for (const ix of t.indexes) {
        if (ix.where && !inPartial.get(ix.name)!.has(rowid)) continue;
        const key = ix.columns.map((c) => (c === null ? 0xffffffff : byName.get(c)));
        const rec = recordSize([...key, rowid]);
        index += varintLen(rec) + rec + 2;
        ixCells.set(ix.name, { key: JSON.stringify(key), size: varintLen(rec) + rec + 2 });
      }
      sized.set(rowid, { sig: JSON.stringify(values), table, index, ix: ixCells });
    }
    out.set(t.name, sized);
  }
  return out;
}

export interface TableDelta {
  inserted: number;
  updated: number;
  deleted: number;
  /** Table and index cells of new rows; of updated rows, the rewritten table cell and the index cells whose key changed. */
  bytesWritten: number;
  /** Net growth of the table and its indexes. */
  tableGrowth: number;
  indexGrowth: number;
}

export function diff(before: Snapshot, after: Snapshot): Map<string, TableDelta> {
  const out = new Map<string, TableDelta>();
  for (const [name, rows] of after) {
    const prev = before.get(name) ?? new Map<number, RowSize>();
    const d: TableDelta = { inserted: 0, updated: 0, deleted: 0, bytesWritten: 0, tableGrowth: 0, indexGrowth: 0 };
    for (const [id, r] of rows) {
      const p = prev.get(id);
      if (!p) {
        d.inserted++;
        d.bytesWritten += r.table + r.index;
      } else if (p.sig !== r.sig) {
        d.updated++;
        d.bytesWritten += r.table;
        for (const [name, cell] of r.ix) if (p.ix.get(name)?.key !== cell.key) d.bytesWritten += cell.size; // index cells moved or added
      }
      d.tableGrowth += r.table - (p?.table ?? 0);
      d.indexGrowth += r.index - (p?.index ?? 0);
    }
    for (const [id, p] of prev) {
      if (rows.has(id)) continue;
      d.deleted++;
      d.tableGrowth -= p.table;
      d.indexGrowth -= p.index;
    }
    if (d.inserted || d.updated || d.deleted) out.set(name, d);
  }
  return out;
}

/** The database's size in bytes, as D1 reports it after a query. */
export async function physicalSize(db: D1Database): Promise<number> {
  const r = await db.prepare("SELECT 1").run();
  return (r.meta as { size_after: number }).size_after;
}
