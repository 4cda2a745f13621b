import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { receiverUrl, register, until, verified } from "../webhooks/helpers";
import { allRows, postBatch, untilCompleted } from "./helpers";

/**
 * JSON batches end to end, through the real queue consumer and the SII simulator over its wire
 * protocol: per-row results, paging, listing, replay, duplicate references, the webhook.
 */
let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer(["33", "39"], 1200);
});

const boleta = (i: number, overrides: Record<string, unknown> = {}) => invoiceBody(issuer.rut, "39", { external_reference: `B-${i}-${crypto.randomUUID().slice(0, 8)}`, ...overrides });

describe("a batch of 1,000 boletas with a few bad rows", () => {
  it("refuses the bad rows with row-prefixed errors, takes every good one to ACCEPTED and sends batch.completed", async () => {
    const hook = receiverUrl("batch");
    const endpoint = await register(issuer.owner, issuer.companyId, { url: hook.url, events: ["batch.completed"] });
    const rows: unknown[] = Array.from({ length: 1000 }, (_, i) => boleta(i));
    const good = boleta(0);
    rows[17] = { ...good, items: [{ quantity: 1, unit_price: "abc", description: "x" }] };
    rows[250] = { ...good, totals: { total: 1 } };
    rows[500] = { ...good, surprise: true };
    rows[999] = invoiceBody("76086428-5", "39");
    const res = await postBatch(issuer, rows);
    expect(res.status, JSON.stringify(res.body).slice(0, 2000)).toBe(202);
    expect(res.body).toMatchObject({ source: "JSON", status: "PROCESSING", rows: 1000, documents: 996, refused: 4 });
    expect(res.body.counts).toMatchObject({ RECEIVED: 996, REFUSED: 4 });
    expect(res.body.results).toHaveLength(1000);
    const refused = res.body.results.filter((r: any) => r.status === "REFUSED");
    expect(refused.map((r: any) => r.row)).toEqual([17, 250, 500, 999]);
    expect(refused.every((r: any) => r.invoice_id === null)).toBe(true);
    expect(refused[0].error.code).toBe("VALIDATION_FAILED");
    expect(refused[0].error.details.map((d: any) => d.field)).toContain("rows[17].items[0].unit_price");
    expect(refused[1].error).toMatchObject({ code: "INVOICE_TOTALS_MISMATCH" });
    expect(refused[1].error.details[0].field).toMatch(/^rows\[250\]\.totals/);
    expect(refused[2].error.details).toEqual([expect.objectContaining({ field: "rows[500].surprise" })]);
    expect(refused[3].error).toMatchObject({ code: "INVOICE_ISSUER_MISMATCH", details: [{ field: "rows[999].issuer.document_number" }] });

    const done = await untilCompleted(issuer, res.body.id, 240_000);
    expect(done.counts).toMatchObject({ ACCEPTED: 996, REFUSED: 4, FAILED: 0, REJECTED: 0 });
    // Folios: one per stored document, none for the refused rows.
    const folios = await storeRows<{ n: number; lo: number; hi: number }>(issuer.companyId, sql`SELECT count(DISTINCT folio) AS n, min(folio) AS lo, max(folio) AS hi FROM invoices WHERE batch_id = ${res.body.id}`);
    expect(folios.find((f) => f.n > 0)).toMatchObject({ n: 996, hi: expect.any(Number) });
    const envelopes = await storeRows<{ n: number }>(issuer.companyId, sql`SELECT count(*) AS n FROM envelopes e WHERE EXISTS (SELECT 1 FROM invoices i WHERE i.envelope_id = e.id AND i.batch_id = ${res.body.id})`);
    expect(envelopes.reduce((s, e) => s + e.n, 0)).toBeLessThan(20);
    const [delivery] = await until(hook.path, (r) => r.length >= 1, 60_000);
    const event = verified(endpoint.secret, delivery!);
    expect(event).toMatchObject({ type: "batch.completed", data: { batch_id: res.body.id, rows: 1000, refused: 4, documents: 996, accepted: 996, rejected: 0, failed: 0 } });
    // The documents are ordinary documents.
    const some = res.body.results[3];
    const doc = await call("GET", `${issuer.base}/invoices/${some.invoice_id}`, { key: issuer.owner.key });
    expect(doc.body).toMatchObject({ status: "ACCEPTED", external_reference: some.external_reference });
    const page = await call("GET", `${issuer.base}/invoice-batches/${res.body.id}?refused=true`, { key: issuer.owner.key });
    expect(page.body.results.map((r: any) => r.row)).toEqual([17, 250, 500, 999]);
    expect((await allRows(issuer, res.body.id)).filter((r) => r.status === "ACCEPTED")).toHaveLength(996);
  }, 300_000);
});

