import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { indexStore } from "../../src/db/document-store";
import { idempotencyKeys } from "../../src/db/schema";
import { recheckLegacyRecords } from "../../src/http/middleware/idempotency";
import { call, companyBody, expectError, newOwner } from "../helpers/api";

/**
 * Idempotency-Key records live in the client's index store (issue 16), not in D1; records made before
 * they moved are still honoured from D1 until they expire.
 */
const records = (ownerId: string) => indexStore(env, ownerId).select().from(idempotencyKeys).orderBy(idempotencyKeys.key);
const d1Records = async (clientId: string) => (await env.DB.prepare("SELECT key FROM idempotency_keys WHERE client_id = ?").bind(clientId).all()).results;

describe("Idempotency-Key records in the client's index store", () => {
  it("are written to the store of the client and mode, never to D1", async () => {
    const test = await newOwner();
    const live = await newOwner(undefined, true);
    const body = companyBody();
    const first = await call("POST", "/api/companies", { key: test.key, json: body, headers: { "Idempotency-Key": "k-1" } });
    expect(first.status).toBe(201);
    const again = await call("POST", "/api/companies", { key: test.key, json: body, headers: { "Idempotency-Key": "k-1" } });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await call("POST", "/api/companies", { key: live.key, json: companyBody(), headers: { "Idempotency-Key": "k-1" } })).status).toBe(201);
    expect(await records(test.clientId)).toMatchObject([{ clientId: test.clientId, key: "k-1", state: "COMPLETED", responseStatus: 201 }]);
    expect(await records(`${live.clientId}:live`)).toMatchObject([{ clientId: `${live.clientId}:live`, key: "k-1", state: "COMPLETED" }]);
    expect(await d1Records(test.clientId)).toEqual([]);
    expect(await d1Records(`${live.clientId}:live`)).toEqual([]);
  });

  it("a claim purges the store's expired records, and an expired key is claimed afresh", async () => {
    const owner = await newOwner();
    const store = indexStore(env, owner.clientId);
    await store.insert(idempotencyKeys).values([
      { clientId: owner.clientId, key: "old-1", scope: "POST /x", fingerprint: "f", state: "COMPLETED", responseStatus: 201, responseBody: "{}", expiresAt: "2000-01-01T00:00:00.000Z" },
      { clientId: owner.clientId, key: "reuse", scope: "POST /x", fingerprint: "other", state: "COMPLETED", responseStatus: 201, responseBody: "{}", expiresAt: "2000-01-01T00:00:00.000Z" },
    ]);
    const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody(), headers: { "Idempotency-Key": "reuse" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await records(owner.clientId)).map((r) => [r.key, r.state])).toEqual([["reuse", "COMPLETED"]]);
  });

  it("a record made in D1 before the move is still honoured, and adopted by the store", async () => {
    const owner = await newOwner();
    const body = companyBody();
    const first = await call("POST", "/api/companies", { key: owner.key, json: body, headers: { "Idempotency-Key": "before-move" } });
    expect(first.status).toBe(201);
    // Move the record back to D1, as it would be had it been made before the deploy.
    const [row] = await records(owner.clientId);
    await indexStore(env, owner.clientId).delete(idempotencyKeys).where(eq(idempotencyKeys.key, "before-move"));
    await env.DB.prepare("INSERT INTO idempotency_keys (client_id, key, scope, fingerprint, state, response_status, response_body, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(row!.clientId, row!.key, row!.scope, row!.fingerprint, row!.state, row!.responseStatus, row!.responseBody, row!.createdAt, row!.expiresAt)
      .run();
    // D1 was empty a moment ago, and isolates trust that for a minute (in production D1 only drains).
    recheckLegacyRecords();
    const replay = await call("POST", "/api/companies", { key: owner.key, json: body, headers: { "Idempotency-Key": "before-move" } });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(await records(owner.clientId)).toMatchObject([{ key: "before-move", fingerprint: row!.fingerprint }]);
    expectError(await call("POST", "/api/companies", { key: owner.key, json: companyBody(), headers: { "Idempotency-Key": "before-move" } }), 409, "IDEMPOTENCY_KEY_REUSED");
  });
});
