/**
 * The data migration of issue 16: the rows of the D1 tables that moved into the document stores are
 * copied into each company's legacy partition (ordinal 0, recorded in the directory as closed,
 * LEGACY). Tables are walked in primary-key order in chunks; the cursor (table `store_migration`)
 * moves only after a chunk is in the stores, and every row is written with INSERT OR REPLACE by its
 * primary key, so a run stopped anywhere resumes where it stopped and a second run changes nothing.
 * Rows that belong to no company (inbound messages never matched to one, history rows whose document
 * is gone) stay in D1 and are counted as skipped.
 *
 * Tables of a legacy group (src/db/document-store/legacy.ts: the issued documents) are read and
 * written in D1 until their group is finished, so a row changed in D1 after its chunk was copied is
 * marked dirty (migration 0015's triggers) and copied again; the group's tables are finished together,
 * in one statement that finds no dirty row left, after which D1 refuses writes to them. The other
 * tables (webhook deliveries and attempts, received documents, inbound messages) are finished when
 * their walk ends: run it once their writes go to the stores. On a deployed Worker the cron runs a
 * step every 5 minutes while DOCUMENT_STORE_MIGRATION is "on"; `migrateToStores` is the whole of it.
 */
import { and, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { createDb } from "../db/client";
import { periodOf, storeFor, storeName } from "../db/document-store";
import { indexLegacyRows, type KeyedRow } from "../reception/keys";
import { claimLegacyReferences } from "../domain/invoices/references";
import { LEGACY_GROUPS, SWITCHABLE_GROUPS, rememberSwitched, type LegacyGroup } from "../db/document-store/legacy";
import { documentPartitions, storeMigration, storeMigrationDirty } from "../db/schema";
import { log } from "../lib/log";

interface MovedTable {
  readonly name: string;
  /** Its primary key (one text column): the walk's order and the cursor. */
  readonly key: string;
  /** SQL over the row `t` giving its company (null: the row belongs to none and stays). */
  readonly company: string;
  /** What else a company's copied rows need (received documents: their keys in the company's index store). */
  readonly afterCopy?: (env: Env, companyId: string, rows: Record<string, unknown>[]) => Promise<void>;
}

const OWN = "t.company_id";
const OF_INVOICE = (column: string) => `(SELECT i.company_id FROM invoices i WHERE i.id = t.${column})`;

/**
 * Every D1 table whose rows move to the document stores, in the order they are copied. Not
 * `event_outbox`: D1's events (control-plane, legacy) stay in D1 and are fanned out from there; the
 * stores' events are born in the stores and fanned out from them (src/webhooks/fanout.ts).
 */
export const MOVED_TABLES: readonly MovedTable[] = [
  { name: "invoices", key: "id", company: OWN, afterCopy: claimCopiedReferences },
  { name: "invoice_events", key: "id", company: OF_INVOICE("invoice_id") },
  { name: "cancellations", key: "cancelled_invoice_id", company: OF_INVOICE("cancelled_invoice_id") },
  { name: "envelopes", key: "id", company: OWN },
  { name: "webhook_deliveries", key: "id", company: OWN },
  { name: "webhook_attempts", key: "id", company: OWN },
  { name: "received_documents", key: "id", company: OWN, afterCopy: indexReceivedKeys },
  { name: "inbound_messages", key: "id", company: OWN },
];

/** Rows per D1 read and per store batch. */
const CHUNK = 100;

type Row = Record<string, unknown> & { __company: string | null };

export interface MigrationStep {
  /** Every table is copied. */
  done: boolean;
  /** Rows read from D1 in this step (copied or skipped). */
  rows: number;
}

const GUARDED: ReadonlySet<string> = new Set(Object.values(LEGACY_GROUPS).flat());

/**
 * Copies at most `budget` rows (whole chunks) and says whether everything is copied and the
 * switchable legacy groups finished (`groups`: SWITCHABLE_GROUPS; tests name others).
 */
export async function migrateToStores(env: Env, budget = 5_000, groups: readonly LegacyGroup[] = SWITCHABLE_GROUPS): Promise<MigrationStep> {
  let rows = 0;
  for (const table of MOVED_TABLES) {
    const [progress] = await createDb(env.DB).select().from(storeMigration).where(eq(storeMigration.tableName, table.name));
    if (progress?.finishedAt || progress?.copiedAt) continue;
    // The row first: from then on D1 marks the table's written rows dirty (migration 0015), so a row
    // written after its chunk is copied is copied again.
    if (!progress) await createDb(env.DB).insert(storeMigration).values({ tableName: table.name }).onConflictDoNothing();
    let cursor = progress?.cursor ?? "";
    while (rows < budget) {
      const limit = Math.min(CHUNK, budget - rows);
      const chunk = (await env.DB.prepare(`SELECT ${table.company} AS __company, t.* FROM ${table.name} t WHERE t.${table.key} > ? ORDER BY t.${table.key} LIMIT ?`).bind(cursor, limit).all<Row>()).results;
      const skipped = await copyChunk(env, table, chunk);
      if (chunk.length > 0) cursor = String(chunk.at(-1)![table.key]);
      const finished = chunk.length < limit;
      await recordProgress(env, table.name, cursor, chunk.length - skipped, skipped, finished);
      rows += chunk.length;
      if (finished) break;
    }
    if (rows >= budget) return { done: false, rows };
  }
  for (const group of groups) {
    const step = await settleGroup(env, group, budget - rows);
    rows += step.rows;
    if (!step.finished) return { done: false, rows };
  }
  return { done: true, rows };
}

/**
 * Copies a group's dirty rows again (at most `budget`), then tries to finish the group: one D1
 * statement that records every table finished only if every one is copied and no row is dirty.
 */
async function settleGroup(env: Env, group: LegacyGroup, budget: number): Promise<{ finished: boolean; rows: number }> {
  const db = createDb(env.DB);
  const tables: string[] = [...LEGACY_GROUPS[group]];
  let rows = 0;
  while (rows < budget) {
    const dirty = await db.select().from(storeMigrationDirty).where(inArray(storeMigrationDirty.tableName, tables)).orderBy(storeMigrationDirty.seq).limit(Math.min(CHUNK - 10, budget - rows));
    if (dirty.length === 0) break;
    for (const table of MOVED_TABLES.filter((t) => tables.includes(t.name))) await recopy(env, table, dirty.filter((d) => d.tableName === table.name));
    // Only the marks read: a row written again meanwhile has a new seq and stays dirty.
    await db.delete(storeMigrationDirty).where(inArray(storeMigrationDirty.seq, dirty.map((d) => d.seq)));
    rows += dirty.length;
  }
  if (rows >= budget) return { finished: false, rows };
  const now = new Date().toISOString();
  const finished = await db
    .update(storeMigration)
    .set({ finishedAt: now })
    .where(
      and(
        inArray(storeMigration.tableName, tables),
        isNull(storeMigration.finishedAt),
        sql`(SELECT count(*) FROM store_migration WHERE table_name IN ${tables} AND copied_at IS NOT NULL) = ${tables.length}`,
        sql`NOT EXISTS (SELECT 1 FROM store_migration_dirty WHERE table_name IN ${tables})`,
      ),
    )
    .returning({ t: storeMigration.tableName });
  if (finished.length > 0) log("info", "store migration: legacy group switched to the stores", { group, tables: finished.map((f) => f.t) });
  const done = await db.select({ t: storeMigration.tableName }).from(storeMigration).where(and(inArray(storeMigration.tableName, tables), isNotNull(storeMigration.finishedAt)));
  if (done.length === tables.length) rememberSwitched(env, group);
  return { finished: done.length === tables.length, rows };
}

/** The current D1 rows of dirty marks, into their company's store 0; a row gone from D1 is deleted there too. */
async function recopy(env: Env, table: MovedTable, marks: (typeof storeMigrationDirty.$inferSelect)[]): Promise<void> {
  if (marks.length === 0) return;
  const keys = marks.map((m) => m.rowKey);
  const found = (await env.DB.prepare(`SELECT ${table.company} AS __company, t.* FROM ${table.name} t WHERE t.${table.key} IN (${keys.map(() => "?").join(", ")})`).bind(...keys).all<Row>()).results;
  await copyChunk(env, table, found);
  const present = new Set(found.map((r) => String(r[table.key])));
  for (const m of marks.filter((m) => !present.has(m.rowKey) && m.companyId)) {
    await storeFor(env, m.companyId!, 0).db.$client.prepare(`DELETE FROM ${table.name} WHERE ${table.key} = ?`).bind(m.rowKey).run();
  }
}

/** One chunk into the stores, one atomic batch per company; returns the rows that stay (no company). */
async function copyChunk(env: Env, table: MovedTable, chunk: Row[]): Promise<number> {
  const byCompany = new Map<string, Record<string, unknown>[]>();
  let skipped = 0;
  for (const { __company, ...row } of chunk) {
    if (!__company) skipped++;
    else byCompany.set(__company, [...(byCompany.get(__company) ?? []), row]);
  }
  for (const [companyId, rows] of byCompany) {
    await recordLegacyPartition(env, companyId);
    const client = storeFor(env, companyId, 0).db.$client;
    const columns = Object.keys(rows[0]!);
    const insert = `INSERT OR REPLACE INTO ${table.name} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
    // A row copied again is deleted first: REPLACE's own delete fires no trigger, and the store's list
    // counters (src/db/document-store/counters.ts) count by trigger.
    const remove = `DELETE FROM ${table.name} WHERE ${table.key} = ?`;
    await client.batch(rows.flatMap((r) => [client.prepare(remove).bind(r[table.key]), client.prepare(insert).bind(...columns.map((c) => r[c]))]));
    await table.afterCopy?.(env, companyId, rows);
  }
  return skipped;
}

/** The external_references of copied documents, claimed in the company's index store (src/domain/invoices/references.ts). */
async function claimCopiedReferences(env: Env, companyId: string, rows: Record<string, unknown>[]): Promise<void> {
  await claimLegacyReferences(env, companyId, rows.map((r) => ({ id: String(r.id), externalReference: (r.external_reference as string | null) ?? null, status: String(r.status) })));
}

/**
 * The keys of copied received documents in the company's index store (src/reception/keys.ts), in
 * arrival order; a key already there (claimed by an intake since the move) keeps its holder.
 */
async function indexReceivedKeys(env: Env, companyId: string, rows: Record<string, unknown>[]): Promise<void> {
  await indexLegacyRows(env, companyId, rows as unknown as KeyedRow[]);
}

/** The directory row of the company's legacy partition (closed from the start: nothing new goes there). */
async function recordLegacyPartition(env: Env, companyId: string): Promise<void> {
  const now = new Date();
  await createDb(env.DB)
    .insert(documentPartitions)
    .values({ companyId, ordinal: 0, storeName: storeName(companyId, 0), period: periodOf(now), openedAt: now.toISOString(), closedAt: now.toISOString(), closedReason: "LEGACY" })
    .onConflictDoNothing();
}

/** Moves the cursor; at the end of the walk the table is copied, and finished unless it belongs to a legacy group (see settleGroup). */
async function recordProgress(env: Env, tableName: string, cursor: string, copied: number, skipped: number, finished: boolean): Promise<void> {
  const db = createDb(env.DB);
  const copiedAt = finished ? new Date().toISOString() : null;
  const finishedAt = GUARDED.has(tableName) ? null : copiedAt;
  const [row] = await db.select().from(storeMigration).where(eq(storeMigration.tableName, tableName));
  if (!row) await db.insert(storeMigration).values({ tableName, cursor, copied, skipped, copiedAt, finishedAt });
  else await db.update(storeMigration).set({ cursor, copied: row.copied + copied, skipped: row.skipped + skipped, copiedAt, finishedAt }).where(eq(storeMigration.tableName, tableName));
  if (finished) log("info", "store migration: table copied", { table: tableName, copied: (row?.copied ?? 0) + copied, skipped: (row?.skipped ?? 0) + skipped });
}
