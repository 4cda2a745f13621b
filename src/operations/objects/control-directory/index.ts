import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { createDb } from "../../../storage/db/client";
import { DIRECTORY_TTL_MS } from "../../../storage/db/control-directory";
import { readOpenPartition } from "../../../storage/db/document-store";
import { apiKeys, cafs, companies, type DocumentPartition } from "../../../storage/db/schema";
import { LAST_USED_RESOLUTION_MS, readKeyEntry, type KeyEntry } from "../../../accounts/access/api-keys";
import { readCompanyControl, type CompanyControl } from "../../../accounts/companies/control-cache";
import type { CompanyRow } from "../../../accounts/companies/repository";

/**
 * One object of the control directory (src/storage/db/control-directory.ts): `company:<id>` or
 * `key:<hash>`, holding in its own SQLite storage the control rows an isolate would otherwise read
 * from D1 on every cache miss. Each entry (a "part": `company`, `control`, `open`, `key`) is filled
 * from D1 on a miss, kept DIRECTORY_TTL_MS, and dropped by `forget`, which every control-plane write
 * calls after its D1 commit. A company's object also holds the CAF rows the pipeline opens
 * (`caf:<id>`: file key and mode), dropped with the rest.
 *
 * Never stored: an absence (no company, no key, no open partition; a company without an active
 * certificate keeps its control data unstored, as the isolate cache does), a failed read, and a fill
 * that began before a `forget` and ended after it: `generation` counts the forgets, and a fill keeps
 * its result only if no forget happened while it read D1 (a D1 read is not inside the object's input
 * gate, so a forget can run in between). Concurrent misses of one part share one D1 read.
 *
 * Storage is made on the first entry kept: an object addressed for an id that does not exist (a
 * guessed key, an unknown company) writes nothing.
 */
/** What the pipeline needs of a CAF row to open its file. */
export interface CafEntry {
  fileKey: string;
  livemode: boolean;
}

