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