describe("references, replays and listing", () => {
  it("refuses a reference repeated in the batch or used before, per row; a retry with the key replays", async () => {
    const used = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: `USED-${crypto.randomUUID()}` }));
    expect(used.status).toBe(202);
    const twice = `TWICE-${crypto.randomUUID()}`;
    const rows = [invoiceBody(issuer.rut, "33", { external_reference: twice }), invoiceBody(issuer.rut, "33", { external_reference: twice }), invoiceBody(issuer.rut, "33", { external_reference: used.body.external_reference }), invoiceBody(issuer.rut, "33")];
    const key = { "Idempotency-Key": crypto.randomUUID() };
    const first = await postBatch(issuer, rows, key);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.results.map((r: any) => r.status)).toEqual(["RECEIVED", "REFUSED", "REFUSED", "RECEIVED"]);
    expect(first.body.results[1].error).toMatchObject({ code: "INVOICE_DUPLICATE_EXTERNAL_REFERENCE", details: [{ field: "rows[1].external_reference" }] });
    expect(first.body.results[2].error.message).toContain(used.body.id);
    const again = await postBatch(issuer, rows, key);
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.results.map((r: any) => r.invoice_id)).toEqual(first.body.results.map((r: any) => r.invoice_id));
    const stored = await storeRows<{ n: number }>(issuer.companyId, sql`SELECT count(*) AS n FROM invoices WHERE batch_id = ${first.body.id}`);
    expect(stored.reduce((s, r) => s + r.n, 0)).toBe(2);
    const done = await untilCompleted(issuer, first.body.id);
    expect(done.counts).toMatchObject({ ACCEPTED: 2, REFUSED: 2 });
    await untilFinal(issuer, used.body.id);
    const list = await call("GET", `${issuer.base}/invoice-batches?per_page=100`, { key: issuer.owner.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((b: any) => b.id)).toContain(first.body.id);
    expect(list.body.data.find((b: any) => b.id === first.body.id)).toMatchObject({ status: "COMPLETED", counts: { ACCEPTED: 2, REFUSED: 2 } });
  });

  it("a batch whose every row is refused is complete at once, sends batch.completed and uses no folio", async () => {
    const bare = await readyIssuer([33], 5);
    const hook = receiverUrl("batch-refused");
    const endpoint = await register(bare.owner, bare.companyId, { url: hook.url, events: ["batch.*"] });
    const before = (await call("GET", `${bare.base}/enumeration/list`, { key: bare.owner.key })).body.data[0];
    const ref = `R-${crypto.randomUUID()}`;
    const res = await postBatch(bare, [invoiceBody(bare.rut, "33", { totals: { total: 1 } }), invoiceBody(bare.rut, "34"), invoiceBody(bare.rut, "33", { external_reference: ref, recipient: { ...invoiceBody(bare.rut, "33").recipient, document_number: "not-a-rut" } })]);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "COMPLETED", documents: 0, refused: 3 });
    expect(res.body.results[1].error.code).toBe("INVOICE_NO_FOLIOS");
    const after = (await call("GET", `${bare.base}/enumeration/list`, { key: bare.owner.key })).body.data[0];
    expect(after.folios_available).toBe(before.folios_available);
    const [delivery] = await until(hook.path, (r) => r.length >= 1);
    expect(verified(endpoint.secret, delivery!)).toMatchObject({ type: "batch.completed", data: { batch_id: res.body.id, documents: 0, refused: 3, accepted: 0 } });
  });

  it("a row refused for its reference holds no folio; one refused for its folio gives back its reference", async () => {
    const small = await readyIssuer([33], 4);
    const taken = `T-${crypto.randomUUID()}`;
    const single = await issue(small, invoiceBody(small.rut, "33", { external_reference: taken }));
    expect(single.status).toBe(202);
    // Three folios left: the row whose reference is taken holds none, so both others are issued.
    const first = await postBatch(small, [invoiceBody(small.rut, "33", { external_reference: taken }), invoiceBody(small.rut, "33"), invoiceBody(small.rut, "33")]);
    expect(first.body.results.map((r: any) => r.status)).toEqual(["REFUSED", "RECEIVED", "RECEIVED"]);
    // A row refused for want of a folio gives back its reference: the next batch may use it.
    const ref = `N-${crypto.randomUUID()}`;
    const second = await postBatch(small, [invoiceBody(small.rut, "33"), invoiceBody(small.rut, "33", { external_reference: ref })]);
    expect(second.body.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["RECEIVED", "INVOICE_NO_FOLIOS"]);
    await call("POST", `${small.base}/enumeration/refetch`, { key: small.owner.key, json: { document_type: "33", quantity: 2 } });
    const third = await postBatch(small, [invoiceBody(small.rut, "33", { external_reference: ref })]);
    expect(third.body.results[0].status).toBe("RECEIVED");
    for (const b of [first, second, third]) await untilCompleted(small, b.body.id);
  });

  it("folios run out mid-batch: the rows past the last folio are refused, the others issued", async () => {
    const small = await readyIssuer([39], 3);
    const res = await postBatch(small, Array.from({ length: 5 }, () => invoiceBody(small.rut, "39")));
    expect(res.body.results.map((r: any) => r.status)).toEqual(["RECEIVED", "RECEIVED", "RECEIVED", "REFUSED", "REFUSED"]);
    expect(res.body.results[4].error.code).toBe("INVOICE_NO_FOLIOS");
    expect((await untilCompleted(small, res.body.id)).counts).toMatchObject({ ACCEPTED: 3, REFUSED: 2 });
  });
});

describe("bad requests", () => {
  it("are refused whole with the envelope, and store nothing", async () => {
    expectError(await call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, json: { rows: [] } }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, json: [invoiceBody(issuer.rut, "33")] }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, json: { rows: Array.from({ length: 1001 }, () => ({})) } }), 400, "VALIDATION_FAILED");
    expectError(await call("POST", `${issuer.base}/invoice-batches`, { key: issuer.owner.key, body: "{", headers: { "Content-Type": "application/json" } }), 400, "MALFORMED_JSON");
    expectError(await call("GET", `${issuer.base}/invoice-batches/bat_nope`, { key: issuer.owner.key }), 404, "BATCH_NOT_FOUND");
    expectError(await call("GET", `${issuer.base}/invoice-batches/bat_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E`, { key: issuer.owner.key }), 404, "BATCH_NOT_FOUND");
  });
});
