/**
 * The webhook queue consumer: `fanout` messages turn new events into deliveries (a document store's,
 * when the message names the store; else the company's in D1's outbox),
 * `deliver` messages make one attempt each. Every step is idempotent (a delivery exists once per
 * endpoint and event; a settled delivery is skipped), so a duplicated message does nothing twice.
 */
import { createDb } from "../storage/db/client";
import { describeError, log } from "../lib/log";
import { notifyEvents, notifyStore, webhookMessage } from "./messages";
import { deliverBatch, type DeliveryTarget } from "./delivery";
import { fanOut, fanOutStore } from "./fanout";

export async function handleWebhookBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  const fanouts = new Map<string, { companyId: string; partition: number | undefined; msgs: Message<unknown>[] }>();
  const deliveries: { msg: Message<unknown>; target: DeliveryTarget }[] = [];
  for (const msg of batch.messages) {
    const parsed = webhookMessage.safeParse(msg.body);
    if (!parsed.success) {
      log("error", "malformed webhook message dropped", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 300) });
      msg.ack();
    } else if (parsed.data.type === "fanout") {
      const { company_id: companyId, partition } = parsed.data;
      const key = `${companyId}:${partition ?? "d1"}`;
      const outbox = fanouts.get(key) ?? { companyId, partition, msgs: [] };
      outbox.msgs.push(msg);
      fanouts.set(key, outbox);
    } else deliveries.push({ msg, target: { id: parsed.data.delivery_id, companyId: parsed.data.company_id, partition: parsed.data.partition } });
  }
  // One fan-out per outbox (D1's for a company: no partition named; a store's) and batch does the work of all its notices.
  await Promise.all([...fanouts.values()].map(({ companyId, partition, msgs }) => settleAll(msgs, "fanout", companyId, async () => {
    if (partition === undefined) {
      if ((await fanOut(db, env, companyId)).more) await notifyEvents(env, [companyId]);
    } else if ((await fanOutStore(db, env, companyId, partition)).more) await notifyStore(env, companyId, partition);
  })));
  if (deliveries.length > 0) await settleAll(deliveries.map((d) => d.msg), "deliver", undefined, () => deliverBatch(db, env, deliveries.map((d) => d.target)));
}

/** Acks the messages once `work` is done; retries them with backoff when it failed. */
async function settleAll(msgs: Message<unknown>[], type: string, companyId: string | undefined, work: () => Promise<unknown>) {
  try {
    await work();
    for (const m of msgs) m.ack();
  } catch (e) {
    const attempts = Math.max(...msgs.map((m) => m.attempts));
    log("warn", "webhook step failed; retrying", { company_id: companyId, type, attempts, error: describeError(e) });
    for (const m of msgs) m.retry({ delaySeconds: Math.min(300, 2 ** Math.min(attempts, 8)) });
  }
}

/** Webhook messages that exhausted the queue's retries: logged; the cron sweep re-drives their work. */
export function ackDeadWebhookMessages(batch: MessageBatch<unknown>): void {
  for (const msg of batch.messages) {
    log("error", "dead-lettered webhook message; the sweep re-drives it", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 300), attempts: msg.attempts });
    msg.ack();
  }
}
