import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, newCompany, newKey, newOwner, type Actor } from "../helpers/api";

let owner: Actor;
beforeAll(async () => {
  owner = await newOwner("Users");
});

async function newUser(actor: Actor, email = `u${crypto.randomUUID().slice(0, 8)}@example.cl`) {
  const res = await call("POST", "/api/users", { key: actor.key, json: { email, name: "Ana Pérez" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; email: string };
}

describe("users and API keys", () => {
  it("GET /api/me returns the principal", async () => {
    const companyId = await newCompany(owner);
    const me = await call("GET", "/api/me", { key: owner.key });
    expect(me.body).toEqual({ apiKeyId: owner.apiKeyId, clientId: owner.clientId, role: "OWNER", livemode: false, accessibleCompanyIds: expect.arrayContaining([companyId]) });
  });

  it("creates, lists and gets users; e-mails are unique per client, case-insensitively", async () => {
    const u = await newUser(owner, "Maria@Example.cl");
    expect(u.email).toBe("maria@example.cl");
    expect((await call("GET", `/api/users/${u.id}`, { key: owner.key })).body).toMatchObject({ id: u.id, status: "ACTIVE", revoked_at: null });
    expectError(await call("POST", "/api/users", { key: owner.key, json: { email: "MARIA@example.cl", name: "Dup" } }), 409, "USER_EMAIL_TAKEN");
    const list = await call("GET", "/api/users?per_page=100", { key: owner.key });
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(u.id);
    // another client may use the same e-mail and cannot see this user
    const other = await newOwner();
    expect((await call("POST", "/api/users", { key: other.key, json: { email: "maria@example.cl", name: "Other" } })).status).toBe(201);
    expectError(await call("GET", `/api/users/${u.id}`, { key: other.key }), 404, "USER_NOT_FOUND");
  });

  it.each([
    [{ email: "not-an-email", name: "X" }, "email"],
    [{ email: "a@b.cl", name: "" }, "name"],
    [{ email: "a@b.cl", name: "x".repeat(121) }, "name"],
    [{ name: "X" }, "email"],
  ])("rejects user %j naming %s", async (body, field) => {
    const res = await call("POST", "/api/users", { key: owner.key, json: body });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details[0].field).toBe(field);
  });

  it("a key is shown once, works at once, is listed by prefix only and keeps last-used time", async () => {
    const u = await newUser(owner);
    const created = await call("POST", `/api/users/${u.id}/api-keys`, { key: owner.key, json: { name: "ERP", role: "ADMIN" } });
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^dte_test_[0-9A-Za-z]{40}$/);
    expect(created.body.api_key.startsWith(created.body.prefix)).toBe(true);
    expect((await call("GET", "/api/me", { key: created.body.api_key })).body.role).toBe("ADMIN");
    const list = await call("GET", `/api/api-keys?user_id=${u.id}`, { key: owner.key });
    expect(list.body.total).toBe(1);
    expect(list.body.data[0]).toMatchObject({ id: created.body.id, prefix: created.body.prefix, role: "ADMIN", user_id: u.id });
    expect(JSON.stringify(list.body)).not.toContain(created.body.api_key);
    expect(list.body.data[0].last_used_at).toMatch(/^\d{4}-/);
  });

  it("a revoked key answers 401 from then on; revoking twice is harmless", async () => {
    const admin = await newKey(owner.clientId, "ADMIN");
    expect((await call("GET", "/api/me", { key: admin.key })).status).toBe(200);
    const r = await call("DELETE", `/api/api-keys/${admin.apiKeyId}`, { key: owner.key });
    expect(r.status).toBe(200);
    expect(r.body.revoked_at).toMatch(/^\d{4}-/);
    expectError(await call("GET", "/api/me", { key: admin.key }), 401, "AUTH_INVALID_API_KEY");
    expect((await call("DELETE", `/api/api-keys/${admin.apiKeyId}`, { key: owner.key })).status).toBe(200);
  });

  it("revoking a user revokes all their keys", async () => {
    const u = await newUser(owner);
    const k1 = (await call("POST", `/api/users/${u.id}/api-keys`, { key: owner.key, json: { name: "a", role: "MEMBER" } })).body.api_key;
    const k2 = (await call("POST", `/api/users/${u.id}/api-keys`, { key: owner.key, json: { name: "b", role: "ADMIN" } })).body.api_key;
    const res = await call("DELETE", `/api/users/${u.id}`, { key: owner.key });
    expect(res.body.status).toBe("REVOKED");
    expectError(await call("GET", "/api/me", { key: k1 }), 401, "AUTH_INVALID_API_KEY");
    expectError(await call("GET", "/api/me", { key: k2 }), 401, "AUTH_INVALID_API_KEY");
    expectError(await call("POST", `/api/users/${u.id}/api-keys`, { key: owner.key, json: { name: "c", role: "MEMBER" } }), 409, "USER_REVOKED");
  });

  it("role matrix: ADMIN manages ADMIN and MEMBER keys but not OWNER keys; MEMBER manages nothing", async () => {
    const admin = await newKey(owner.clientId, "ADMIN");
    const member = await newKey(owner.clientId, "MEMBER");
    const u = await newUser(admin);
    expect((await call("POST", `/api/users/${u.id}/api-keys`, { key: admin.key, json: { name: "m", role: "MEMBER" } })).status).toBe(201);
    expectError(await call("POST", `/api/users/${u.id}/api-keys`, { key: admin.key, json: { name: "o", role: "OWNER" } }), 403, "AUTH_ROLE_FORBIDDEN");
    const secondOwner = await newKey(owner.clientId, "OWNER");
    expectError(await call("DELETE", `/api/api-keys/${secondOwner.apiKeyId}`, { key: admin.key }), 403, "AUTH_ROLE_FORBIDDEN");
    expectError(await call("POST", "/api/users", { key: member.key, json: { email: "m@x.cl", name: "M" } }), 403, "AUTH_ROLE_FORBIDDEN");
    expectError(await call("GET", "/api/api-keys", { key: member.key }), 403, "AUTH_ROLE_FORBIDDEN");
    // a user holding an OWNER key can only be revoked by an OWNER
    const ou = await newUser(owner);
    await call("POST", `/api/users/${ou.id}/api-keys`, { key: owner.key, json: { name: "o", role: "OWNER" } });
    expectError(await call("DELETE", `/api/users/${ou.id}`, { key: admin.key }), 403, "AUTH_ROLE_FORBIDDEN");
    expect((await call("DELETE", `/api/users/${ou.id}`, { key: owner.key })).status).toBe(200);
  });

  it("the last active OWNER key cannot be revoked", async () => {
    const solo = await newOwner();
    expectError(await call("DELETE", `/api/api-keys/${solo.apiKeyId}`, { key: solo.key }), 409, "API_KEY_LAST_OWNER");
    const second = await newKey(solo.clientId, "OWNER");
    expect((await call("DELETE", `/api/api-keys/${solo.apiKeyId}`, { key: second.key })).status).toBe(200);
    expectError(await call("GET", "/api/me", { key: solo.key }), 401, "AUTH_INVALID_API_KEY");
  });

  it("grants: MEMBER keys reach granted companies only; grants apply to MEMBER keys; other clients' companies are refused", async () => {
    const a = await newCompany(owner);
    const b = await newCompany(owner);
    const member = await newKey(owner.clientId, "MEMBER");
    expectError(await call("GET", `/api/companies/${a}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    const g = await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${a}`, { key: owner.key });
    expect(g.body.company_ids).toEqual([a]);
    expect((await call("GET", `/api/companies/${a}`, { key: member.key })).status).toBe(200);
    expectError(await call("GET", `/api/companies/${b}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expect((await call("GET", "/api/me", { key: member.key })).body.accessibleCompanyIds).toEqual([a]);
    // granting twice is harmless
    expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${a}`, { key: owner.key })).body.company_ids).toEqual([a]);
    const u = await call("DELETE", `/api/api-keys/${member.apiKeyId}/companies/${a}`, { key: owner.key });
    expect(u.body.company_ids).toEqual([]);
    expectError(await call("GET", `/api/companies/${a}`, { key: member.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    const admin = await newKey(owner.clientId, "ADMIN");
    expectError(await call("PUT", `/api/api-keys/${admin.apiKeyId}/companies/${a}`, { key: owner.key }), 400, "API_KEY_GRANT_NOT_APPLICABLE");
    const foreign = await newCompany(await newOwner());
    expectError(await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${foreign}`, { key: owner.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expectError(await call("PUT", `/api/api-keys/key_nope/companies/${a}`, { key: owner.key }), 404, "API_KEY_NOT_FOUND");
    // a deleted company disappears from a MEMBER's reach
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${b}`, { key: owner.key });
    await call("DELETE", `/api/companies/${b}`, { key: owner.key });
    expect((await call("GET", "/api/me", { key: member.key })).body.accessibleCompanyIds).toEqual([]);
  });

  it("a MEMBER key may read granted companies but not change them", async () => {
    const c = await newCompany(owner);
    const member = await newKey(owner.clientId, "MEMBER");
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${c}`, { key: owner.key });
    expectError(await call("DELETE", `/api/companies/${c}`, { key: member.key }), 403, "AUTH_ROLE_FORBIDDEN");
    expectError(await call("POST", `/api/companies/${c}/logo`, { key: member.key, body: new FormData() }), 403, "AUTH_ROLE_FORBIDDEN");
  });
});
