/** The allocator's own SQLite storage: its schema, row shapes and the per-call range state. */
import type { AllocationRecord } from "../allocator-api";
import { defaultThreshold, INITIAL_ALERT_STATE, type AlertState, type FolioRange } from "../rules";

/** The allocator's schema, one baseline made on construction (IF NOT EXISTS: a woken object has it). */
export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ranges (
     caf_id TEXT PRIMARY KEY,
     from_folio INTEGER NOT NULL,
     to_folio INTEGER NOT NULL,
     active INTEGER NOT NULL,
     authorized_at TEXT NOT NULL,
     expires_at TEXT,
     cursor INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     deactivated_at TEXT
   )`,
  `CREATE TABLE IF NOT EXISTS allocations (
     document_id TEXT PRIMARY KEY,
     folio INTEGER NOT NULL UNIQUE,
     caf_id TEXT NOT NULL,
     allocated_at TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS reservations (
     document_id TEXT PRIMARY KEY,
     issue_date TEXT,
     reserved_at INTEGER NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS annulled (
     folio INTEGER PRIMARY KEY,
     caf_id TEXT NOT NULL,
     reason TEXT,
     annulled_at TEXT NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS annulled_by_range ON annulled (caf_id, folio)`,
  // The pruning's walk by time (./pruning.ts): the ULID time of the document id.
  `CREATE INDEX IF NOT EXISTS allocations_by_time ON allocations (substr(document_id, -26, 10)) WHERE substr(document_id, -27, 1) = '_'`,
  `CREATE TABLE IF NOT EXISTS next_folio_moves (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     requested INTEGER NOT NULL,
     next_number_to_use INTEGER NOT NULL,
     folios_updated INTEGER NOT NULL,
     moved_at TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS alerts (
     dedupe_key TEXT PRIMARY KEY,
     payload TEXT NOT NULL,
     created_at TEXT NOT NULL,
     sent_at TEXT
   )`,
];

/** Alarm retry delay when the D1 outbox could not be written. */
export const OUTBOX_RETRY_MS = 30_000;
export const MAX_DOCUMENT_ID_LENGTH = 200;
export const MAX_BATCH = 1000;
/**
 * A reservation not turned into a folio within a day is ignored (and dropped by the next reserve):
 * the pipeline allocates within seconds of the POST, so only a request that died between reserving
 * and storing its document leaves one behind.
 */
export const RESERVATION_TTL_MS = 86_400_000;

export interface RangeRow extends Record<string, SqlStorageValue> {
  caf_id: string;
  from_folio: number;
  to_folio: number;
  active: number;
  authorized_at: string;
  expires_at: string | null;
  cursor: number;
}

/**
 * Ranges and pending annulled folios of one critical section: loaded from storage on first use,
 * then kept current in memory by allocateOne (changed cursors are written by writeCursors).
 */
export class SectionState {
  private rangesCache: FolioRange[] | null = null;
  private annulledCache: Set<number> | null = null;
  readonly dirty = new Set<string>();
  constructor(
    private readonly readRanges: () => FolioRange[],
    private readonly readAnnulled: () => Set<number>,
  ) {}
  get loaded(): boolean {
    return this.rangesCache !== null;
  }
  get ranges(): FolioRange[] {
    return (this.rangesCache ??= this.readRanges());
  }
  get annulled(): Set<number> {
    return (this.annulledCache ??= this.readAnnulled());
  }
}

/** Synchronous reads and writes of the allocator's own tables (the schema is created on construction). */
export class FolioStore {
  constructor(private readonly sql: SqlStorage) {
    for (const stmt of SCHEMA) sql.exec(stmt);
  }


  getMeta(key: string): string | null {
    const rows = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray();
    return rows[0]?.value ?? null;
  }

  setMeta(key: string, value: string): void {
    this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value);
  }

  loadRanges(): FolioRange[] {
    return this.sql
      .exec<RangeRow>("SELECT caf_id, from_folio, to_folio, active, authorized_at, expires_at, cursor FROM ranges ORDER BY from_folio")
      .toArray()
      .map((r) => ({
        id: r.caf_id,
        from: r.from_folio,
        to: r.to_folio,
        active: r.active === 1,
        authorizedAt: r.authorized_at,
        expiresAt: r.expires_at,
        cursor: r.cursor,
      }));
  }

  /** Annulled folios not yet passed by their range's cursor (the only ones planning looks at). */
  loadPendingAnnulled(): Set<number> {
    const rows = this.sql
      .exec<{ folio: number }>(
        "SELECT a.folio AS folio FROM annulled a JOIN ranges r ON r.caf_id = a.caf_id WHERE a.folio >= r.cursor",
      )
      .toArray();
    return new Set(rows.map((r) => r.folio));
  }

  threshold(loadedActive: number): { value: number; isDefault: boolean } {
    const v = this.getMeta("threshold");
    if (v === null) return { value: defaultThreshold(loadedActive), isDefault: true };
    return { value: Number(v), isDefault: false };
  }

  alertState(): AlertState {
    const v = this.getMeta("alert_state");
    return v === null ? INITIAL_ALERT_STATE : (JSON.parse(v) as AlertState);
  }

  hasReservation(documentId: string): boolean {
    return this.sql.exec("SELECT 1 FROM reservations WHERE document_id = ?", documentId).toArray().length > 0;
  }

  /** Live reservations (younger than RESERVATION_TTL_MS). */
  reservationCount(now: number): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM reservations WHERE reserved_at > ?", now - RESERVATION_TTL_MS).one().n;
  }

  findAllocation(documentId: string): AllocationRecord | null {
    const row = this.sql
      .exec<{ folio: number; caf_id: string; allocated_at: string }>(
        "SELECT folio, caf_id, allocated_at FROM allocations WHERE document_id = ?",
        documentId,
      )
      .toArray()[0];
    return row ? { documentId, folio: row.folio, cafId: row.caf_id, allocatedAt: row.allocated_at } : null;
  }
}
