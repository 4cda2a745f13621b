import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import { DEAD_LETTER_QUEUES, DEAD_LETTER_STATUSES } from "../../../storage/db/schema";
import { listDeadLetters, redriveDeadLetter, type DeadLetterRow } from "../../../operations/dead-letters";
import { validationHook } from "../../errors/handler";
import { json, PageQuerySchema, pageEnvelope, pageParams, pageSchema } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { EX, examplePage } from "../../openapi/example-ids";

const deadLetterExample = {
  id: EX.deadLetter,
  queue: "issuance",
  message_id: "5c1e2a7b9f4d4c3e8a6b0d2f1e9c7a35",
  body: { v: 1, type: "envelope.poll", envelope_id: EX.envelope, company_id: EX.company },
  attempts: 10,
  status: "DEAD",
  created_at: "2026-11-27T18:00:00.000Z",
  redriven_at: null,
};

const TAG = ["Operations"];
const BASE = "/api/companies/{company_id}/dead-letters";
const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const LetterParams = Params.extend({ dead_letter_id: z.string().min(1).max(64).openapi({ param: { name: "dead_letter_id", in: "path" } }) });

const DeadLetterSchema = z
  .object({
    id: z.string(),
    queue: z.enum(DEAD_LETTER_QUEUES).describe(
      "`issuance`: document steps and status polls; `webhooks`: fan-outs and delivery attempts; `email_events`: the mail service's reports (Email Sending events: a bounce, a delivery) on a mail sent from the company's reception address that could not be read onto it in 10 tries (its store unavailable, or the mail still being sent, that long). Sent back, each is read again.",
    ),
    message_id: z.string(),
    body: z.record(z.string(), z.unknown()).describe("The message as queued: ids only, except an `email_events` letter, which is the mail service's event as it sent it (the mail's id, sender and recipient addresses, subject and outcome)."),
    attempts: z.number().int().describe("Deliveries of the message before it was dead-lettered."),
    status: z.enum(DEAD_LETTER_STATUSES),
    created_at: z.string(),
    redriven_at: z.string().nullable(),
  })
  .openapi("DeadLetter");

const Filters = z.object({
  queue: z.enum(DEAD_LETTER_QUEUES).optional().openapi({ param: { name: "queue", in: "query" } }),
  status: z.enum(DEAD_LETTER_STATUSES).optional().openapi({ param: { name: "status", in: "query" } }),
});

function view(row: DeadLetterRow) {
  return {
    id: row.id,
    queue: row.queue,
    message_id: row.messageId,
    body: JSON.parse(row.body) as Record<string, unknown>,
    attempts: row.attempts,
    status: row.status,
    created_at: row.createdAt,
    redriven_at: row.redrivenAt,
  };
}

const list = defineRoute({
  method: "get", path: BASE, tags: TAG, summary: "Dead-lettered queue messages of the company",
  description:
    "Messages of the issuance and webhook queues that exhausted their retries, newest first. The periodic sweep already re-drives stuck documents and overdue deliveries; this list shows what died and lets an OWNER or ADMIN send one back at once. Filters: queue, status.",
  permission: "company:configure", request: { params: Params, query: PageQuerySchema.extend(Filters.shape) },
  responses: { 200: { description: "A page of dead letters", ...json(pageSchema(DeadLetterSchema, "DeadLetterPage"), examplePage([deadLetterExample])) } },
});

const redrive = defineRoute({
  method: "post", path: `${BASE}/{dead_letter_id}/redrive`, tags: TAG, summary: "Send a dead letter back to its queue",
  description: "Queues the message again, once (a second call is 409). Every queue step is idempotent, so work already done is not repeated.",
  permission: "company:configure", request: { params: LetterParams },
  responses: { 202: { description: "Queued again", ...json(DeadLetterSchema, { ...deadLetterExample, status: "REDRIVEN", redriven_at: "2026-11-28T09:00:00.000Z" }) } }, errors: ["DEAD_LETTER_NOT_FOUND", "DEAD_LETTER_ALREADY_REDRIVEN", "DEAD_LETTER_QUEUE_UNAVAILABLE"],
});

export const operationsRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { rows, total } = await listDeadLetters(createDb(c.env.DB), c.get("company").id, q, page);
    return c.json(pageEnvelope(rows.map(view), total, page), 200);
  })
  .openapi(redrive, async (c) => {
    const row = await redriveDeadLetter(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").dead_letter_id);
    return c.json(view(row), 202);
  });
