import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { companyEntry, forgetInDirectory, keyEntry } from "../../src/storage/db/control-directory";
import { authenticate, hashApiKey } from "../../src/accounts/access/api-keys";
import { ACCESS_CACHE_MS, forgetAccess } from "../../src/accounts/access/cache";
import { call, expectError, newKey, newCompany, newOwner } from "../helpers/api";

/**
 * The per-isolate cache of key and company lookups: a lookup is served from memory for
 * ACCESS_CACHE_MS, then from the key's and the company's control directory objects, which hold what
 * they read from D1 until told to forget; every change of access made through the API clears both at
 * once.
 * The clock is the `now` authenticate is given, so nothing here depends on how fast the machine is.
 */
const pepper = () => env.API_KEY_PEPPER!;

describe("key and company lookups are cached in the isolate", () => {
  it("a change made behind the API's back shows only when the entry expires and the key's directory object forgets", async () => {
    forgetAccess();
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const t0 = new Date(Date.now() + 60_000);
    const first = await authenticate(env, pepper(), owner.key, t0, companyId);
    expect(first).toMatchObject({ ok: true, company: { id: companyId, granted: false } });
    // Revoked directly in D1 (not through the API): the isolate does not know yet.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(t0.toISOString(), owner.apiKeyId).run();
    const cached = await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + ACCESS_CACHE_MS - 1), companyId);
    expect(cached).toMatchObject({ ok: true, company: { id: companyId, row: { id: companyId } } });
    // Expired in the isolate: the key's object still holds the row it read (no D1 read).
    const fromObject = await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + ACCESS_CACHE_MS + 1), companyId);
    expect(fromObject).toMatchObject({ ok: true });
    await forgetInDirectory(env, [keyEntry(await hashApiKey(pepper(), owner.key))]);
    forgetAccess();
    const expired = await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + ACCESS_CACHE_MS + 2), companyId);
    expect(expired).toEqual({ ok: false, reason: "REVOKED" });
  });

  it("a company first named while the key is cached is read once, then served from the cache", async () => {
    forgetAccess();
    const owner = await newOwner();
    const a = await newCompany(owner);
    const b = await newCompany(owner);
    const t0 = new Date(Date.now() + 60_000);
    expect(await authenticate(env, pepper(), owner.key, t0, a)).toMatchObject({ ok: true, company: { id: a } });
    expect(await authenticate(env, pepper(), owner.key, t0, b)).toMatchObject({ ok: true, company: { id: b, row: { id: b } } });
    await env.DB.prepare("UPDATE companies SET status = 'DELETED' WHERE id = ?").bind(b).run();
    expect(await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + 1), b)).toMatchObject({ company: { row: { status: "ACTIVE" } } });
    expect(await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + ACCESS_CACHE_MS + 1), b)).toMatchObject({ company: { row: { status: "ACTIVE" } } });
    await forgetInDirectory(env, [companyEntry(b)]);
    expect(await authenticate(env, pepper(), owner.key, new Date(t0.getTime() + 2 * ACCESS_CACHE_MS + 2), b)).toMatchObject({ company: { row: { status: "DELETED" } } });
  });

  it("unknown keys are not cached: a key created after a miss works at once", async () => {
    forgetAccess();
    const owner = await newOwner();
    const member = await newKey(owner.clientId, "MEMBER");
    await env.DB.prepare("UPDATE api_keys SET key_hash = 'moved' WHERE id = ?").bind(member.apiKeyId).run();
    expect(await authenticate(env, pepper(), member.key)).toEqual({ ok: false, reason: "UNKNOWN" });
    const hash = await hashApiKey(pepper(), member.key);
    await env.DB.prepare("UPDATE api_keys SET key_hash = ? WHERE id = ?").bind(hash, member.apiKeyId).run();
    expect(await authenticate(env, pepper(), member.key)).toMatchObject({ ok: true, principal: { apiKeyId: member.apiKeyId } });
  });
});

describe("changes through the API take effect at once in the isolate", () => {
  it("revoking a key", async () => {
    const owner = await newOwner();
    const admin = await newKey(owner.clientId, "ADMIN");
    expect((await call("GET", "/api/companies", { key: admin.key })).status).toBe(200);
    expect((await call("DELETE", `/api/api-keys/${admin.apiKeyId}`, { key: owner.key })).status).toBe(200);
    expectError(await call("GET", "/api/companies", { key: admin.key }), 401, "AUTH_INVALID_API_KEY");
  });

  it("withdrawing a MEMBER's grant", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    const member = await newKey(owner.clientId, "MEMBER");
    expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    expect((await call("GET", `/api/companies/${companyId}`, { key: member.key })).status).toBe(200);
    expect((await call("DELETE", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    expectError(await call("GET", `/api/companies/${companyId}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
  });

  it("deleting a company", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner);
    expect((await call("GET", `/api/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    expect((await call("DELETE", `/api/companies/${companyId}`, { key: owner.key })).status).toBe(200);
    expectError(await call("GET", `/api/companies/${companyId}`, { key: owner.key }), 404, "COMPANY_NOT_FOUND");
  });
});
