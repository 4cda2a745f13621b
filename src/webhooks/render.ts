/**
 * The body of a delivery: `{id, type, created_at, company_id, api_version, data}` from an event_outbox
 * row. `invoice.*` rows hold a snapshot of the document's columns taken in the same batch as the move
 * (so `data` shows the document as it was then); other rows hold their `data` (older rows may also
 * carry `event` and `company_id` keys, which the envelope already says).
 */
import { eventOutbox } from "../storage/db/schema";
import { invoiceSummary } from "../invoices/view";
import type { InvoiceRow } from "../invoices/state";
import { API_VERSION, EVENT_CATALOG, isEventType } from "./catalog";

type EventRow = typeof eventOutbox.$inferSelect;

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function invoiceData(payload: { invoice: Record<string, unknown>; cancelled_by: string | null }) {
  const row = Object.fromEntries(Object.entries(payload.invoice).map(([k, v]) => [camel(k), v])) as unknown as InvoiceRow;
  return invoiceSummary(row, payload.cancelled_by ?? null);
}

export function eventData(type: string, payloadJson: string): Record<string, unknown> {
  const payload = JSON.parse(payloadJson) as Record<string, unknown>;
  if (type.startsWith("invoice.") && "invoice" in payload) return invoiceData(payload as Parameters<typeof invoiceData>[0]);
  const { event: _event, company_id: _company, ...data } = payload;
  return data;
}

export type RenderedEvent = { id: string; type: string; created_at: string; company_id: string; livemode: boolean; api_version: typeof API_VERSION; data: Record<string, unknown> };

/**
 * The delivery body, checked against the catalogue (the same zod schema the OpenAPI `webhooks`
 * section publishes): an event of an unknown type, or whose `data` does not match its schema, is
 * never sent; the caller records why (a writer's bug, not something a retry can fix).
 */
export function renderEvent(e: EventRow, livemode: boolean): { ok: true; event: RenderedEvent } | { ok: false; error: string } {
  if (!isEventType(e.type)) return { ok: false, error: `the event type ${e.type} is not in the catalogue` };
  let data: Record<string, unknown>;
  try {
    data = eventData(e.type, e.payload);
  } catch (err) {
    return { ok: false, error: `the stored event could not be read: ${(err as Error).message}` };
  }
  const checked = EVENT_CATALOG[e.type].data.safeParse(data);
  if (!checked.success) {
    const first = checked.error.issues[0];
    return { ok: false, error: `the event data does not match the ${e.type} schema: ${first?.path.join(".") || "(root)"}: ${first?.message}` };
  }
  return { ok: true, event: { id: e.id, type: e.type, created_at: e.createdAt, company_id: e.companyId, livemode, api_version: API_VERSION, data } };
}
