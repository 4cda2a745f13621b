/** Examples of the webhook operations (checked by test/api/examples.test.ts). */
import { EX, examplePage } from "../../openapi/example-ids";

export const endpointCreateExample = { url: "https://erp.losandes.cl/hooks/dte", events: ["invoice.*", "received_document.*"], description: "ERP: estados de documentos" };

export const endpointExample = {
  id: EX.webhook,
  company_id: EX.company,
  url: "https://erp.losandes.cl/hooks/dte",
  description: "ERP: estados de documentos",
  events: ["invoice.*", "received_document.*"],
  enabled: true,
  disabled_reason: null,
  failing_since: null,
  previous_secret_expires_at: null,
  created_at: "2026-11-27T13:35:00.000Z",
  updated_at: "2026-11-27T13:35:00.000Z",
};

export const endpointWithSecretExample = { ...endpointExample, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };

export const endpointRotatedExample = {
  ...endpointExample,
  previous_secret_expires_at: "2026-11-29T10:00:00.000Z",
  updated_at: "2026-11-28T10:00:00.000Z",
  secret: "whsec_U6j7Z+A9gy9mO7OcIadMuRQ1HoWipVaFR3c7Tm+zw/4=",
};

export const endpointPatchExample = { events: ["invoice.accepted", "invoice.rejected", "invoice.buyer_response"], enabled: true };

export const endpointPatchedExample = { ...endpointExample, events: ["invoice.accepted", "invoice.rejected", "invoice.buyer_response"], updated_at: "2026-11-28T10:05:00.000Z" };

export const endpointPageExample = examplePage([endpointExample]);

export const endpointDeletedExample = { id: EX.webhook, deleted: true };

export const deliveryExample = {
  id: EX.delivery,
  endpoint_id: EX.webhook,
  event_id: EX.event,
  event_type: "invoice.accepted",
  status: "SUCCEEDED",
  attempts: 1,
  next_attempt_at: null,
  last_response_status: 200,
  last_error: null,
  created_at: "2026-11-27T13:31:05.300Z",
  updated_at: "2026-11-27T13:31:05.520Z",
};

export const testDeliveryExample = {
  ...deliveryExample,
  event_id: "evt_01M8EK62KGQCCDZF00T3SKHJZJ",
  event_type: "webhook.test",
  status: "PENDING",
  attempts: 0,
  next_attempt_at: "2026-11-28T10:10:00.000Z",
  last_response_status: null,
  created_at: "2026-11-28T10:10:00.000Z",
  updated_at: "2026-11-28T10:10:00.000Z",
};

export const deliveryPageExample = examplePage([deliveryExample]);

export const deliveryDetailExample = {
  ...deliveryExample,
  attempts_log: [{ attempt: 1, started_at: "2026-11-27T13:31:05.400Z", duration_ms: 118, response_status: 200, response_body: "ok", error: null }],
};

export const redeliverExample = { event_id: EX.event };

export const redeliveredExample = {
  redelivered: 1,
  delivery: { ...deliveryExample, id: "dlv_p1_01M8EK63JR57DBSM6CGDDJYGH6", status: "PENDING", attempts: 0, next_attempt_at: "2026-11-28T10:20:00.000Z", last_response_status: null, created_at: "2026-11-28T10:20:00.000Z", updated_at: "2026-11-28T10:20:00.000Z" },
};
