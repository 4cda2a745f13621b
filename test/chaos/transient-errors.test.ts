import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { transientFailure } from "../../src/http/errors/handler";
import { call, companyBody, expectError, newCompany, newOwner } from "../helpers/api";
import { getEndpoint, signingSecrets } from "../../src/webhooks/endpoints";
import { eq } from "drizzle-orm";
import { closePartition, indexStore, openPartition, ordinalOfId } from "../../src/storage/db/document-store";
import { idempotencyKeys } from "../../src/storage/db/schema";
import { CLAIM_LEASE_MS, TTL_MS } from "../../src/http/middleware/idempotency";
import { createDb } from "../../src/storage/db/client";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";

/**
 * A Durable Object call that fails in the platform's infrastructure (the object restarting or
 * moving, the connection dropped: the error's `.retryable`; the object overloaded: `.overloaded`)
 * answers 503 SERVICE_UNAVAILABLE with Retry-After, not 500 INTERNAL. The chaos hook (compiled into
 * the test Worker) fails the calls on the control directory and the document stores as the platform
 * does, marked retryable.
 */
const plan = (body: object) => exports.default.fetch(new Request("http://localhost/__chaos/plan", { method: "POST", body: JSON.stringify(body) }));
/** The faults injected since the plan was set, by kind. */
const injected = async () => ((await (await exports.default.fetch(new Request("http://localhost/__chaos/plan"))).json()) as { injected: Record<"d1" | "store", number> }).injected;

afterEach(async () => {
  await plan({});
});

/** The company holds one invoice, `storedId`, and it was accepted with the first folio. */
async function expectIssuedOnce(issuer: Awaited<ReturnType<typeof readyIssuer>>, storedId: string) {
  const done = await untilFinal(issuer, storedId);
  expect(done.status).toBe("ACCEPTED");
  expect(done.folio).toBe(1);
  const list = await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key });
  expect(list.body.total).toBe(1);
}

