import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, expectError, newCompany, newKey, newOwner } from "../helpers/api";
import { register, receiverUrl } from "./helpers";
import { webhookUrlProblem } from "../../src/webhooks/url-policy";
import { activeEndpoints, ENDPOINT_CACHE_MS } from "../../src/webhooks/endpoint-cache";
import { createDb } from "../../src/storage/db/client";

describe("URL policy in production", () => {
  it("https only, and no loopback, private, link-local, metadata or reserved hosts", () => {
    for (const url of ["http://127.0.0.1:4010/h", "https://127.0.0.1/h", "https://localhost/h", "https://[::1]/h", "https://[fe80::1]/h", "https://[::ffff:10.1.2.3]/h", "https://100.64.0.1/h", "https://0.0.0.0/h", "https://224.0.0.1/h", "https://api.localhost/h", "https://db.internal/h"]) {
      expect(webhookUrlProblem(url, true), url).not.toBeNull();
    }
    expect(webhookUrlProblem("http://erp.example.com/h", true)).toBe("only https URLs are allowed");
    expect(webhookUrlProblem("https://erp.example.com/hooks/dte?x=1", true)).toBeNull();
    expect(webhookUrlProblem("https://203.0.113.7:8443/h", true)).toBeNull();
  });
});

describe("webhook endpoints", () => {
  it("register, read, change and delete; the secret is shown once and stored sealed", async () => {
    const owner = await newOwner("Webhooks CRUD");
    const companyId = await newCompany(owner);
    const { url } = receiverUrl("crud");
    const created = await register(owner, companyId, { url, events: ["invoice.accepted", "ENU"], description: "ERP" });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ url, events: ["invoice.accepted", "ENU"], description: "ERP", enabled: true, disabled_reason: null, previous_secret_expires_at: null });

    const got = await call("GET", `/api/companies/${companyId}/webhooks/${created.id}`, { key: owner.key });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("secret");
    const row = await env.DB.prepare("SELECT secret_enc FROM webhook_endpoints WHERE id = ?").bind(created.id).first<{ secret_enc: string }>();
    expect(row!.secret_enc).not.toContain(created.secret.slice(6, 20));

    const list = await call("GET", `/api/companies/${companyId}/webhooks`, { key: owner.key });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([created.id]);

    const changed = await call("PATCH", `/api/companies/${companyId}/webhooks/${created.id}`, { key: owner.key, json: { events: ["*"], enabled: false } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ events: ["*"], enabled: false, disabled_reason: "Disabled by the client" });

    const deleted = await call("DELETE", `/api/companies/${companyId}/webhooks/${created.id}`, { key: owner.key });
    expect(deleted.body).toEqual({ id: created.id, deleted: true, livemode: false });
    expectError(await call("GET", `/api/companies/${companyId}/webhooks/${created.id}`, { key: owner.key }), 404, "WEBHOOK_NOT_FOUND");
  });

  it("rotation: a new secret, the previous one signing beside it for 24 hours", async () => {
    const owner = await newOwner("Webhooks rotate");
    const companyId = await newCompany(owner);
    const created = await register(owner, companyId, { url: receiverUrl("rotate").url, events: ["*"] });
    const rotated = await call("POST", `/api/companies/${companyId}/webhooks/${created.id}/rotate-secret`, { key: owner.key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3_600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it("refuses URLs that cannot receive webhooks, unknown events and malformed bodies, with clear codes", async () => {
    const owner = await newOwner("Webhooks bad input");
    const companyId = await newCompany(owner);
    const post = (json: unknown) => call("POST", `/api/companies/${companyId}/webhooks`, { key: owner.key, json });
    for (const url of [
      "http://erp.example.com/hook", // http outside loopback
      "https://10.0.0.5/hook",
      "https://192.168.1.10/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[fd00::1]/hook",
      "https://user:pass@erp.example.com/hook",
      "https://metadata.google.internal/computeMetadata",
      "https://intranet/hook",
      "ftp://erp.example.com/hook",
      "not a url",
    ]) {
      const res = await post({ url, events: ["*"] });
      expectError(res, 400, "WEBHOOK_URL_INVALID");
      expect(res.body.error.details[0].field).toBe("url");
    }
    const unknown = await post({ url: "https://erp.example.com/hook", events: ["invoice.accepted", "invoice.exploded"] });
    expectError(unknown, 400, "WEBHOOK_EVENT_UNKNOWN");
    expect(unknown.body.error.message).toContain("invoice.exploded");
    expect(unknown.body.error.details).toEqual([{ field: "events", message: "unknown event type invoice.exploded" }]);
    const misspelt = await post({ url: "https://erp.example.com/hook", events: ["invoice.acepted"] });
    expect(misspelt.body.error.details).toEqual([{ field: "events", message: "unknown event type invoice.acepted (did you mean `invoice.accepted`?)" }]);
    const family = await post({ url: "https://erp.example.com/hook", events: ["invoice.*", "invoice.accepted", "received_document.*", "ENU"] });
    expect(family.status).toBe(201);
    expect(family.body.events).toEqual(["invoice.*", "received_document.*", "ENU"]); // invoice.accepted is in its family
    const badFamily = await post({ url: "https://erp.example.com/hook", events: ["invoices.*", "webhook.*"] });
    expectError(badFamily, 400, "WEBHOOK_EVENT_UNKNOWN");
    expect(badFamily.body.error.details).toEqual([
      { field: "events", message: "unknown event family invoices.* (did you mean `invoice.*`?)" },
      { field: "events", message: expect.stringMatching(/^unknown event family webhook\.\*/) },
    ]);
    expectError(await post({ url: "https://erp.example.com/hook", events: [] }), 400, "VALIDATION_FAILED");
    expectError(await post({ events: ["*"] }), 400, "VALIDATION_FAILED");
    expect((await post({ url: "https://erp.example.com/hook", events: ["*"] })).status).toBe(201);
    expect((await post({ url: "http://localhost:3000/hook", events: ["*"] })).status).toBe(201);
  });

  it("MEMBER keys read only; another client's endpoints and deliveries are out of reach", async () => {
    const owner = await newOwner("Webhooks roles");
    const companyId = await newCompany(owner);
    const created = await register(owner, companyId, { url: receiverUrl("roles").url, events: ["*"] });
    const member = await newKey(owner.clientId, "MEMBER");
    await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key });
    expect((await call("GET", `/api/companies/${companyId}/webhooks`, { key: member.key })).status).toBe(200);
    expectError(await call("POST", `/api/companies/${companyId}/webhooks`, { key: member.key, json: { url: receiverUrl("m").url, events: ["*"] } }), 403, "AUTH_ROLE_FORBIDDEN");
    expectError(await call("POST", `/api/companies/${companyId}/webhooks/${created.id}/rotate-secret`, { key: member.key }), 403, "AUTH_ROLE_FORBIDDEN");

    const stranger = await newOwner("Webhooks stranger");
    const theirs = await newCompany(stranger);
    expectError(await call("GET", `/api/companies/${companyId}/webhooks/${created.id}`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    expectError(await call("GET", `/api/companies/${companyId}/webhook-deliveries`, { key: stranger.key }), 403, "AUTH_COMPANY_ACCESS_DENIED");
    // through their own company, our endpoint id does not exist
    expectError(await call("GET", `/api/companies/${theirs}/webhooks/${created.id}`, { key: stranger.key }), 404, "WEBHOOK_NOT_FOUND");
    expectError(await call("DELETE", `/api/companies/${theirs}/webhooks/${created.id}`, { key: stranger.key }), 404, "WEBHOOK_NOT_FOUND");
    expectError(await call("POST", `/api/companies/${theirs}/webhooks/${created.id}/redeliver`, { key: stranger.key, json: { failed_since: "2026-01-01T00:00:00Z" } }), 404, "WEBHOOK_NOT_FOUND");
  });

  it("the OpenAPI document lists every event of the catalogue under webhooks", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(Object.keys(doc.webhooks).sort()).toEqual(
      ["ENU", "batch.completed", "certificate.expiring", "cession.rejected", "invoice.ceded", "received_document.ceded", "invoice.accepted", "invoice.accepted_with_objections", "invoice.buyer_delivery", "invoice.buyer_reply", "invoice.buyer_response", "invoice.failed", "invoice.rejected", "invoice.sent", "webhook.test", "webhook_endpoint.disabled",
        "received_document.received", "received_document.verification_failed", "received_document.deadline_approaching", "received_document.deadline_passed", "received_document.response_recorded", "received_document.response_refused", "received_document.reply_mail_failed", "inbound_message.no_documents"].sort(),
    );
    expect(doc.webhooks["invoice.accepted"].post.tags).toEqual(["Webhooks"]);
  });
});

describe("the per-isolate cache of a company's endpoints (issue 16)", () => {
  it("every endpoint write in this isolate is seen at once: create, disable, enable, rotate, delete", async () => {
    const owner = await newOwner("Webhooks cache");
    const companyId = await newCompany(owner);
    const db = createDb(env.DB);
    expect(await activeEndpoints(db, companyId)).toEqual([]);
    const { url } = receiverUrl("cache");
    const hook = await register(owner, companyId, { url, events: ["ENU"] });
    expect((await activeEndpoints(db, companyId)).map((e) => e.id)).toEqual([hook.id]);
    const base = `/api/companies/${companyId}/webhooks/${hook.id}`;
    expect((await call("PATCH", base, { key: owner.key, json: { enabled: false } })).status).toBe(200);
    expect(await activeEndpoints(db, companyId)).toEqual([]);
    expect((await call("PATCH", base, { key: owner.key, json: { enabled: true } })).status).toBe(200);
    const before = (await activeEndpoints(db, companyId))[0]!;
    expect((await call("POST", `${base}/rotate-secret`, { key: owner.key })).status).toBe(200);
    expect((await activeEndpoints(db, companyId))[0]!.secretEnc).not.toBe(before.secretEnc);
    expect((await call("DELETE", base, { key: owner.key })).status).toBe(200);
    expect(await activeEndpoints(db, companyId)).toEqual([]);
  });

  it("a write made elsewhere (another isolate, here straight into D1) is seen once the entry's ENDPOINT_CACHE_MS is over", async () => {
    const owner = await newOwner("Webhooks cache TTL");
    const companyId = await newCompany(owner);
    const db = createDb(env.DB);
    const hook = await register(owner, companyId, { url: receiverUrl("cache-ttl").url, events: ["ENU"] });
    const t0 = Date.now();
    expect(await activeEndpoints(db, companyId, t0)).toHaveLength(1);
    await env.DB.prepare("UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?").bind(hook.id).run();
    expect(await activeEndpoints(db, companyId, t0 + ENDPOINT_CACHE_MS - 1)).toHaveLength(1);
    expect(await activeEndpoints(db, companyId, t0 + ENDPOINT_CACHE_MS)).toEqual([]);
  });
});
