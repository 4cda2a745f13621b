/**
 * Picking a company's document store (issue 16): the open partition for writes, the partition an id
 * names for reads. Each store is a `Db` (the same Drizzle handle type as D1's), so the code that
 * touches documents reads as it does against D1; the store is picked once per operation.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { createDb, type Db } from "../client";
import * as schema from "../schema";
import { documentPartitions, type DocumentPartition } from "../schema";
import { randomUlid, type IdPrefix } from "../../lib/ids";
import { StoreD1 } from "./client";
import { describeError, log } from "../../lib/log";

/** Default size at which a partition closes early: 40 % of a Durable Object's 10 GB (docs/capacity.md). */
export const DEFAULT_STORE_MAX_BYTES = 4_000_000_000;
/** How long an isolate trusts its copy of a company's open partition (a roll-over by size drops it at once here). */
const OPEN_PARTITION_CACHE_MS = 5_000;

export interface StoreHandle {
  readonly db: Db;
  readonly companyId: string;
  readonly ordinal: number;
}

type StoreEnv = Pick<Env, "DB" | "DOCUMENT_STORE"> & { DOCUMENT_STORE_MAX_BYTES?: string };

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
// Ids that carry their partition: `<prefix>_p<ordinal>_<ULID>`; ids without the mark (made before
// the stores) belong to the legacy partition 0.

const PARTITIONED_ID = /^[a-z]+_p(\d{1,6})_[0-9A-Z]{26}$/;
const LEGACY_ID = /^[a-z]+_[0-9A-Z]{26}$/;

export function partitionedId(prefix: IdPrefix, ordinal: number): string {
  return `${prefix}_p${ordinal}_${randomUlid()}`;
}

/** The partition ordinal an id names, or null when it is not an id of ours (the caller answers "not found"). */
export function ordinalOfId(id: string): number | null {
  const m = PARTITIONED_ID.exec(id);
  if (m) return Number(m[1]);
  return LEGACY_ID.test(id) ? 0 : null;
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
  let byCompany = knownPartitions.get(env.DB);
  if (!byCompany) knownPartitions.set(env.DB, (byCompany = new Map()));
  if (byCompany.get(companyId)?.has(ordinal)) return true;
  const [row] = await createDb(env.DB).select({ ordinal: documentPartitions.ordinal }).from(documentPartitions).where(and(eq(documentPartitions.companyId, companyId), eq(documentPartitions.ordinal, ordinal))).limit(1);
  if (!row) return false;
  if (byCompany.size >= 10_000) byCompany.delete(byCompany.keys().next().value!);
  byCompany.set(companyId, (byCompany.get(companyId) ?? new Set()).add(ordinal));
  return true;
}

/** The store an id names, only when the directory knows its partition: null for a malformed id or an unknown partition (the caller answers "not found"). */
export async function knownStoreForId(env: StoreEnv, companyId: string, id: string): Promise<StoreHandle | null> {
  const ordinal = ordinalOfId(id);
  return ordinal !== null && (await partitionKnown(env, companyId, ordinal)) ? storeFor(env, companyId, ordinal) : null;
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

export async function openPartition(env: StoreEnv, companyId: string, now: Date = new Date()): Promise<DocumentPartition> {
  const period = periodOf(now);
  const cached = openCache.get(companyId);
  if (cached && cached.until > Date.now() && cached.partition.period >= period) return cached.partition;
  const db = createDb(env.DB);
  for (let attempt = 0; attempt < 5; attempt++) {
    const [open] = await db.select().from(documentPartitions).where(and(eq(documentPartitions.companyId, companyId), isNull(documentPartitions.closedAt)));
    // A clock a little behind another isolate's (a month just began there) keeps the newer partition.
    if (open && open.period >= period) {
      openCache.set(companyId, { partition: open, until: Date.now() + OPEN_PARTITION_CACHE_MS });
      return open;
    }
    if (open) await closePartition(env, companyId, open.ordinal, "MONTH_END", null, now);
    else await openFirst(db, companyId, now);
  }
  throw new Error(`Could not open a document partition for ${companyId}`);
}

/** The first partition of a company (ordinal 1; 0 is the legacy one); a concurrent opener makes it a no-op. */
async function openFirst(db: Db, companyId: string, now: Date): Promise<void> {
  const [last] = await db.select({ ordinal: documentPartitions.ordinal }).from(documentPartitions).where(eq(documentPartitions.companyId, companyId)).orderBy(desc(documentPartitions.ordinal)).limit(1);
  const ordinal = Math.max(1, (last?.ordinal ?? 0) + 1);
  await db.insert(documentPartitions).values(partitionRow(companyId, ordinal, now)).onConflictDoNothing();
}

function partitionRow(companyId: string, ordinal: number, now: Date) {
  return { companyId, ordinal, storeName: storeName(companyId, ordinal), period: periodOf(now), openedAt: now.toISOString() };
}

/**
 * Closes a company's open partition `ordinal` and opens the next, in one D1 batch: whoever rolls
 * first wins, a concurrent roller's UPDATE matches nothing and its INSERT meets the primary key.
 */
export async function closePartition(env: StoreEnv, companyId: string, ordinal: number, reason: DocumentPartition["closedReason"] & string, size: number | null, now: Date = new Date()): Promise<void> {
  const db = createDb(env.DB);
  const mine = and(eq(documentPartitions.companyId, companyId), eq(documentPartitions.ordinal, ordinal), isNull(documentPartitions.closedAt));
  await db.batch([
    db.update(documentPartitions).set({ closedAt: now.toISOString(), closedReason: reason, ...(size === null ? {} : { sizeBytes: size }) }).where(mine),
    db.insert(documentPartitions).values(partitionRow(companyId, ordinal + 1, now)).onConflictDoNothing(),
  ]);
  openCache.delete(companyId);
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
