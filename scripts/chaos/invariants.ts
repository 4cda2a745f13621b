/**
 * The invariants of the chaos run (issue 15), shared by `npm run chaos` and its short version in
 * `npm test` (test/chaos/chaos.test.ts). Pure: documents, deliveries and faults in, a report out.
 */

export const FINAL = ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"] as const;

/** The webhook event each final status announces. */
const FINAL_EVENT: Record<string, string> = {
  ACCEPTED: "invoice.accepted",
  ACCEPTED_WITH_OBJECTIONS: "invoice.accepted_with_objections",
  REJECTED: "invoice.rejected",
  FAILED: "invoice.failed",
};

/** A document as the API lists it (the fields the invariants need). */
export interface DocumentView {
  id: string;
  company_id: string;
  invoice_type: string;
  status: string;
  folio: number | null;
  fiscal_status: string | null;
  fiscal_message: string | null;
  /** The delivery to the buyer (absent from inputs that do not carry it: not checked then). */
  buyer_delivery?: { state: string } | null;
}

/** One request the webhook receiver got. */
export interface ReceivedEvent {
  /** The `webhook-id` header: the event id, the same on every attempt. */
  webhook_id: string;
  type: string;
  data_id: string | null;
}

export interface ChaosInput {
  /** Ids answered 202 to the clients. */
  issued: string[];
  /** Every document of the run's companies, as listed at the end. */
  documents: DocumentView[];
  /** Every webhook request received (a receiver that answered non-2xx counts it too: it arrived). */
  received: ReceivedEvent[];
  /** First folio of the range each company and type started from (default 1). */
  firstFolio?: (companyId: string, type: string) => number;
}

export interface ChaosReport {
  documents: number;
  by_state: Record<string, number>;
  not_final: number;
  missing: string[];
  duplicate_folios: string[];
  skipped_folios: string[];
  burned_folios: { folio: string; cause: string }[];
  webhooks: { expected: number; lost: string[]; duplicated: number; received: number };
  /** Accepted documents by the state of their delivery to the buyer (NONE: not started). */
  buyer_deliveries: Record<string, number>;
  failures: string[];
}

/** Boletas go to consumers and are not mailed to a buyer. */
const NOT_DELIVERED = ["39", "41"];

export function checkInvariants(input: ChaosInput): ChaosReport {
  const { documents } = input;
  const by_state: Record<string, number> = {};
  for (const d of documents) by_state[d.status] = (by_state[d.status] ?? 0) + 1;
  const notFinal = documents.filter((d) => !(FINAL as readonly string[]).includes(d.status));
  const known = new Set(documents.map((d) => d.id));
  const missing = input.issued.filter((id) => !known.has(id));

  const { duplicates, skipped, burned } = folioChecks(documents, input.firstFolio ?? (() => 1));
  const webhooks = webhookChecks(documents, input.received);

  const failures: string[] = [];
  if (notFinal.length) failures.push(`${notFinal.length} documents not final: ${notFinal.slice(0, 5).map((d) => `${d.id}=${d.status}`).join(", ")}`);
  if (missing.length) failures.push(`${missing.length} issued documents missing: ${missing.slice(0, 5).join(", ")}`);
  if (duplicates.length) failures.push(`${duplicates.length} duplicate folios: ${duplicates.slice(0, 5).join(", ")}`);
  if (skipped.length) failures.push(`${skipped.length} folios skipped without a recorded cause: ${skipped.slice(0, 5).join(", ")}`);
  if (webhooks.lost.length) failures.push(`${webhooks.lost.length} webhook events lost: ${webhooks.lost.slice(0, 5).join(", ")}`);
  const deliveries = deliveryChecks(documents);
  if (deliveries.unstarted.length) failures.push(`${deliveries.unstarted.length} accepted documents whose delivery to the buyer never started: ${deliveries.unstarted.slice(0, 5).join(", ")}`);
  if (deliveries.failed.length) failures.push(`${deliveries.failed.length} deliveries to the buyer FAILED: ${deliveries.failed.slice(0, 5).join(", ")}`);
  return { documents: documents.length, by_state, not_final: notFinal.length, missing, duplicate_folios: duplicates, skipped_folios: skipped, burned_folios: burned, webhooks, buyer_deliveries: deliveries.byState, failures };
}

/**
 * The acceptance starts the delivery to the buyer in its own batch, so every accepted document that
 * takes one has it; none ends FAILED (the run's faults are transient). PENDING is allowed: an attempt
 * lost with its queue message waits for its lease.
 */
