/**
 * Events recorded in a document store (issue 16): a writer puts the event into the store's
 * `event_outbox` in the same store batch as the change it describes; the store relays it to D1's
 * `event_outbox` (src/durable-objects/document-store/relay.ts), from where the fan-out delivers it.
 */
import type { Db } from "../client";
import { eventOutbox } from "../schema";
import { newId } from "../../lib/ids";

export interface StoreEvent {
  companyId: string;
  type: string;
  payload: unknown;
  /** The same condition is recorded once per company (unique in the store and in D1). */
  dedupeKey?: string | null;
  createdAt?: string;
}

/** The INSERT of one event into a store's outbox, to put in the batch of the change it describes. */
export function outboxInsert(db: Db, event: StoreEvent) {
  return db
    .insert(eventOutbox)
    .values({
      id: newId("evt"),
      companyId: event.companyId,
      type: event.type,
      dedupeKey: event.dedupeKey ?? null,
      payload: JSON.stringify(event.payload),
      createdAt: event.createdAt ?? new Date().toISOString(),
    })
    .onConflictDoNothing();
}

/** Asks one store to relay its unrelayed events now (its alarm does it anyway); returns how many. */
export async function relayNow(env: Pick<Env, "DOCUMENT_STORE">, storeName: string): Promise<number> {
  const stub = env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName));
  return stub.relayOutbox();
}
