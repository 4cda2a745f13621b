import { expect } from "vitest";
import { call } from "../helpers/api";
import type { Issuer } from "../helpers/issuer";

/** Posts a JSON batch. */
export function postBatch(issuer: Issuer, rows: unknown[], headers: Record<string, string> = {}) {
  return call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, json: { rows }, headers });
}

/** Polls GET until the batch is COMPLETED (the real queue consumer and the simulated SII do the work). */
export async function untilCompleted(issuer: Issuer, batchId: string, timeoutMs = 120_000): Promise<any> {
  const start = Date.now();
  for (;;) {
    const res = await call("GET", `${issuer.base}/invoice-batches/${batchId}?per_page=1`, { key: issuer.owner.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status === "COMPLETED") return res.body;
    if (Date.now() - start > timeoutMs) throw new Error(`batch ${batchId} still ${res.body.status} after ${timeoutMs} ms: ${JSON.stringify(res.body.counts)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Every row of a batch, page by page. */
export async function allRows(issuer: Issuer, batchId: string, query = ""): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call("GET", `${issuer.base}/invoice-batches/${batchId}?per_page=100&page=${page}${query}`, { key: issuer.owner.key });
    expect(res.status).toBe(200);
    rows.push(...res.body.results);
    if (page >= res.body.results_page.last_page) return rows;
  }
}

/** The columns of the CSV layout, in the template's order. */
export const CSV_HEADER = [
  "document_key", "invoice_type", "invoice_date", "external_reference", "issuer_rut", "issuer_legal_name", "issuer_activity", "issuer_activity_code", "issuer_address", "issuer_city",
  "recipient_rut", "recipient_legal_name", "recipient_activity", "recipient_address", "recipient_city", "payment_due_date", "reason_code", "reference_type", "reference_folio", "reference_date", "reference_reason",
  "item_description", "item_quantity", "item_unit_price", "item_unit", "item_exempt", "item_discount_amount",
];

/** A CSV line of a boleta's item: `cells` overrides columns by name. */
export function csvLine(issuer: Issuer, key: string, cells: Record<string, string> = {}): Record<string, string> {
  const now = new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" }).slice(0, 19);
  return {
    document_key: key, invoice_type: "39", invoice_date: now, external_reference: `CSV-${key}-${crypto.randomUUID().slice(0, 8)}`, issuer_rut: issuer.rut, issuer_legal_name: "EMPRESA DE PRUEBA SPA",
    issuer_activity: "Venta al por menor", issuer_activity_code: "477399", issuer_address: "Av. Siempre Viva 123", issuer_city: "Santiago", item_description: "Pan amasado", item_quantity: "1", item_unit_price: "1000", ...cells,
  };
}

/** The CSV text of `lines` with `separator`; cells with the separator, quotes or line breaks quoted. */
export function csvText(lines: Record<string, string>[], separator = ";"): string {
  const cell = (v: string) => (/[;,"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return [CSV_HEADER, ...lines.map((l) => CSV_HEADER.map((h) => l[h] ?? ""))].map((r) => r.map(cell).join(separator)).join("\r\n") + "\r\n";
}

/** Uploads a CSV batch (bytes as given). */
export function postCsv(issuer: Issuer, bytes: Uint8Array | string, parts: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const form = new FormData();
  form.append("file", new File([typeof bytes === "string" ? new TextEncoder().encode(bytes) : (bytes as Uint8Array<ArrayBuffer>)], "lote.csv", { type: "text/csv" }));
  for (const [k, v] of Object.entries(parts)) form.append(k, v);
  return call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, body: form, headers });
}

/** ISO-8859-1 bytes of a Latin-1 string. */
export function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (ch) => ch.charCodeAt(0));
}
