import type { Catalog, CatalogEntry } from "./types";

/** Lower case without accents: "Ñuñoa" and "NUNOA" compare equal. */
export function fold(s: string): string {
  return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
}

export interface CatalogFilter {
  /** Exact code, case-insensitive. */
  code?: string;
  /** Text contained in the name or the code, accent- and case-insensitive. */
  q?: string;
}

const folded = new WeakMap<CatalogEntry, string>();
function haystack(e: CatalogEntry): string {
  let h = folded.get(e);
  if (h === undefined) {
    const texts = [e.code, e.name, ...Object.values(e.attributes).flatMap((v) => (typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []))];
    h = fold(texts.join("\u0000"));
    folded.set(e, h);
  }
  return h;
}

export function filterEntries(catalog: Catalog, f: CatalogFilter): CatalogEntry[] {
  let rows = catalog.entries as CatalogEntry[];
  if (f.code !== undefined) {
    const c = fold(f.code);
    rows = rows.filter((e) => fold(e.code) === c);
  }
  if (f.q !== undefined && f.q.trim() !== "") {
    const q = fold(f.q);
    const words = q.split(/\s+/);
    rows = rows.filter((e) => words.every((w) => haystack(e).includes(w)));
    // Best matches first: the code or the whole name, then a name that starts with the text, then
    // one of its words that does; the catalog's order within each rank.
    const rank = (e: CatalogEntry) => {
      const name = fold(e.name);
      if (fold(e.code) === q || name === q) return 0;
      if (name.startsWith(q)) return 1;
      return name.split(/[\s,.;:()/-]+/).some((w) => w.startsWith(words[0]!)) ? 2 : 3;
    };
    rows = rows.map((e, i) => ({ e, i, r: rank(e) })).sort((a, b) => a.r - b.r || a.i - b.i).map((x) => x.e);
  }
  return rows;
}

/** Finds an entry by code (case-insensitive) or, when `byName`, by its name (accent-insensitive). */
export function findEntry(catalog: Catalog, code: string, byName = false): CatalogEntry | undefined {
  const c = fold(code);
  return catalog.entries.find((e) => fold(e.code) === c || (byName && fold(e.name) === c));
}