function deliveryChecks(documents: DocumentView[]) {
  const byState: Record<string, number> = {};
  const unstarted: string[] = [];
  const failed: string[] = [];
  for (const d of documents) {
    if ((d.status !== "ACCEPTED" && d.status !== "ACCEPTED_WITH_OBJECTIONS") || NOT_DELIVERED.includes(d.invoice_type) || !("buyer_delivery" in d)) continue;
    const state = d.buyer_delivery?.state ?? "NONE";
    byState[state] = (byState[state] ?? 0) + 1;
    if (state === "NONE") unstarted.push(d.id);
    if (state === "FAILED") failed.push(d.id);
  }
  return { byState, unstarted, failed };
}

/**
 * Per company and type: no folio on two documents; no hole between the first folio and the highest
 * one used; a folio used by a document that ended REJECTED or FAILED is "burned", with its cause.
 */
function folioChecks(documents: DocumentView[], firstFolio: (companyId: string, type: string) => number) {
  const byRange = new Map<string, DocumentView[]>();
  for (const d of documents) {
    if (d.folio === null) continue;
    const k = `${d.company_id}|${d.invoice_type}`;
    byRange.set(k, [...(byRange.get(k) ?? []), d]);
  }
  const duplicates: string[] = [];
  const skipped: string[] = [];
  const burned: { folio: string; cause: string }[] = [];
  for (const [k, docs] of byRange) {
    const [companyId, type] = k.split("|") as [string, string];
    const used = new Map<number, DocumentView>();
    for (const d of docs) {
      const name = `${companyId}/${type}/${d.folio}`;
      if (used.has(d.folio!)) duplicates.push(`${name} (${used.get(d.folio!)!.id}, ${d.id})`);
      used.set(d.folio!, d);
      if (d.status === "REJECTED" || d.status === "FAILED") burned.push({ folio: name, cause: `${d.status} ${d.fiscal_status ?? ""}: ${d.fiscal_message ?? "no message"}`.trim() });
    }
    const max = Math.max(...used.keys());
    for (let f = firstFolio(companyId, type); f <= max; f++) if (!used.has(f)) skipped.push(`${companyId}/${type}/${f}`);
  }
  return { duplicates, skipped, burned };
}

/** Every final document's event arrived at least once; repeats (at-least-once delivery) are counted. */
function webhookChecks(documents: DocumentView[], received: ReceivedEvent[]) {
  const seen = new Map<string, number>();
  const arrived = new Set<string>();
  for (const r of received) {
    seen.set(r.webhook_id, (seen.get(r.webhook_id) ?? 0) + 1);
    if (r.data_id) arrived.add(`${r.type}|${r.data_id}`);
  }
  const lost: string[] = [];
  let expected = 0;
  for (const d of documents) {
    const type = FINAL_EVENT[d.status];
    if (!type) continue;
    expected++;
    if (!arrived.has(`${type}|${d.id}`)) lost.push(`${type} ${d.id}`);
  }
  const duplicated = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
  return { expected, lost, duplicated, received: received.length };
}

/** The report as the lines `npm run chaos` prints. */
export function formatReport(r: ChaosReport, extra: Record<string, unknown> = {}): string {
  const lines = [
    `documents: ${r.documents}`,
    `per final state: ${Object.entries(r.by_state).map(([s, n]) => `${s} ${n}`).join(", ")}`,
    `not final: ${r.not_final} (must be 0)`,
    `missing (answered 202, not listed): ${r.missing.length} (must be 0)`,
    `duplicate folios: ${r.duplicate_folios.length} (must be 0)`,
    `folios skipped without a cause: ${r.skipped_folios.length} (must be 0)`,
    `folios burned (used by a REJECTED/FAILED document, cause recorded): ${r.burned_folios.length}`,
    ...summariseCauses(r.burned_folios),
    `webhook events expected: ${r.webhooks.expected}, lost: ${r.webhooks.lost.length} (must be 0), duplicated deliveries: ${r.webhooks.duplicated}, requests received: ${r.webhooks.received}`,
    `accepted documents by delivery to the buyer: ${Object.entries(r.buyer_deliveries).map(([s, n]) => `${s} ${n}`).join(", ") || "none"} (NONE and FAILED must be 0)`,
    ...Object.entries(extra).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`),
    r.failures.length ? `INVARIANTS FAILED:\n  ${r.failures.join("\n  ")}` : "every invariant holds",
  ];
  return lines.join("\n");
}

function summariseCauses(burned: { cause: string }[]): string[] {
  const counts = new Map<string, number>();
  for (const b of burned) counts.set(b.cause.slice(0, 120), (counts.get(b.cause.slice(0, 120)) ?? 0) + 1);
  return [...counts].map(([cause, n]) => `  ${n} × ${cause}`);
}
