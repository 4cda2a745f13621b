/**
 * Events recorded in a document store: a writer puts the event into the store's
 * `event_outbox` in the same store batch as the change it describes, and it stays there: the store's
 * alarm sends a fan-out notice (src/operations/objects/document-store/fanout-notice.ts) and the fan-out
 * (src/webhooks/fanout.ts `fanOutStore`) makes its deliveries in the same store.
 */
import type { Db } from "../client";
import { eventOutbox } from "../schema";
import { newId } from "../../../lib/ids";

export interface StoreEvent {
  companyId: string;
  type: string;
  payload: unknown;
  /** The same condition is recorded once per company and store (unique key). */
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

/** Asks one store to send its fan-out notice now (its alarm does it anyway); returns whether it had events waiting. */
export async function noticeFanoutNow(env: Pick<Env, "DOCUMENT_STORE">, storeName: string): Promise<boolean> {
  const stub = env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName));
  return stub.noticeFanout();
}
