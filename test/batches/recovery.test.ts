import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { call, expectError } from "../helpers/api";
import { invoiceBody, readyIssuer } from "../helpers/issuer";
import { postBatch, untilCompleted } from "./helpers";

/**
 * A batch stored but its answer lost (the document store's answer dropped, as the platform drops
 * it, through the chaos hook compiled into the test Worker): 503, and the retry with the same
 * Idempotency-Key answers that batch, queues its documents, and never issues them twice.
 */
const plan = (body: object) => exports.default.fetch(new Request("http://localhost/__chaos/plan", { method: "POST", body: JSON.stringify(body) }));

afterEach(async () => {
  await plan({});
});

describe("a batch whose answer was lost", () => {
  it("is found by the request itself when only the write's answer was lost", async () => {
    const issuer = await readyIssuer([39], 10);
    expect((await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key })).status).toBe(200);
    await plan({ seed: 65, store: 1, after: 1, scopes: ["fetch"], skip: { store: 1 }, budget: { store: 1 }, objects: ["DOCUMENT_STORE"] });
    const res = await postBatch(issuer, [invoiceBody(issuer.rut, "39")]);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await plan({});
    expect((await untilCompleted(issuer, res.body.id)).counts).toMatchObject({ ACCEPTED: 1 });
  });

  it("is answered by the retry with its key, and its documents are issued once", async () => {
    const issuer = await readyIssuer([39], 10);
    expect((await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key })).status).toBe(200);
    // The POST's document-store calls: the key's claim (1), the batch's one write (2), whose answer is
    // lost, and the read that looks for it (3), which fails too.
    await plan({ seed: 64, store: 1, after: 1, scopes: ["fetch"], skip: { store: 1 }, budget: { store: 2 }, objects: ["DOCUMENT_STORE"] });
    const rows = [invoiceBody(issuer.rut, "39"), invoiceBody(issuer.rut, "39"), { ...invoiceBody(issuer.rut, "39"), totals: { total: 1 } }];
    const headers = { "Idempotency-Key": `batch-lost-${crypto.randomUUID()}` };
    expectError(await postBatch(issuer, rows, headers), 503, "SERVICE_UNAVAILABLE");
    await plan({});
    const retried = await postBatch(issuer, rows, headers);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body).toMatchObject({ documents: 2, refused: 1 });
    const replayed = await postBatch(issuer, rows, headers);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(retried.body.id);
    const done = await untilCompleted(issuer, retried.body.id);
    expect(done.counts).toMatchObject({ ACCEPTED: 2, REFUSED: 1 });
    const list = await call("GET", `${issuer.base}/invoices?per_page=100`, { key: issuer.owner.key });
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((d: any) => d.folio).sort()).toEqual([1, 2]);
    const batches = await call("GET", `${issuer.base}/invoice-batches`, { key: issuer.owner.key });
    expect(batches.body.total).toBe(1);
  });
});
