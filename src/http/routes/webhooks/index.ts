import { OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../../storage/db/client";
import { createdId } from "../../../lib/ids";
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint, type EndpointRow } from "../../../webhooks/endpoints";
import { getDelivery, listDeliveries, redeliverEvent, redeliverFailed, sendTestEvent, type AttemptRow, type DeliveryRow } from "../../../webhooks/deliveries";
import { validationHook } from "../../errors/handler";
import { idempotency } from "../../middleware/idempotency";
import { json, PageQuerySchema, pageEnvelope, pageParams, pageSchema, singlePage } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import {
  DeliveryDetailSchema, DeliveryQuerySchema, DeliverySchema, EndpointCreateSchema, EndpointPatchSchema, EndpointSchema, EndpointWithSecretSchema, RedeliverSchema,
} from "./schemas";
import {
  deliveryDetailExample, deliveryPageExample, endpointCreateExample, endpointDeletedExample, endpointExample, endpointPageExample, endpointPatchedExample,
  endpointPatchExample, endpointRotatedExample, endpointWithSecretExample, redeliveredExample, redeliverExample, testDeliveryExample,
} from "./examples";

const TAG = ["Webhooks"];
const Params = z.object({ company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }) });
const EndpointParams = Params.extend({ webhook_id: z.string().min(1).max(64).openapi({ param: { name: "webhook_id", in: "path" } }) });
const DeliveryParams = Params.extend({ delivery_id: z.string().min(1).max(64).openapi({ param: { name: "delivery_id", in: "path" } }) });
const BASE = "/api/companies/{company_id}/webhooks";

