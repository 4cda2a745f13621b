import { z } from "zod";
import { chunked } from "../lib/chunked";

/**
 * Messages of the webhook queue. `fanout`: turn undispatched events into deliveries, those of one
 * document store when `partition` names it (the store's own notice), else, with no `partition`, the
 * company's in D1's outbox (control-plane events);
 * `deliver`: make one attempt of one delivery. Bodies carry ids only; `v` is the schema version.
 * `partition` names the document store holding the delivery; without it, the partition the delivery
 * id names.
 */
export const fanoutMessage = z.object({ v: z.literal(1), type: z.literal("fanout"), company_id: z.string(), partition: z.number().int().min(0).optional() });
export const deliverMessage = z.object({ v: z.literal(1), type: z.literal("deliver"), delivery_id: z.string(), company_id: z.string(), partition: z.number().int().min(0).optional() });
export const webhookMessage = z.discriminatedUnion("type", [fanoutMessage, deliverMessage]);
export type WebhookMessage = z.infer<typeof webhookMessage>;

/** Asks the webhook consumer to fan out the new events of these companies (best effort: the cron re-drives). */
export async function notifyEvents(env: Env, companyIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(companyIds)];
  for (const chunk of chunked(ids, 100)) {
    await env.WEBHOOK_QUEUE.sendBatch(chunk.map((company_id) => ({ body: { v: 1, type: "fanout", company_id } satisfies WebhookMessage })));
  }
}

/** A document store's notice that it holds events not fanned out yet (its alarm sends it, and re-sends it while they wait). */
export async function notifyStore(env: Pick<Env, "WEBHOOK_QUEUE">, companyId: string, partition: number): Promise<void> {
  await env.WEBHOOK_QUEUE.send({ v: 1, type: "fanout", company_id: companyId, partition } satisfies WebhookMessage);
}

/** A delivery and the partition (document store) of its company that holds it. */
export interface DeliveryRef {
  id: string;
  companyId: string;
  partition: number;
  delaySeconds?: number;
}

/** Queues one attempt per delivery (in sends of at most 100 messages, the Queues limit per batch). */
export async function enqueueDeliveries(env: Env, deliveries: DeliveryRef[]): Promise<void> {
  for (const chunk of chunked(deliveries, 100)) {
    await env.WEBHOOK_QUEUE.sendBatch(
      chunk.map((d) => ({ body: { v: 1, type: "deliver", delivery_id: d.id, company_id: d.companyId, partition: d.partition } satisfies WebhookMessage, ...(d.delaySeconds ? { delaySeconds: d.delaySeconds } : {}) })),
    );
  }
}
