/** The allocator's own SQLite storage: its schema, row shapes and the per-call range state. */
import type { FolioRange } from "../../domain/folios/rules";

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
  `CREATE TABLE IF NOT EXISTS annulled (
     folio INTEGER PRIMARY KEY,
     caf_id TEXT NOT NULL,
     reason TEXT,
     annulled_at TEXT NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS annulled_by_range ON annulled (caf_id, folio)`,
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
