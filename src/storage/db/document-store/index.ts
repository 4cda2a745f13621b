/**
 * Picking a company's document store: the open partition for writes, the partition an id
 * names for reads. Each store is a `Db` (the same Drizzle handle type as D1's), so the code that
 * touches documents reads as it does against D1; the store is picked once per operation.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { createDb, type Db } from "../client";
import * as schema from "../schema";
import { documentPartitions, type DocumentPartition } from "../schema";
import { randomUlid, type IdPrefix } from "../../../lib/ids";
import { StoreD1 } from "./client";
import { describeError, log } from "../../../lib/log";
import { companyEntry, directory, forgetInDirectory } from "../control-directory";

/** Default size at which a partition closes early: 40 % of a Durable Object's 10 GB (docs/capacity.md). */
export const DEFAULT_STORE_MAX_BYTES = 4_000_000_000;
/**
 * How long an isolate trusts its copy of a company's open partition. A partition closes
 * only at its month's end or by size: the month is checked on this isolate's clock at every use,
 * and every call on a store reports the store's size, so an isolate whose copy names a store another
 * one closed by size learns it from its next call there (the size hook rolls over, a no-op by then,
 * and takes the new partition as open). That call's write lands in the closed store, where its
 * documents stay readable by id and in lists; this bound only covers a close made some other way.
 */
export const OPEN_PARTITION_CACHE_MS = 600_000;

export interface StoreHandle {
  readonly db: Db;
  readonly companyId: string;
  readonly ordinal: number;
}

type StoreEnv = Pick<Env, "DB" | "DOCUMENT_STORE" | "CONTROL_DIRECTORY"> & { DOCUMENT_STORE_MAX_BYTES?: string };

export function storeName(companyId: string, ordinal: number): string {
  return `${companyId}:${ordinal}`;
}

/** `YYYY-MM` of a moment, in UTC: the period a partition opened at that moment covers. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

export function maxStoreBytes(env: StoreEnv): number {
  const n = Number(env.DOCUMENT_STORE_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_STORE_MAX_BYTES;
}

// ---------------------------------------------------------------------------------------------
// Ids that carry their partition: `<prefix>_p<ordinal>_<ULID>`.

const PARTITIONED_ID = /^[a-z]+_p(\d{1,6})_[0-9A-Z]{26}$/;

/** `ulid`: a fresh random one unless the caller derived it (an Idempotency-Key claim's document, src/lib/ids.ts seededUlid). */
export function partitionedId(prefix: IdPrefix, ordinal: number, ulid: string = randomUlid()): string {
  return `${prefix}_p${ordinal}_${ulid}`;
}

