/**
 * Where received documents and inbound messages live (issue 16): in the company's document stores,
 * one per partition. A document or message id names its partition (`rcv_p<n>_…`, `inm_p<n>_…`; ids
 * made before the move name the legacy partition 0); new ones go to the open partition. Inbound
 * messages that matched no company stay in D1 (they have no company store).
 */
import { and, eq, gte, inArray, isNull, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { createDb } from "../db/client";
import { documentPartitions, receivedDocuments, type DocumentPartition } from "../db/schema";
import { ordinalOfId, storeFor, storeForId } from "../db/document-store";
import { outboxInsert } from "../db/document-store/outbox";
import { chunked } from "../lib/chunked";
import { receivedView, type ReceivedRow } from "./view";

type StoreEnv = Parameters<typeof storeFor>[0];

/** The store an id of this company names, or null for an id that is not ours. */
export function storeOfId(env: StoreEnv, companyId: string, id: string): Db | null {
  return storeForId(env, companyId, id)?.db ?? null;
}

/** The received documents of `ids`, each read from the partition its id names (one query per partition and 90 ids). */
export async function receivedByIds(env: StoreEnv, companyId: string, ids: string[]): Promise<Map<string, ReceivedRow>> {
  const byPartition = new Map<number, string[]>();
  for (const id of new Set(ids)) {
    const ordinal = ordinalOfId(id);
    if (ordinal !== null) byPartition.set(ordinal, [...(byPartition.get(ordinal) ?? []), id]);
  }
  const found = await Promise.all([...byPartition].flatMap(([ordinal, group]) => chunked(group, 90).map((chunk) =>
    storeFor(env, companyId, ordinal).db.select().from(receivedDocuments).where(and(eq(receivedDocuments.companyId, companyId), inArray(receivedDocuments.id, chunk))),
  )));
  return new Map(found.flat().map((r) => [r.id, r]));
}

export interface ReceptionEvent {
  row: ReceivedRow;
  type: string;
  /** Unique per company: a retry of the same change records nothing more. */
  key: string;
}

/** The INSERT of a reception event into the store's outbox, for the batch of the change it reports (the store relays it to D1). */
export function receptionEvent(db: Db, e: ReceptionEvent) {
  return outboxInsert(db, { companyId: e.row.companyId, type: e.type, dedupeKey: e.key, payload: receivedView(e.row) });
}

/**
 * How long after its close a partition may still hold a PENDING document whose deadline has not been
 * reached: the 8-day window counts from the SII's reception time, which the register poll may learn
 * up to 30 days after the document arrived (its first look-back), plus a margin.
 */
export const RECEPTION_CLOSED_PARTITIONS_MS = 45 * 86_400_000;

/** The partitions the reception cron walks: every open one and those closed in the last 45 days. */
export async function receptionPartitions(env: Pick<Env, "DB">, now: Date): Promise<DocumentPartition[]> {
  const since = new Date(now.getTime() - RECEPTION_CLOSED_PARTITIONS_MS).toISOString();
  return createDb(env.DB).select().from(documentPartitions).where(or(isNull(documentPartitions.closedAt), gte(documentPartitions.closedAt, since)));
}