describe("transient storage errors", () => {
  it("a control directory call that fails before reaching the object: 503 SERVICE_UNAVAILABLE with Retry-After 1, and the retry answers", async () => {
    const owner = await newOwner("Transient A");
    // The key was never used: its first request asks its directory object, which fails once.
    await plan({ seed: 7, store: 1, after: 0, scopes: ["fetch"], budget: { store: 1 } });
    const res = await call("GET", "/api/companies", { key: owner.key });
    expectError(res, 503, "SERVICE_UNAVAILABLE");
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(res.body.error.message).toBe("Storage was briefly unavailable. Retry after the seconds in Retry-After; with the same Idempotency-Key a POST is done at most once.");
    expect(JSON.stringify(res.body)).not.toMatch(/chaos|stack|\bat \S+\(/i);
    expect((await injected()).store).toBe(1);
    const again = await call("GET", "/api/companies", { key: owner.key });
    expect(again.status).toBe(200);
  });

  it("a POST whose Idempotency-Key claim was written but its answer lost: 503, then the retry with the key does the work once (not 409 for a day)", async () => {
    const owner = await newOwner("Transient B");
    // Warm: the key is in the isolate's cache, so the POST's first store call is the claim in the client's index store.
    expect((await call("GET", "/api/companies", { key: owner.key })).status).toBe(200);
    await plan({ seed: 8, store: 1, after: 1, scopes: ["fetch"], budget: { store: 1 }, objects: ["DOCUMENT_STORE"] });
    const body = companyBody({ legal_name: "Idempotent SpA" });
    const headers = { "Idempotency-Key": "transient-claim-1" };
    const lost = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expectError(lost, 503, "SERVICE_UNAVAILABLE");
    const created = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const replayed = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(created.body.id);
    const list = await call("GET", "/api/companies?per_page=100", { key: owner.key });
    expect(list.body.data.filter((c: { legal_name: string }) => c.legal_name === "Idempotent SpA")).toHaveLength(1);
  });

  it("a POST whose work is done but whose answer cannot be recorded: the client still gets its answer; a retry is 409 during the claim's lease, then answered with what was stored, never a second record", async () => {
    const owner = await newOwner("Transient C");
    expect((await call("GET", "/api/companies", { key: owner.key })).status).toBe(200);
    // The claim passes; every attempt at recording the answer (3) fails before reaching the store.
    await plan({ seed: 9, store: 1, after: 0, scopes: ["fetch"], skip: { store: 1 }, budget: { store: 3 }, objects: ["DOCUMENT_STORE"] });
    const body = companyBody({ legal_name: "Unrecorded SpA" });
    const headers = { "Idempotency-Key": "transient-complete-1" };
    const created = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await plan({});
    const again = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expectError(again, 409, "IDEMPOTENCY_KEY_IN_USE");
    expect(again.headers.get("Retry-After")).toBe("1");
    // A claim held 30 s is most likely an attempt that died: the answer says when a retry takes it over.
    await indexStore(env, owner.clientId).update(idempotencyKeys).set({ expiresAt: new Date(Date.now() + TTL_MS - 30_000).toISOString() }).where(eq(idempotencyKeys.key, headers["Idempotency-Key"]));
    const held = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expectError(held, 409, "IDEMPOTENCY_KEY_IN_USE");
    // Its age is 30 s plus however long this request took to arrive; the wait is what is left of the 60 s lease.
    const said = /^An earlier request with this Idempotency-Key started (\d+) s ago and has not finished; if it died, a retry in (\d+) s takes it over\.$/.exec(held.body.error.message);
    expect(said, held.body.error.message).not.toBeNull();
    const [age, wait] = said!.slice(1).map(Number);
    expect(age).toBeGreaterThanOrEqual(30);
    expect(age).toBeLessThan(CLAIM_LEASE_MS / 1000);
    expect(age! + wait!).toBe(CLAIM_LEASE_MS / 1000);
    expect(held.headers.get("Retry-After")).toBe(String(wait));
    // The claim's lease ends (as 60 s later): the retry takes it over and, its id derived from the claim, finds the company stored.
    await indexStore(env, owner.clientId).update(idempotencyKeys).set({ expiresAt: new Date(Date.now() + TTL_MS - CLAIM_LEASE_MS - 1000).toISOString() }).where(eq(idempotencyKeys.key, headers["Idempotency-Key"]));
    const taken = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
    expect(taken.body.id).toBe(created.body.id);
    const replayed = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(created.body.id);
    const list = await call("GET", "/api/companies?per_page=100", { key: owner.key });
    expect(list.body.data.filter((c: { legal_name: string }) => c.legal_name === "Unrecorded SpA")).toHaveLength(1);
  });

  it("a POST whose answer is recorded on the second attempt: the retry with the key replays it", async () => {
    const owner = await newOwner("Transient D");
    expect((await call("GET", "/api/companies", { key: owner.key })).status).toBe(200);
    await plan({ seed: 10, store: 1, after: 0, scopes: ["fetch"], skip: { store: 1 }, budget: { store: 1 }, objects: ["DOCUMENT_STORE"] });
    const body = companyBody({ legal_name: "Recorded SpA" });
    const headers = { "Idempotency-Key": "transient-complete-2" };
    const created = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(created.status).toBe(201);
    expect((await injected()).store).toBe(1);
    const replayed = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(created.body.id);
  });

  it("a document stored but its answer lost: 503, and the retry with the Idempotency-Key answers that document, never a second one", async () => {
    const issuer = await readyIssuer([33]);
    expect((await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key })).status).toBe(200);
    // The POST's document-store calls: the key's claim (1), the external_reference's claim (2), then the document's insert (3), whose answer is lost.
    await plan({ seed: 11, store: 1, after: 1, scopes: ["fetch"], skip: { store: 2 }, budget: { store: 1 }, objects: ["DOCUMENT_STORE"] });
    // With an external_reference: SQLite may name that unique index rather than the id on the retry's insert.
    const body = invoiceBody(issuer.rut, "33", { external_reference: "erp-order-7781" });
    const headers = { "Idempotency-Key": "transient-invoice-1" };
    const lost = await issue(issuer, body, headers);
    expectError(lost, 503, "SERVICE_UNAVAILABLE");
    await plan({});
    const first = await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key });
    expect(first.body.total).toBe(1);
    const storedId = first.body.data[0].id;
    const retried = await issue(issuer, body, headers);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body.id).toBe(storedId);
    const replayed = await issue(issuer, body, headers);
    expect(replayed.status).toBe(202);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(storedId);
    await expectIssuedOnce(issuer, storedId);
  });

  it("a document stored but its answer lost, and the company's partition rolled over before the retry: the retry answers that document in its partition, never a second one", async () => {
    const issuer = await readyIssuer([33]);
    expect((await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key })).status).toBe(200);
    // The POST's document-store calls: the key's claim (1), then the document's insert (2), whose answer is lost.
    await plan({ seed: 12, store: 1, after: 1, scopes: ["fetch"], skip: { store: 1 }, budget: { store: 1 }, objects: ["DOCUMENT_STORE"] });
    const body = invoiceBody(issuer.rut, "33");
    const headers = { "Idempotency-Key": "transient-invoice-rollover" };
    expectError(await issue(issuer, body, headers), 503, "SERVICE_UNAVAILABLE");
    expect((await injected()).store).toBe(1);
    await plan({});
    const first = await call("GET", `${issuer.base}/invoices`, { key: issuer.owner.key });
    expect(first.body.total).toBe(1);
    const storedId: string = first.body.data[0].id;
    // A month's first instant (or the size limit) between the attempts: new documents now go to the next partition.
    const ordinal = ordinalOfId(storedId)!;
    await closePartition(env, issuer.companyId, ordinal, "MONTH_END", null);
    expect((await openPartition(env, issuer.companyId)).ordinal).toBe(ordinal + 1);
    const retried = await issue(issuer, body, headers);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body.id).toBe(storedId);
    await expectIssuedOnce(issuer, storedId);
    // A new request goes to the open partition, and takes the next folio.
    const next = await issue(issuer, invoiceBody(issuer.rut, "33"), { "Idempotency-Key": "transient-invoice-rollover-2" });
    expect(next.status).toBe(202);
    expect(ordinalOfId(next.body.id)).toBe(ordinal + 1);
    expect((await untilFinal(issuer, next.body.id)).folio).toBe(2);
  });

  it("a failed request whose claim cannot be settled at the first try: settled at the second, so the retry with the key does the work at once (not 409 IN_USE for the claim's lease)", async () => {
    const owner = await newOwner("Transient G");
    expect((await call("GET", "/api/companies", { key: owner.key })).status).toBe(200);
    // The company's insert fails before reaching D1 (500); the first write that marks the claim ABANDONED (the second store call, after the claim) fails too.
    await plan({ seed: 14, d1: 1, store: 1, after: 0, scopes: ["fetch"], budget: { d1: 1, store: 1 }, skip: { store: 1 }, objects: ["DOCUMENT_STORE"], sql: 'insert into "companies"' });
    const body = companyBody({ legal_name: "Unsettled SpA" });
    const headers = { "Idempotency-Key": "transient-settle-1" };
    expectError(await call("POST", "/api/companies", { key: owner.key, json: body, headers }), 500, "INTERNAL");
    expect(await injected()).toMatchObject({ d1: 1, store: 1 });
    await plan({});
    const retried = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const list = await call("GET", "/api/companies?per_page=100", { key: owner.key });
    expect(list.body.data.filter((c: { legal_name: string }) => c.legal_name === "Unsettled SpA").map((c: { id: string }) => c.id)).toEqual([retried.body.id]);
  });

  it("a company stored but its answer lost: the retry with the Idempotency-Key answers that company, not COMPANY_TAX_ID_TAKEN", async () => {
    const owner = await newOwner("Transient E");
    expect((await call("GET", "/api/companies", { key: owner.key })).status).toBe(200);
    // The D1 batch that stores the company (and its settings) succeeds; its answer is lost.
    await plan({ seed: 12, d1: 1, after: 1, scopes: ["fetch"], budget: { d1: 1 }, sql: 'insert into "companies"' });
    const body = companyBody({ legal_name: "Lost Answer SpA" });
    const headers = { "Idempotency-Key": "transient-company-1" };
    const lost = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expectError(lost, 500, "INTERNAL");
    await plan({});
    const stored = (await call("GET", "/api/companies?per_page=100", { key: owner.key })).body.data.filter((c: { legal_name: string }) => c.legal_name === "Lost Answer SpA");
    expect(stored).toHaveLength(1);
    const retried = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body.id).toBe(stored[0].id);
    const replayed = await call("POST", "/api/companies", { key: owner.key, json: body, headers });
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body.id).toBe(stored[0].id);
    // Another key for the same company is still refused: only the request's own retry finds it.
    expectError(await call("POST", "/api/companies", { key: owner.key, json: body, headers: { "Idempotency-Key": "transient-company-2" } }), 409, "COMPANY_TAX_ID_TAKEN");
    expectError(await call("POST", "/api/companies", { key: owner.key, json: body }), 409, "COMPANY_TAX_ID_TAKEN");
  });

  it("a webhook endpoint stored but its answer lost: the retry with the Idempotency-Key answers that endpoint and its secret, never a second endpoint", async () => {
    const owner = await newOwner("Transient F");
    const companyId = await newCompany(owner);
    const path = `/api/companies/${companyId}/webhooks`;
    expect((await call("GET", path, { key: owner.key })).status).toBe(200);
    // The insert of the endpoint succeeds; its answer is lost.
    await plan({ seed: 13, d1: 1, after: 1, scopes: ["fetch"], budget: { d1: 1 }, sql: 'insert into "webhook_endpoints"' });
    const body = { url: "http://127.0.0.1:4010/hooks/transient-f", events: ["invoice.accepted"] };
    const headers = { "Idempotency-Key": "transient-webhook-1" };
    const lost = await call("POST", path, { key: owner.key, json: body, headers });
    expectError(lost, 500, "INTERNAL");
    await plan({});
    const stored = (await call("GET", path, { key: owner.key })).body.data;
    expect(stored).toHaveLength(1);
    const retried = await call("POST", path, { key: owner.key, json: body, headers });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body.id).toBe(stored[0].id);
    expect(retried.body.secret).toMatch(/^whsec_/);
    const replayed = await call("POST", path, { key: owner.key, json: body, headers });
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replayed.body).toMatchObject({ id: stored[0].id, secret: retried.body.secret });
    expect((await call("GET", path, { key: owner.key })).body.data).toHaveLength(1);
    // The secret the retry answered is the one deliveries are signed with.
    expect(await signingSecrets(env, await getEndpoint(createDb(env.DB), companyId, stored[0].id))).toEqual([retried.body.secret]);
  });

  it("which errors count as transient: retryable or overloaded, on the error or its causes; anything else stays 500", () => {
    const retryable = Object.assign(new Error("Durable Object reset because its code was updated."), { retryable: true });
    const overloaded = Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { overloaded: true, retryable: false });
    expect(transientFailure(retryable)).toEqual({ overloaded: false });
    expect(transientFailure(overloaded)).toEqual({ overloaded: true });
    expect(transientFailure(new Error("Failed query: select 1", { cause: retryable }))).toEqual({ overloaded: false });
    expect(transientFailure(new Error("outer", { cause: new Error("Failed query", { cause: overloaded }) }))).toEqual({ overloaded: true });
    expect(transientFailure(new Error("UNIQUE constraint failed"))).toBeNull();
    expect(transientFailure(Object.assign(new Error("x"), { retryable: false, remote: true }))).toBeNull();
    expect(transientFailure("a string")).toBeNull();
    expect(transientFailure(null)).toBeNull();
    // a cycle of causes ends
    const a = new Error("a") as Error & { cause?: unknown };
    a.cause = a;
    expect(transientFailure(a)).toBeNull();
  });
});
