/**
 * The webhook queue consumer: `fanout` messages turn a company's new events into deliveries,
 * `deliver` messages make one attempt each. Every step is idempotent (a delivery exists once per
 * endpoint and event; a settled delivery is skipped), so a duplicated message does nothing twice.
 */
import { createDb } from "../db/client";
import { describeError, log } from "../lib/log";
import { notifyEvents, webhookMessage } from "../queues/webhooks";
import { deliver } from "./delivery";
import { fanOut } from "./fanout";

export async function handleWebhookBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  const fanned = new Set<string>();
  await Promise.all(
    batch.messages.map(async (msg) => {
      const parsed = webhookMessage.safeParse(msg.body);
      if (!parsed.success) {
        log("error", "malformed webhook message dropped", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 300) });
        return msg.ack();
      }
      const m = parsed.data;
      try {
        if (m.type === "fanout") {
          if (fanned.has(m.company_id)) return msg.ack(); // one fan-out per company and batch does it all
          fanned.add(m.company_id);
          const r = await fanOut(db, env, m.company_id);
          if (r.more) await notifyEvents(env, [m.company_id]);
        } else {
          await deliver(db, env, m.delivery_id);
        }
        msg.ack();
      } catch (e) {
        log("warn", "webhook step failed; retrying", { company_id: m.company_id, type: m.type, attempts: msg.attempts, error: describeError(e) });
        msg.retry({ delaySeconds: Math.min(300, 2 ** Math.min(msg.attempts, 8)) });
      }
    }),
  );
}

/** Webhook messages that exhausted the queue's retries: logged; the cron sweep re-drives their work. */
export function ackDeadWebhookMessages(batch: MessageBatch<unknown>): void {
  for (const msg of batch.messages) {
    log("error", "dead-lettered webhook message; the sweep re-drives it", { id: msg.id, body: JSON.stringify(msg.body).slice(0, 300), attempts: msg.attempts });
    msg.ack();
  }
}
