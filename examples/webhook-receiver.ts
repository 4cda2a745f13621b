/**
 * A webhook receiver that trusts only what the service signed: each delivery is verified with the
 * Standard Webhooks library (`standardwebhooks`: signature over id, timestamp and body with the
 * endpoint's `whsec_…` secret, and a timestamp within five minutes), then deduplicated on its
 * `webhook-id` (delivery is at least once: a retry carries the same id) before it is acted on.
 * Answer 2xx quickly; do the work after.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=4010 npx tsx examples/webhook-receiver.ts
 *   # then register http://127.0.0.1:4010/dte as an endpoint (POST /api/companies/{id}/webhooks)
 */
import { createServer } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

export type Outcome =
  | { status: 200; event: { id: string; type: string; data: unknown }; duplicate: boolean }
  | { status: 401; error: string };

/**
 * Verifies one delivery and says whether it is new. `seen` holds the ids already acted on (a real
 * receiver keeps them in its database, beside the effect of acting on them).
 */
export function receive(secret: string, delivery: Delivery, seen: Set<string>): Outcome {
  let event: { id: string; type: string; data: unknown };
  try {
    event = new Webhook(secret).verify(delivery.body, delivery.headers) as typeof event;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return { status: 401, error: e.message };
    throw e;
  }
  const id = delivery.headers["webhook-id"]!;
  const duplicate = seen.has(id);
  seen.add(id);
  return { status: 200, event, duplicate };
}

if (typeof process !== "undefined" && process.argv[1]?.endsWith("webhook-receiver.ts")) {
  const secret = process.env.WEBHOOK_SECRET ?? (console.error("set WEBHOOK_SECRET"), process.exit(2));
  const seen = new Set<string>();
  createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const out = receive(secret, { headers, body }, seen);
      res.writeHead(out.status).end();
      if (out.status === 200 && !out.duplicate) console.log(`${out.event.type} ${JSON.stringify(out.event.data)}`);
      else if (out.status === 401) console.error(`refused: ${out.error}`);
    });
  }).listen(Number(process.env.PORT ?? 4010));
}