/** The partition ordinal an id names, or null when it is not an id of ours (the caller answers "not found"). */
export function ordinalOfId(id: string): number | null {
  const m = PARTITIONED_ID.exec(id);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------------------------------------
// Handles

const handles = new WeakMap<object, Map<string, Db>>();
const openCache = new Map<string, { partition: DocumentPartition; until: number }>();

/** The store of one partition (no directory read): reads by id, sweeps of a known partition. */
export function storeFor(env: StoreEnv, companyId: string, ordinal: number): StoreHandle {
  return { db: storeDb(env, companyId, ordinal), companyId, ordinal };
}

/** The store an id names, or null for a malformed id. */
export function storeForId(env: StoreEnv, companyId: string, id: string): StoreHandle | null {
  const ordinal = ordinalOfId(id);
  return ordinal === null ? null : storeFor(env, companyId, ordinal);
}

/** Per D1 binding and company, the partitions the directory has shown to exist (a partition, once made, is never removed). */
let knownPartitions = new WeakMap<object, Map<string, Set<number>>>();

/**
 * Whether the directory knows partition `ordinal` of the company; a read of an unknown partition
 * must not address its store (doing so would create an empty Durable Object). Known partitions are
 * cached per isolate for good; an unknown one is asked again next time (it may open meanwhile).
 */
export async function partitionKnown(env: StoreEnv, companyId: string, ordinal: number): Promise<boolean> {
  if (knownPartitions.get(env.DB)?.get(companyId)?.has(ordinal)) return true;
  const [row] = await createDb(env.DB).select({ ordinal: documentPartitions.ordinal }).from(documentPartitions).where(and(eq(documentPartitions.companyId, companyId), eq(documentPartitions.ordinal, ordinal))).limit(1);
  if (!row) return false;
  noteKnown(env, companyId, ordinal);
  return true;
}

/** Records in this isolate that partition `ordinal` of the company exists (for good: a partition is never removed). */
function noteKnown(env: StoreEnv, companyId: string, ordinal: number): void {
  let byCompany = knownPartitions.get(env.DB);
  if (!byCompany) knownPartitions.set(env.DB, (byCompany = new Map()));
  if (!byCompany.has(companyId) && byCompany.size >= 10_000) byCompany.delete(byCompany.keys().next().value!);
  byCompany.set(companyId, (byCompany.get(companyId) ?? new Set()).add(ordinal));
}

/** The store an id names, only when the directory knows its partition: null for a malformed id or an unknown partition (the caller answers "not found"). */
export async function knownStoreForId(env: StoreEnv, companyId: string, id: string): Promise<StoreHandle | null> {
  const ordinal = ordinalOfId(id);
  return ordinal !== null && (await partitionKnown(env, companyId, ordinal)) ? storeFor(env, companyId, ordinal) : null;
}

/** A partition the company's directory does not have: nothing can live there, and no store is made for it. */
export class UnknownPartitionError extends Error {
  constructor(readonly companyId: string, readonly ordinal: number) {
    super(`Company ${companyId} has no document partition ${ordinal}`);
    this.name = "UnknownPartitionError";
  }
}

/**
 * The company's partition `ordinal`, checked against the directory (cached in the isolate once
 * seen), so an ordinal from a message or an id that names a partition the company never had throws
 * `UnknownPartitionError` instead of creating an empty store.
 */
export async function partitionFor(env: StoreEnv, companyId: string, ordinal: number): Promise<StoreHandle> {
  if (!(await partitionKnown(env, companyId, ordinal))) throw new UnknownPartitionError(companyId, ordinal);
  return storeFor(env, companyId, ordinal);
}

/** `partitionFor` the partition an id names; null for a malformed id. */
export async function partitionOfId(env: StoreEnv, companyId: string, id: string): Promise<StoreHandle | null> {
  const ordinal = ordinalOfId(id);
  return ordinal === null ? null : partitionFor(env, companyId, ordinal);
}

/** The stores of every partition of a company, newest first (lists walk them in this order). */
export async function companyStores(env: StoreEnv, companyId: string): Promise<StoreHandle[]> {
  return (await partitionsOf(env, companyId)).map((p) => storeFor(env, companyId, p.ordinal));
}

/** Per D1 binding, the stores this isolate closed by size (a close is never undone). */
const closedBySize = new WeakMap<object, Set<string>>();

function storeDb(env: StoreEnv, companyId: string, ordinal: number): Db {
  const max = maxStoreBytes(env);
  const name = storeName(companyId, ordinal);
  return handle(env, name, (size) => (size >= max ? closeBySize(env, companyId, ordinal, size) : undefined), String(max));
}

/**
 * The size hook of a store past the threshold. Its documents keep being read and written there (in
 * flight, then read for years): it is closed once per isolate, not on every later call. It runs
 * after the store's call committed, so a failure to close (D1 unavailable) is logged, not thrown:
 * the caller's write is done (reporting it failed would make the pipeline redo a finished step),
 * and the next call tries the close again.
 */
async function closeBySize(env: StoreEnv, companyId: string, ordinal: number, size: number): Promise<void> {
  let closed = closedBySize.get(env.DB);
  if (!closed) closedBySize.set(env.DB, (closed = new Set()));
  const name = storeName(companyId, ordinal);
  if (closed.has(name)) return;
  try {
    await closePartition(env, companyId, ordinal, "SIZE", size);
    if (closed.size >= 10_000) closed.delete(closed.values().next().value!);
    closed.add(name);
  } catch (e) {
    log("warn", "closing a full document store failed; the next call tries again", { store: name, size, error: describeError(e) });
  }
}

/** The Drizzle handle of a store by name, made once per isolate (building one walks the schema). */
function handle(env: StoreEnv, name: string, onSize?: (size: number) => Promise<void> | undefined, variant = ""): Db {
  let byName = handles.get(env.DOCUMENT_STORE);
  if (!byName) handles.set(env.DOCUMENT_STORE, (byName = new Map()));
  const cacheKey = `${name}|${variant}`;
  let db = byName.get(cacheKey);
  if (!db) {
    const namespace = env.DOCUMENT_STORE;
    db = drizzle(new StoreD1(() => namespace.get(namespace.idFromName(name)), onSize).asD1(), { schema });
    if (byName.size >= 1000) byName.delete(byName.keys().next().value!);
    byName.set(cacheKey, db);
  }
  return db;
}

/**
 * The index store of an owner (`<ownerId>:index`, one per owner, never partitioned): records that
 * must be found or kept unique across all of the owner's partitions. Holds the Idempotency-Key
 * records of a client and mode (owner `<clientId>` or `<clientId>:live`).
 */
export function indexStore(env: StoreEnv, ownerId: string): Db {
  return handle(env, `${ownerId}:index`);
}

/** The company's open partition for writes at `now`: opened on first use, rolled over at a new month. */
export async function openStore(env: StoreEnv, companyId: string, now: Date = new Date()): Promise<StoreHandle> {
  const partition = await openPartition(env, companyId, now);
  return storeFor(env, companyId, partition.ordinal);
}

/**
 * The company's open partition at `now`. The isolate's copy is trusted OPEN_PARTITION_CACHE_MS
 * within its month; a miss asks the company's control directory object (src/storage/db/control-directory.ts),
 * which reads D1 (one statement) only when it does not hold the row; opening a company's first
 * partition or rolling over at a month's end is one more D1 batch (make it, read it back), after
 * which the object forgets the row it held.
 */
export async function openPartition(env: StoreEnv, companyId: string, now: Date = new Date()): Promise<DocumentPartition> {
  const period = periodOf(now);
  const cached = openCache.get(companyId);
  if (cached && cached.until > Date.now() && cached.partition.period >= period) return cached.partition;
  const db = createDb(env.DB);
  let open: DocumentPartition | undefined = (await directory(env, companyEntry(companyId)).openPartition(companyId)) ?? undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    // A clock a little behind another isolate's (a month just began there) keeps the newer partition.
    if (open && open.period >= period) return rememberOpen(env, open);
    [open] = open ? await rollOver(env, companyId, open.ordinal, "MONTH_END", null, now) : await openFirst(db, companyId, now);
  }
  throw new Error(`Could not open a document partition for ${companyId}`);
}