export class ControlDirectory extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private generation = 0;
  private tableReady: boolean;
  /** Until when a fill is served but not kept (`forget` with a hold; kept in storage across evictions). */
  private holdUntil = 0;
  private readonly pending = new Map<string, { generation: number; value: Promise<unknown> }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.tableReady = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").toArray().length > 0;
    if (this.tableReady) this.holdUntil = Number(this.sql.exec<{ v: number | null }>("SELECT max(filled_at) AS v FROM entries WHERE part = 'hold'").one().v ?? 0);
  }

  /** The company's control data (company, settings, active certificate, CAF types); `fresh` reads D1 again. */
  control(companyId: string, fresh = false): Promise<CompanyControl | null> {
    return this.entry("control", fresh, () => readCompanyControl(createDb(this.env.DB), companyId), (found) => found?.certificate !== undefined);
  }

  /**
   * The company's row (deleted ones too: the caller refuses them): the control data's when the
   * object holds it; else a miss fills the control data (one D1 batch, which reads the row too), so
   * a cold company's access check and its first document read the row once, not twice.
   */
  company(companyId: string): Promise<CompanyRow | null> {
    const control = this.stored<CompanyControl>("control");
    if (control) return Promise.resolve(control.company);
    return this.entry("company", false, async () => (await this.control(companyId))?.company ?? null);
  }

  /** The company's open document partition, or null when it has none yet (the caller opens one, then forgets `open`). */
  openPartition(companyId: string): Promise<DocumentPartition | null> {
    return this.entry("open", false, () => readOpenPartition(createDb(this.env.DB), companyId));
  }

  /** A CAF's file key and mode (the company's), or null when the company has no such CAF. */
  caf(companyId: string, cafId: string): Promise<CafEntry | null> {
    return this.entry(`caf:${cafId}`, false, async () => {
      const db = createDb(this.env.DB);
      const [row] = await db
        .select({ fileKey: cafs.fileKey, livemode: companies.livemode })
        .from(cafs)
        .innerJoin(companies, eq(companies.id, cafs.companyId))
        .where(and(eq(cafs.id, cafId), eq(cafs.companyId, companyId)))
        .limit(1);
      return row ?? null;
    });
  }

  /** The key's row and grants, or null for a key that does not exist. */
  key(keyHash: string): Promise<KeyEntry | null> {
    return this.entry("key", false, () => readKeyEntry(createDb(this.env.DB), keyHash));
  }

  /**
   * Records the key's use at `at` in D1, unless the held row shows a use within
   * LAST_USED_RESOLUTION_MS (another isolate wrote it): at most one write per key and resolution.
   */
  async touchKey(keyId: string, at: string): Promise<void> {
    const held = this.stored<KeyEntry>("key");
    const last = held?.row.lastUsedAt ? Date.parse(held.row.lastUsedAt) : 0;
    if (held && Date.parse(at) - last <= LAST_USED_RESOLUTION_MS) return;
    await createDb(this.env.DB).update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, keyId));
    const now = this.stored<KeyEntry>("key");
    // The held row learns the use; its age (the safety TTL) stays that of its fill.
    if (now && now.row.id === keyId) this.sql.exec("UPDATE entries SET value = ? WHERE part = 'key'", JSON.stringify({ ...now, row: { ...now.row, lastUsedAt: at } }));
  }

  /** How many entries the object holds (the health probe: reads, never writes). */
  describe(): { entries: number } {
    if (!this.tableReady) return { entries: 0 };
    return { entries: Number(this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM entries WHERE part <> 'hold'").one().n) };
  }

  /**
   * Drops every entry (or only `parts`); a fill running meanwhile does not keep its result. With
   * `holdMs` (called BEFORE a D1 write that withdraws something: src/storage/db/control-directory.ts
   * `holdInDirectory`), no fill is kept for that long either, so a read of the row as it was before
   * the write cannot be kept even when the forget after the write is lost.
   */
  forget(parts?: string[], holdMs = 0): void {
    this.generation++;
    this.pending.clear();
    if (holdMs > 0) this.hold(Date.now() + holdMs);
    if (!this.tableReady) return;
    if (!parts) this.sql.exec("DELETE FROM entries WHERE part <> 'hold'");
    else for (const part of parts) this.sql.exec("DELETE FROM entries WHERE part = ?", part);
  }

  private hold(until: number): void {
    this.holdUntil = Math.max(this.holdUntil, until);
    this.ensureTable();
    // The hold's end in `filled_at`: never served as an entry (no caller asks for part 'hold').
    this.sql.exec("INSERT OR REPLACE INTO entries (part, value, filled_at) VALUES ('hold', 'null', ?)", this.holdUntil);
  }

  /**
   * `part` from storage while it is younger than DIRECTORY_TTL_MS, else from `load` (shared by
   * concurrent callers of the same generation); kept when `keep` accepts it (never null) and no
   * forget ran during the load.
   */
  async entry<T>(part: string, fresh: boolean, load: () => Promise<T | null>, keep: (value: T) => boolean = () => true): Promise<T | null> {
    if (!fresh) {
      const held = this.stored<T>(part);
      if (held !== undefined) return held;
      const joining = this.pending.get(part);
      if (joining && joining.generation === this.generation) return joining.value as Promise<T | null>;
    }
    const generation = this.generation;
    const value = load();
    this.pending.set(part, { generation, value });
    try {
      const found = await value;
      if (found !== null && keep(found) && generation === this.generation && Date.now() >= this.holdUntil) this.store(part, found);
      return found;
    } finally {
      if (this.pending.get(part)?.value === value) this.pending.delete(part);
    }
  }

  private stored<T>(part: string): T | undefined {
    if (!this.tableReady) return undefined;
    const [row] = this.sql.exec<{ value: string; filled_at: number }>("SELECT value, filled_at FROM entries WHERE part = ?", part).toArray();
    if (!row || Date.now() - row.filled_at >= DIRECTORY_TTL_MS) return undefined;
    return JSON.parse(row.value) as T;
  }

  private ensureTable(): void {
    if (this.tableReady) return;
    this.sql.exec("CREATE TABLE IF NOT EXISTS entries (part TEXT PRIMARY KEY, value TEXT NOT NULL, filled_at INTEGER NOT NULL)");
    this.tableReady = true;
  }

  private store(part: string, value: unknown): void {
    this.ensureTable();
    const now = Date.now();
    this.sql.exec("INSERT OR REPLACE INTO entries (part, value, filled_at) VALUES (?, ?, ?)", part, JSON.stringify(value), now);
    // Entries past their TTL are never served; they go when the next one is kept (CAF rows of ranges used up; a hold long over).
    this.sql.exec("DELETE FROM entries WHERE filled_at <= ?", now - DIRECTORY_TTL_MS);
  }
}
