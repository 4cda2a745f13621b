/**
 * Where received documents and inbound messages live: in the company's document stores, one per
 * partition. A document or message id names its partition (`rcv_p<n>_…`, `inm_p<n>_…`); new ones go
 * to the open partition. Inbound messages that matched no company stay in D1 (they have no company
 * store).
 */
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { eventOutbox, receivedDocuments } from "../storage/db/schema";
import { knownStoreForId, ordinalOfId, partitionFor, storeFor, UnknownPartitionError } from "../storage/db/document-store";
import { outboxInsert } from "../storage/db/document-store/outbox";
import { chunked } from "../lib/chunked";
import { newId } from "../lib/ids";
import { receivedView, type ReceivedRow } from "./view";

type StoreEnv = Parameters<typeof storeFor>[0];

/**
 * The database of the partition an id of this company names, or null for an id that is not ours or
 * whose partition does not exist (a read must not create an empty store).
 */
export async function partitionDb(env: StoreEnv, companyId: string, id: string): Promise<Db | null> {
  return (await knownStoreForId(env, companyId, id))?.db ?? null;
}

/** Runs `write` against partition `ordinal` of the company (`UnknownPartitionError` when it has none). */
export async function writeIn<T>(env: StoreEnv, companyId: string, ordinal: number, write: (db: Db) => Promise<T>): Promise<T> {
  return write((await partitionFor(env, companyId, ordinal)).db);
}

/** Items grouped by the partition their id names (malformed ids dropped). */
export function byPartition<T>(items: T[], idOf: (item: T) => string): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const item of items) {
    const ordinal = ordinalOfId(idOf(item));
    if (ordinal !== null) out.set(ordinal, [...(out.get(ordinal) ?? []), item]);
  }
  return out;
}

/** The received documents of `ids`, each read from the partition its id names (one query per partition and 90 ids). */
export async function receivedByIds(env: StoreEnv, companyId: string, ids: string[]): Promise<Map<string, ReceivedRow>> {
  const groups = [...byPartition([...new Set(ids)], (id) => id)];
  const found = await Promise.all(groups.map(async ([ordinal, group]) => {
    const partition = await partitionFor(env, companyId, ordinal).catch((e: unknown) => {
      if (e instanceof UnknownPartitionError) return null; // no such partition: none of these ids exists
      throw e;
    });
    if (!partition) return [];
    const db = partition.db;
    const rows = await Promise.all(chunked(group, 90).map((chunk) => db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), inArray(receivedDocuments.id, chunk)))));
    return rows.flat();
  }));
  return new Map(found.flat().map((r) => [r.id, r]));
}

export interface ReceptionEvent {
  row: ReceivedRow;
  type: string;
  /** Unique per company: a retry of the same change records nothing more. */
  key: string;
}

/** The INSERT of a reception event into the store's outbox, for the batch of the change it reports (the store fans it out from there). */
export function receptionEvent(db: Db, e: ReceptionEvent) {
  return outboxInsert(db, { companyId: e.row.companyId, type: e.type, dedupeKey: e.key, payload: receivedView(e.row) });
}

/**
 * receptionEvent, recorded only if the document meets `only` as the statements before it in the
 * batch left it: after a conditional UPDATE, the event of a change that did not apply (a concurrent
 * writer got there first) is not recorded.
 */
export function receptionEventIf(db: Db, e: ReceptionEvent, only: SQL) {
  const columns = {
    id: sql<string>`${newId("evt")}`.as("id"),
    companyId: receivedDocuments.companyId,
    type: sql<string>`${e.type}`.as("type"),
    dedupeKey: sql<string>`${e.key}`.as("dedupe_key"),
    payload: sql<string>`${JSON.stringify(receivedView(e.row))}`.as("payload"),
    createdAt: sql<string>`${new Date().toISOString()}`.as("created_at"),
    dispatchedAt: sql<string | null>`NULL`.as("dispatched_at"),
  };
  const document = and(eq(receivedDocuments.companyId, e.row.companyId), eq(receivedDocuments.id, e.row.id), only);
  return db.insert(eventOutbox).select(db.select(columns).from(receivedDocuments).where(document)).onConflictDoNothing();
}
