import { issuingCountry } from "../../countries";
import type { TaxpayerRow } from "./csv";

/** The canonical form (76086428-5) of a RUT typed in any usual form, or null when it is not one. */
export function canonicalRut(input: string): string | null {
  try {
    return issuingCountry().taxId.normalize(input);
  } catch {
    return null;
  }
}

/** Rows per INSERT statement (D1 allows 100 bound parameters per statement: 14 rows × 7). */
export const ROWS_PER_INSERT = 14;

export interface TaxpayerRecord extends TaxpayerRow {
  loadId: string;
}

/** Looks a RUT up in the current load (primary-key seek: (load_id, rut)). */
export async function findTaxpayer(db: D1Database, rut: string): Promise<TaxpayerRecord | null> {
  const row = await db
    .prepare(
      `SELECT t.load_id, t.rut, t.legal_name, t.resolution_number, t.resolution_date, t.exchange_email, t.url
         FROM taxpayer_directory d JOIN taxpayers t ON t.load_id = d.load_id AND t.rut = ?1 WHERE d.id = 1`,
    )
    .bind(rut)
    .first<Record<string, any>>();
  if (!row) return null;
  return {
    loadId: row.load_id, rut: row.rut, legalName: row.legal_name, resolutionNumber: row.resolution_number,
    resolutionDate: row.resolution_date, exchangeEmail: row.exchange_email, url: row.url,
  };
}

/** The statements of a versioned load, as SQL text and bindings (shared by the Worker and the CLI). */
export const LOAD_SQL = {
  begin: "INSERT INTO taxpayer_loads (id, source, status, started_at) VALUES (?1, ?2, 'LOADING', ?3)",
  insert: (n: number) =>
    `INSERT OR REPLACE INTO taxpayers (load_id, rut, legal_name, resolution_number, resolution_date, exchange_email, url) VALUES ${Array.from(
      { length: n },
      (_, i) => `(?${i * 7 + 1}, ?${i * 7 + 2}, ?${i * 7 + 3}, ?${i * 7 + 4}, ?${i * 7 + 5}, ?${i * 7 + 6}, ?${i * 7 + 7})`,
    ).join(", ")}`,
  /** Swap: one statement each, in one batch (a transaction). */
  commit: [
    "UPDATE taxpayer_loads SET status = 'REPLACED' WHERE status = 'CURRENT'",
    "UPDATE taxpayer_loads SET status = 'CURRENT', rows_loaded = ?2, rows_rejected = ?3, finished_at = ?4 WHERE id = ?1",
    "INSERT INTO taxpayer_directory (id, load_id, updated_at) VALUES (1, ?1, ?4) ON CONFLICT (id) DO UPDATE SET load_id = excluded.load_id, updated_at = excluded.updated_at",
  ],
  staleLoads: "SELECT id FROM taxpayer_loads WHERE id <> COALESCE((SELECT load_id FROM taxpayer_directory WHERE id = 1), '') AND id <> ?1",
  pruneSlice: "DELETE FROM taxpayers WHERE load_id = ?1 AND rut IN (SELECT rut FROM taxpayers WHERE load_id = ?1 LIMIT ?2)",
  dropLoad: "DELETE FROM taxpayer_loads WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM taxpayers WHERE load_id = ?1)",
};
export function rowBindings(loadId: string, rows: readonly TaxpayerRow[]): unknown[] {
  return rows.flatMap((r) => [loadId, r.rut, r.legalName, r.resolutionNumber, r.resolutionDate, r.exchangeEmail, r.url]);
}