const openOf = (companyId: string) => and(eq(documentPartitions.companyId, companyId), isNull(documentPartitions.closedAt));

/** The company's open partition row in D1, or null (the control directory's fill). */
export async function readOpenPartition(db: Db, companyId: string): Promise<DocumentPartition | null> {
  const [open] = await db.select().from(documentPartitions).where(openOf(companyId));
  return open ?? null;
}

function rememberOpen(env: StoreEnv, open: DocumentPartition): DocumentPartition {
  openCache.set(open.companyId, { partition: open, until: Date.now() + OPEN_PARTITION_CACHE_MS });
  noteKnown(env, open.companyId, open.ordinal);
  return open;
}

/**
 * The first partition of a company and the open partition read back, in one D1 batch: ordinal 1, or
 * the one after the company's last, inserted only while the company has no open partition; a
 * concurrent opener makes the insert a no-op (primary key, one open per company).
 */
async function openFirst(db: Db, companyId: string, now: Date): Promise<DocumentPartition[]> {
  const p = documentPartitions;
  const next = sql`(select coalesce(max(${p.ordinal}), 0) + 1 from ${p} where ${p.companyId} = ${companyId})`;
  const row = sql`select ${companyId}, ${next}, ${companyId} || ':' || ${next}, ${periodOf(now)}, ${now.toISOString()}, null, null, 0 where not exists (select 1 from ${p} where ${openOf(companyId)})`;
  const [, open] = await db.batch([db.insert(p).select(row).onConflictDoNothing(), db.select().from(p).where(openOf(companyId))]);
  return open;
}

function partitionRow(companyId: string, ordinal: number, now: Date) {
  return { companyId, ordinal, storeName: storeName(companyId, ordinal), period: periodOf(now), openedAt: now.toISOString() };
}

/**
 * Closes a company's open partition `ordinal`, opens the next and reads the open one back, in one D1
 * batch: whoever rolls first wins, a concurrent roller's UPDATE matches nothing and its INSERT meets
 * the primary key. Then the company's directory object forgets the open row it held.
 */
async function rollOver(env: StoreEnv, companyId: string, ordinal: number, reason: DocumentPartition["closedReason"] & string, size: number | null, now: Date): Promise<DocumentPartition[]> {
  const mine = and(eq(documentPartitions.companyId, companyId), eq(documentPartitions.ordinal, ordinal), isNull(documentPartitions.closedAt));
  openCache.delete(companyId);
  const db = createDb(env.DB);
  const [, , open] = await db.batch([
    db.update(documentPartitions).set({ closedAt: now.toISOString(), closedReason: reason, ...(size === null ? {} : { sizeBytes: size }) }).where(mine),
    db.insert(documentPartitions).values(partitionRow(companyId, ordinal + 1, now)).onConflictDoNothing(),
    db.select().from(documentPartitions).where(openOf(companyId)),
  ]);
  await forgetInDirectory(env, [companyEntry(companyId)], ["open"]);
  return open;
}

/** Closes a company's open partition `ordinal` and opens the next (`rollOver`); this isolate takes the new one as open. */
export async function closePartition(env: StoreEnv, companyId: string, ordinal: number, reason: DocumentPartition["closedReason"] & string, size: number | null, now: Date = new Date()): Promise<void> {
  const [open] = await rollOver(env, companyId, ordinal, reason, size, now);
  if (open) rememberOpen(env, open);
}

/** Every partition of a company, newest first (lists walk them in this order). */
export async function partitionsOf(env: StoreEnv, companyId: string): Promise<DocumentPartition[]> {
  return createDb(env.DB).select().from(documentPartitions).where(eq(documentPartitions.companyId, companyId)).orderBy(desc(documentPartitions.ordinal));
}

/** Drops this isolate's copy of the partition directory (a new isolate's state: the capacity bench's cold document, tests). */
export function forgetDirectory(): void {
  openCache.clear();
  knownPartitions = new WeakMap();
}

/** Every open partition of every company (operations and tests). */
export async function openPartitions(env: StoreEnv): Promise<DocumentPartition[]> {
  return createDb(env.DB).select().from(documentPartitions).where(isNull(documentPartitions.closedAt));
}
