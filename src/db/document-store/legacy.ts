/**
 * The legacy partition (issue 16): rows made before the move (ids without `_p<n>_`, partition 0)
 * stay in D1 until the data migration (src/operations/store-migration.ts) has copied them into the
 * company's store partition 0 and recorded their group finished; from then on they are read and
 * written there. The tables of a group switch together (one D1 statement finishes them all), so a
 * batch over several of them never spans the two databases.
 *
 * No write is lost across the switch (migration 0015): every D1 write to a group's table marks its
 * row dirty, the migration copies dirty rows again and finishes the group only in a statement that
 * finds none left; after that D1 refuses writes to those tables (`LEGACY_MOVED`). D1 serialises
 * writes, so a write either lands before the finish (dirty: copied before the finish can happen) or
 * after it (refused). A writer that chose D1 just before the switch meets the refusal and runs again
 * against the store (`withLegacy`); a reader that chose D1 then reads D1's frozen, complete copy.
 */
import { and, inArray, isNotNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { createDb, type Db } from "../client";
import { invoices, receivedDocuments, storeMigration } from "../schema";
import { ordinalOfId, partitionKnown, partitionsOf, storeFor, type StoreHandle } from "./index";

/** The groups of tables that switch together, and their tables (each has migration 0015's triggers). */
export const LEGACY_GROUPS = {
  documents: ["invoices", "invoice_events", "cancellations", "envelopes"],
  // recv: received documents (migration 0016's triggers); a company's inbound messages of partition 0
  // are only read after the move, and read where this group says.
  reception: ["received_documents"],
} as const satisfies Record<string, readonly string[]>;
export type LegacyGroup = keyof typeof LEGACY_GROUPS;

/**
 * The groups the data migration may switch to the stores: a group joins once every writer of its
 * tables goes through this module (partition 0 via `withPartition`, new rows in the open store).
 * Switching a group whose writers still write D1 directly would make D1 refuse them. Issued
 * documents (the POST writes the open store, the pipeline the partition a document's id names,
 * partition 0 through here; the migration claims the copied documents' external_references) and
 * received documents (src/reception: new rows in the open store, partition 0 through here) are in.
 */
export const SWITCHABLE_GROUPS: readonly LegacyGroup[] = ["documents", "reception"];

type StoreEnv = Parameters<typeof storeFor>[0];

/** A partition's database, and whether it is still D1 (partition 0 before its group's switch). */
export interface PartitionHandle extends StoreHandle {
  readonly inD1: boolean;
}

/** Per D1 binding, the groups seen switched (a switch never goes back, so it is cached for good). */
let switched = new WeakMap<object, Set<LegacyGroup>>();
/**
 * Per D1 binding and group, until when "not switched" is trusted. Safe to cache briefly: a writer
 * that still picks D1 after the switch is refused and runs again against the store (`withPartition`),
 * and a reader reads D1's frozen copy, complete up to the switch.
 */
let notYet = new WeakMap<object, Map<LegacyGroup, number>>();
const NOT_SWITCHED_CACHE_MS = 2_000;

/**
 * Per group, the table every legacy row of the group hangs from (an event, a cancellation or an
 * envelope of partition 0 belongs to a legacy invoice): when D1 holds none of its rows, the group
 * has nothing in D1 and never will, because nothing adds a legacy row any more (documents and
 * received documents are created in the stores, with ids that name their partition; D1's rows of
 * partition 0 are only updated, or read, until the switch).
 */
const ROOT_TABLES = { documents: invoices, reception: receivedDocuments } as const;

/**
 * Per D1 binding and group, whether D1 holds any row of it, as first seen in this isolate; kept for
 * good both ways (an empty group stays empty; rows are never deleted from D1's partition 0).
 * `let`: `forgetLegacyState` starts afresh (tests that plant legacy rows, as a new isolate would).
 */
let rowsInD1 = new WeakMap<object, Map<LegacyGroup, boolean>>();

/** Drops what this isolate knows of the legacy partition (a new isolate's state: tests that plant legacy rows in D1). */
export function forgetLegacyState(): void {
  rowsInD1 = new WeakMap();
  switched = new WeakMap();
  notYet = new WeakMap();
}

function emptinessCheck(db: Db, group: LegacyGroup) {
  return db.select({ one: sql<number>`1` }).from(ROOT_TABLES[group]).limit(1);
}

function noteRows(env: StoreEnv, group: LegacyGroup, rows: unknown[]): boolean {
  const any = rows.length > 0;
  rowsInD1.set(env.DB, (rowsInD1.get(env.DB) ?? new Map()).set(group, any));
  return any;
}

/**
 * Whether D1 may still hold partition 0 of the group: false once the group switched, or when D1
 * holds no row of it at all (a deployment that began with the stores, or whose legacy data was
 * never there). One statement per isolate and group settles the second; both are kept for good.
 */
export async function legacyInD1(env: StoreEnv, group: LegacyGroup): Promise<boolean> {
  if (rowsInD1.get(env.DB)?.get(group) === false) return false;
  if (rowsInD1.get(env.DB)?.get(group) === undefined && !noteRows(env, group, await emptinessCheck(createDb(env.DB), group))) return false;
  return !(await legacyMoved(env, group));
}

/** Whether partition 0 of the group lives in the stores (every table of the group finished). */
export async function legacyMoved(env: StoreEnv, group: LegacyGroup): Promise<boolean> {
  const known = knownSwitch(env, group);
  if (known !== undefined) return known;
  const db = createDb(env.DB);
  return noteSwitch(env, group, await switchCheck(db, group));
}

/**
 * `read` of D1's partition 0, or null once the group has switched or when D1 holds none of the
 * group's rows (`legacyInD1`). What this isolate does not know yet goes to D1 in the same batch as
 * `read` (one round trip, one snapshot: the rows read are D1's as of the checks); once D1 was seen
 * empty, or the group switched, no statement is made at all.
 */
export async function readUnlessMoved<T>(env: StoreEnv, group: LegacyGroup, read: (db: Db) => BatchItem<"sqlite"> & PromiseLike<T[]>): Promise<T[] | null> {
  const rows = rowsInD1.get(env.DB)?.get(group);
  if (rows === false) return null;
  const known = knownSwitch(env, group);
  if (known === true) return null;
  const db = createDb(env.DB);
  if (known === false && rows) return await read(db);
  if (rows) {
    const [done, found] = await db.batch([switchCheck(db, group), read(db)]);
    return noteSwitch(env, group, done) ? null : (found as T[]);
  }
  const [any, done, found] = await db.batch([emptinessCheck(db, group), switchCheck(db, group), read(db)]);
  const moved = noteSwitch(env, group, done);
  return !noteRows(env, group, any) || moved ? null : (found as T[]);
}

/** What this isolate knows of the group's switch: true (for good), false (for a moment), or undefined. */
function knownSwitch(env: StoreEnv, group: LegacyGroup): boolean | undefined {
  if (switched.get(env.DB)?.has(group)) return true;
  if ((notYet.get(env.DB)?.get(group) ?? 0) > Date.now()) return false;
  return undefined;
}

function switchCheck(db: Db, group: LegacyGroup) {
  return db
    .select({ t: storeMigration.tableName })
    .from(storeMigration)
    .where(and(inArray(storeMigration.tableName, [...LEGACY_GROUPS[group]]), isNotNull(storeMigration.finishedAt)));
}

/** Records what the check found (every table of the group finished: switched); returns it. */
function noteSwitch(env: StoreEnv, group: LegacyGroup, done: unknown[]): boolean {
  const moved = done.length === LEGACY_GROUPS[group].length;
  if (moved) rememberSwitched(env, group);
  else notYet.set(env.DB, (notYet.get(env.DB) ?? new Map()).set(group, Date.now() + NOT_SWITCHED_CACHE_MS));
  return moved;
}

/** Records in this isolate that a group switched (the migration calls it when it finishes one). */
export function rememberSwitched(env: StoreEnv, group: LegacyGroup): void {
  const seen = switched.get(env.DB);
  if (!seen) switched.set(env.DB, new Set([group]));
  else seen.add(group);
}

/** The company's partition 0 of a group: D1 before the switch, its store afterwards. */
export async function legacyPartition(env: StoreEnv, companyId: string, group: LegacyGroup): Promise<PartitionHandle> {
  if (await legacyMoved(env, group)) return { ...storeFor(env, companyId, 0), inD1: false };
  return { db: createDb(env.DB), companyId, ordinal: 0, inD1: true };
}

/** The partition an id names (partition 0 through `legacyPartition`), or null for a malformed id. */
export async function partitionForId(env: StoreEnv, companyId: string, id: string, group: LegacyGroup): Promise<PartitionHandle | null> {
  const ordinal = ordinalOfId(id);
  if (ordinal === null) return null;
  return partitionFor(env, companyId, ordinal, group);
}

/** A partition the company's directory does not have: nothing can live there, and no store is made for it. */
export class UnknownPartitionError extends Error {
  constructor(readonly companyId: string, readonly ordinal: number) {
    super(`Company ${companyId} has no document partition ${ordinal}`);
    this.name = "UnknownPartitionError";
  }
}

/**
 * The company's partition `ordinal` (partition 0 through `legacyPartition`). A store partition is
 * checked against the directory (cached in the isolate once seen), so an ordinal from a message or
 * an id that names a partition the company never had throws `UnknownPartitionError` instead of
 * creating an empty store.
 */
export async function partitionFor(env: StoreEnv, companyId: string, ordinal: number, group: LegacyGroup): Promise<PartitionHandle> {
  if (ordinal === 0) return legacyPartition(env, companyId, group);
  if (!(await partitionKnown(env, companyId, ordinal))) throw new UnknownPartitionError(companyId, ordinal);
  return { ...storeFor(env, companyId, ordinal), inD1: false };
}

/**
 * `partitionForId` for reads: null also when the id's partition does not exist for the company (a
 * store partition the directory does not know; partition 0 after the switch when the company had
 * none), so a read never creates an empty store.
 */
export async function existingPartitionForId(env: StoreEnv, companyId: string, id: string, group: LegacyGroup): Promise<PartitionHandle | null> {
  const ordinal = ordinalOfId(id);
  if (ordinal === null) return null;
  if (ordinal > 0) return (await partitionKnown(env, companyId, ordinal)) ? { ...storeFor(env, companyId, ordinal), inD1: false } : null;
  const p = await legacyPartition(env, companyId, group);
  return p.inD1 || (await partitionKnown(env, companyId, 0)) ? p : null;
}

/**
 * Every partition of a company for a group, newest first: the directory's stores, then partition 0,
 * which is there before the switch while D1 holds any of the group's rows (D1; its queries filter by
 * company) and afterwards only when the migration recorded it for the company (it had rows).
 */
export async function partitionsWithLegacy(env: StoreEnv, companyId: string, group: LegacyGroup): Promise<PartitionHandle[]> {
  const [directory, inD1] = await Promise.all([partitionsOf(env, companyId), legacyInD1(env, group)]);
  const stores = directory.filter((p) => p.ordinal > 0).map((p) => ({ ...storeFor(env, companyId, p.ordinal), inD1: false }));
  if (inD1) return [...stores, { db: createDb(env.DB), companyId, ordinal: 0, inD1: true }];
  return directory.some((p) => p.ordinal === 0) ? [...stores, { ...storeFor(env, companyId, 0), inD1: false }] : stores;
}

/** D1 refused a write because the group switched to the stores in the meantime (migration 0015's triggers). */
export function isLegacyMoved(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof Error && e.message.includes("LEGACY_MOVED")) return true;
  }
  return false;
}

/**
 * Runs `fn` against the partition an id names. When it chose D1 and D1 refused its write because
 * the group switched meanwhile, it runs again against the store: the refused batch changed nothing
 * (a D1 batch is all or nothing), so `fn` must only be safe to repeat in its other effects.
 */
export async function withPartition<T>(env: StoreEnv, companyId: string, ordinal: number, group: LegacyGroup, fn: (p: PartitionHandle) => Promise<T>): Promise<T> {
  const first = await partitionFor(env, companyId, ordinal, group);
  try {
    return await fn(first);
  } catch (err) {
    if (!first.inD1 || !isLegacyMoved(err)) throw err;
    rememberSwitched(env, group);
    return fn({ ...storeFor(env, companyId, 0), inD1: false });
  }
}

/** `withPartition` for the partition an id names; null for a malformed id. */
export async function withPartitionOfId<T>(env: StoreEnv, companyId: string, id: string, group: LegacyGroup, fn: (p: PartitionHandle) => Promise<T>): Promise<T | null> {
  const ordinal = ordinalOfId(id);
  return ordinal === null ? null : withPartition(env, companyId, ordinal, group, fn);
}

