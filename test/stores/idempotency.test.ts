import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { indexStore } from "../../src/storage/db/document-store";
import { idempotencyKeys } from "../../src/storage/db/schema";
import { call, companyBody, newOwner } from "../helpers/api";

/** Idempotency-Key records live in the client's index store of each mode. */
const records = (ownerId: string) => indexStore(env, ownerId).select().from(idempotencyKeys).orderBy(idempotencyKeys.key);

describe("Idempotency-Key records in the client's index store", () => {
  it("are written to the store of the client and mode", async () => {
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
});
