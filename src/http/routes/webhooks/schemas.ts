import { z } from "@hono/zod-openapi";
import { WEBHOOK_DELIVERY_STATUSES } from "../../../storage/db/schema";
import { EVENT_TYPES } from "../../../webhooks/catalog";
import { instant } from "../../openapi/common";

const eventsDescription = `Event types to receive, families of them (\`invoice.*\`, \`received_document.*\`: every type whose name starts so), or ["*"] for all of them. A type its family already takes is dropped from the stored list. The catalogue (with each payload) is the \`webhooks\` section of this document: ${EVENT_TYPES.filter((t) => t !== "webhook.test").map((t) => `\`${t}\``).join(", ")}.`;

export const EndpointSchema = z
  .object({
    id: z.string().openapi({ example: "whk_8F3K2M9QX7T4B1N6C5D0H2J7W" }),
    company_id: z.string(),
    url: z.string().openapi({ example: "https://erp.example.com/hooks/dte" }),
    description: z.string().nullable(),
    events: z.array(z.string()).openapi({ example: ["invoice.accepted", "invoice.rejected", "ENU"] }),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({ description: "Why it is disabled: by the client, or after failing every delivery for 5 days." }),
    failing_since: z.string().nullable().openapi({ description: "Start of the current run of failed deliveries, if any." }),
    previous_secret_expires_at: z.string().nullable().openapi({ description: "After a rotation: until when the previous secret still signs beside the new one." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookEndpoint");

export const EndpointWithSecretSchema = EndpointSchema.extend({
  secret: z.string().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", description: "Shown only now. Verify deliveries with it (Standard Webhooks)." }),
}).openapi("WebhookEndpointWithSecret");

export const EndpointCreateSchema = z
  .object({
    url: z.string().min(1).max(2048).openapi({ example: "https://erp.example.com/hooks/dte", description: "https (in development also http://127.0.0.1 or localhost). No private or reserved hosts; redirects are not followed." }),
    events: z.array(z.string().max(64)).min(1).max(50).openapi({ example: ["*"], description: eventsDescription }),
    description: z.string().max(255).nullable().optional(),
    enabled: z.boolean().optional().openapi({ description: "Default true." }),
  })
  .openapi("WebhookEndpointCreate");

export const EndpointPatchSchema = z
  .object({
    url: z.string().min(1).max(2048).optional(),
    events: z.array(z.string().max(64)).min(1).max(50).optional().openapi({ description: eventsDescription }),
    description: z.string().max(255).nullable().optional(),
    enabled: z.boolean().optional().openapi({ description: "Re-enabling clears the failure run." }),
  })
  .openapi("WebhookEndpointPatch");

export const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    started_at: z.string(),
    duration_ms: z.number().int(),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().openapi({ description: "The first 1 KiB of the answer." }),
    error: z.string().nullable().openapi({ description: "Timeout, network error or redirect, when there was no 2xx." }),
  })
  .openapi("WebhookAttempt");

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ example: "dlv_3N6C5D0H2J7W8F3K2M9QX7T4B" }),
    endpoint_id: z.string(),
    event_id: z.string().openapi({ description: "Also the `webhook-id` header of every attempt." }),
    event_type: z.string(),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES).openapi({ description: "PENDING (waiting for its next attempt), SUCCEEDED (a 2xx) or FAILED (no attempt left, or the endpoint was disabled or deleted)." }),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookDelivery");

export const DeliveryDetailSchema = DeliverySchema.extend({ attempts_log: z.array(AttemptSchema) }).openapi("WebhookDeliveryDetail");

export const DeliveryQuerySchema = z.object({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional().openapi({ param: { name: "status", in: "query" } }),
  event_type: z.string().max(64).optional().openapi({ param: { name: "event_type", in: "query" } }),
  event_id: z.string().max(64).optional().openapi({ param: { name: "event_id", in: "query" } }),
  since: instant().optional().openapi({ param: { name: "since", in: "query" }, description: "Deliveries created at or after this instant (ISO 8601)." }),
});

export const RedeliverSchema = z
  .object({
    event_id: z.string().min(1).max(64).optional().openapi({ description: "Send this event again to the endpoint." }),
    failed_since: instant().optional().openapi({ description: "Or: send again every FAILED delivery of the endpoint created since this instant." }),
  })
  .refine((b) => (b.event_id === undefined) !== (b.failed_since === undefined), { message: "Send exactly one of event_id or failed_since", path: ["event_id"] })
  .openapi("WebhookRedeliver");