function endpointView(row: EndpointRow, now = Date.now()) {
  return {
    id: row.id,
    company_id: row.companyId,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    failing_since: row.failingSince,
    previous_secret_expires_at: row.previousUntil && Date.parse(row.previousUntil) > now ? row.previousUntil : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function deliveryView(d: DeliveryRow) {
  return {
    id: d.id, endpoint_id: d.endpointId, event_id: d.eventId, event_type: d.eventType, status: d.status, attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt, last_response_status: d.lastResponseStatus, last_error: d.lastError, created_at: d.createdAt, updated_at: d.updatedAt,
  };
}

const attemptView = (a: AttemptRow) => ({ attempt: a.attempt, started_at: a.startedAt, duration_ms: a.durationMs, response_status: a.responseStatus, response_body: a.responseBody, error: a.error });

const create = defineRoute({
  method: "post", path: BASE, tags: TAG, summary: "Register a webhook endpoint",
  description: "Deliveries are JSON POSTs signed as the Standard Webhooks specification says; the secret (`whsec_…`) is in this answer only. A company may have up to 20 endpoints, each with its own event filter.",
  permission: "company:configure", middleware: [idempotency],
  request: { params: Params, body: { required: true, ...json(EndpointCreateSchema, endpointCreateExample) } },
  responses: { 201: { description: "Registered", ...json(EndpointWithSecretSchema, endpointWithSecretExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "WEBHOOK_URL_INVALID", "WEBHOOK_EVENT_UNKNOWN", "WEBHOOK_LIMIT_REACHED", "IDEMPOTENCY_KEY_REUSED", "IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_INVALID"],
});

const list = defineRoute({
  method: "get", path: BASE, tags: TAG, summary: "List webhook endpoints", description: "Oldest first; a company has at most 20, so one page holds them all.",
  permission: "company:read", request: { params: Params },
  responses: { 200: { description: "The endpoints (without secrets)", ...json(pageSchema(EndpointSchema, "WebhookEndpointPage"), endpointPageExample) } },
});

const get = defineRoute({
  method: "get", path: `${BASE}/{webhook_id}`, tags: TAG, summary: "Get a webhook endpoint",
  permission: "company:read", request: { params: EndpointParams },
  responses: { 200: { description: "The endpoint", ...json(EndpointSchema, endpointExample) } }, errors: ["WEBHOOK_NOT_FOUND"],
});

const patch = defineRoute({
  method: "patch", path: `${BASE}/{webhook_id}`, tags: TAG, summary: "Change a webhook endpoint", description: "Partial update of url, events, description and enabled.",
  permission: "company:configure", request: { params: EndpointParams, body: { required: true, ...json(EndpointPatchSchema, endpointPatchExample) } },
  responses: { 200: { description: "Changed", ...json(EndpointSchema, endpointPatchedExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "WEBHOOK_NOT_FOUND", "WEBHOOK_URL_INVALID", "WEBHOOK_EVENT_UNKNOWN"],
});

const remove = defineRoute({
  method: "delete", path: `${BASE}/{webhook_id}`, tags: TAG, summary: "Delete a webhook endpoint", description: "It stops receiving at once; its delivery log stays readable.",
  permission: "company:configure", request: { params: EndpointParams },
  responses: { 200: { description: "Deleted", ...json(z.object({ id: z.string(), deleted: z.literal(true) }).openapi("WebhookEndpointDeleted"), endpointDeletedExample) } },
  errors: ["WEBHOOK_NOT_FOUND"],
});

const rotate = defineRoute({
  method: "post", path: `${BASE}/{webhook_id}/rotate-secret`, tags: TAG, summary: "Rotate the signing secret",
  description: "A new secret, shown once. For 24 hours deliveries carry two signatures (new and previous secret), so receivers can switch without losing events.",
  permission: "company:configure", request: { params: EndpointParams },
  responses: { 200: { description: "The new secret", ...json(EndpointWithSecretSchema, endpointRotatedExample) } }, errors: ["WEBHOOK_NOT_FOUND"],
});

const test = defineRoute({
  method: "post", path: `${BASE}/{webhook_id}/test`, tags: TAG, summary: "Send a test event",
  description: "A `webhook.test` event to this endpoint only, delivered through the queue like any other; follow it in the delivery log.",
  permission: "company:configure", request: { params: EndpointParams },
  responses: { 202: { description: "Queued", ...json(DeliverySchema, testDeliveryExample) } }, errors: ["WEBHOOK_NOT_FOUND"],
});

const endpointDeliveries = defineRoute({
  method: "get", path: `${BASE}/{webhook_id}/deliveries`, tags: TAG, summary: "Delivery log of an endpoint", description: "Newest first. Filters: status, event_type, event_id, since. Deliveries and their attempts are kept 30 days after creation (settled ones; one still being tried stays until it ends).",
  permission: "company:read", request: { params: EndpointParams, query: PageQuerySchema.extend(DeliveryQuerySchema.shape) },
  responses: { 200: { description: "A page of deliveries", ...json(pageSchema(DeliverySchema, "WebhookDeliveryPage"), deliveryPageExample) } }, errors: ["VALIDATION_FAILED", "WEBHOOK_NOT_FOUND"],
});

const redeliver = defineRoute({
  method: "post", path: `${BASE}/{webhook_id}/redeliver`, tags: TAG, summary: "Redeliver events",
  description: "`{event_id}` sends one event again to this endpoint (also one it never got); `{failed_since}` sends again every FAILED delivery created since then. Each restarts the retry schedule. Events, deliveries and their attempts are kept 30 days: an older event answers 410 `WEBHOOK_EVENT_EXPIRED`, and `failed_since` reaches back 30 days at most.",
  permission: "company:configure", request: { params: EndpointParams, body: { required: true, ...json(RedeliverSchema, redeliverExample) } },
  responses: { 202: { description: "Queued", ...json(z.object({ redelivered: z.number().int(), delivery: DeliverySchema.nullable() }).openapi("WebhookRedelivered"), redeliveredExample) } },
  errors: ["VALIDATION_FAILED", "MALFORMED_JSON", "UNSUPPORTED_MEDIA_TYPE", "WEBHOOK_NOT_FOUND", "WEBHOOK_DELIVERY_NOT_FOUND", "WEBHOOK_EVENT_EXPIRED"],
});

const companyDeliveries = defineRoute({
  method: "get", path: "/api/companies/{company_id}/webhook-deliveries", tags: TAG, summary: "Delivery log of the company",
  description: "Every endpoint's deliveries, newest first; `event_id` shows where one event went. Deliveries and their attempts are kept 30 days after creation (settled ones; one still being tried stays until it ends).", permission: "company:read",
  request: { params: Params, query: PageQuerySchema.extend(DeliveryQuerySchema.shape).extend({ endpoint_id: z.string().max(64).optional().openapi({ param: { name: "endpoint_id", in: "query" } }) }) },
  responses: { 200: { description: "A page of deliveries", ...json(pageSchema(DeliverySchema, "WebhookDeliveryPage"), deliveryPageExample) } }, errors: ["VALIDATION_FAILED"],
});

const deliveryDetail = defineRoute({
  method: "get", path: "/api/companies/{company_id}/webhook-deliveries/{delivery_id}", tags: TAG, summary: "One delivery with every attempt",
  description: "Each attempt: time, duration, response status, the first 1 KiB of the response body, or the error.", permission: "company:read",
  request: { params: DeliveryParams }, responses: { 200: { description: "The delivery", ...json(DeliveryDetailSchema, deliveryDetailExample) } }, errors: ["WEBHOOK_DELIVERY_NOT_FOUND"],
});

export const webhooksRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(create, async (c) => {
    const id = await createdId("whk", c.env.API_KEY_PEPPER, c.get("idempotency"));
    const { row, secret } = await createEndpoint(createDb(c.env.DB), c.env, c.get("company"), c.req.valid("json"), id);
    return c.json({ ...endpointView(row), secret }, 201);
  })
  .openapi(list, async (c) => c.json(singlePage((await listEndpoints(createDb(c.env.DB), c.get("company").id)).map((r) => endpointView(r))), 200))
  .openapi(get, async (c) => c.json(endpointView(await getEndpoint(createDb(c.env.DB), c.get("company").id, c.req.valid("param").webhook_id)), 200))
  .openapi(patch, async (c) => c.json(endpointView(await updateEndpoint(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").webhook_id, c.req.valid("json"))), 200))
  .openapi(remove, async (c) => {
    const id = c.req.valid("param").webhook_id;
    await deleteEndpoint(createDb(c.env.DB), c.get("company").id, id);
    return c.json({ id, deleted: true as const }, 200);
  })
  .openapi(rotate, async (c) => {
    const { row, secret } = await rotateSecret(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").webhook_id);
    return c.json({ ...endpointView(row), secret }, 200);
  })
  .openapi(test, async (c) => c.json(deliveryView(await sendTestEvent(createDb(c.env.DB), c.env, c.get("company").id, c.req.valid("param").webhook_id)), 202))
  .openapi(endpointDeliveries, async (c) => {
    const db = createDb(c.env.DB);
    const companyId = c.get("company").id;
    const endpointId = c.req.valid("param").webhook_id;
    await getEndpoint(db, companyId, endpointId);
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { rows, total } = await listDeliveries(c.env, companyId, { ...q, endpoint_id: endpointId }, page);
    return c.json(pageEnvelope(rows.map(deliveryView), total, page), 200);
  })
  .openapi(redeliver, async (c) => {
    const db = createDb(c.env.DB);
    const companyId = c.get("company").id;
    const endpointId = c.req.valid("param").webhook_id;
    const body = c.req.valid("json");
    if (body.event_id) return c.json({ redelivered: 1, delivery: deliveryView(await redeliverEvent(db, c.env, companyId, endpointId, body.event_id)) }, 202);
    return c.json({ redelivered: await redeliverFailed(db, c.env, companyId, endpointId, new Date(body.failed_since!).toISOString()), delivery: null }, 202);
  })
  .openapi(companyDeliveries, async (c) => {
    const q = c.req.valid("query");
    const page = pageParams(q);
    const { rows, total } = await listDeliveries(c.env, c.get("company").id, q, page);
    return c.json(pageEnvelope(rows.map(deliveryView), total, page), 200);
  })
  .openapi(deliveryDetail, async (c) => {
    const { delivery, attempts } = await getDelivery(c.env, c.get("company").id, c.req.valid("param").delivery_id);
    return c.json({ ...deliveryView(delivery), attempts_log: attempts.map(attemptView) }, 200);
  });
