import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "smol-toml";
import { app } from "../../src/app";
import { ROUTE_REGISTRY } from "../../src/http/route";
import { forgetAccess } from "../../src/accounts/access/cache";
import { companyEntry, forgetInDirectory } from "../../src/storage/db/control-directory";
import { RATE_LIMITS, type RateLimitBinding } from "../../src/http/rate-limits";
import wranglerToml from "../../wrangler.toml?raw";
import { call, expectError, newCompany, newKey, newOwner, type Actor } from "../helpers/api";

type Toml = Record<string, any>;
const config = parse(wranglerToml) as Toml;

/** The app with one real limiter replaced by the tight one (3 requests a minute, vitest.config.ts). */
async function tight(binding: RateLimitBinding, method: string, path: string, key: string, body?: unknown) {
  const ctx = createExecutionContext();
  const init: RequestInit = { method, headers: { "X-Api-Key": key, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) }, body: body !== undefined ? JSON.stringify(body) : undefined };
  const res = await app.fetch(new Request(`http://localhost${path}`, init), { ...env, [binding]: env.TEST_TIGHT_LIMITER } as Env, ctx);
  await waitOnExecutionContext(ctx);
  const type = res.headers.get("Content-Type") ?? "";
  return { status: res.status, headers: res.headers, body: (type.includes("json") ? await res.json() : await res.text()) as any };
}

/**
 * The local limiter (miniflare's RateLimiterObject) counts in windows aligned to the wall clock's
 * minute, so a burst that straddles a boundary is counted in two windows and its fourth request
 * passes: CI on 2 busy cores once saw exactly that. Each burst that expects a 429 starts with at
 * least 20 s of its window left.
 */
async function freshWindow() {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((r) => setTimeout(r, left + 250));
}

function expectLimited(res: Awaited<ReturnType<typeof tight>>) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.headers.get("Retry-After")).toBe("60");
  expect(res.body.error.code).toBe("RATE_LIMITED");
  expect(res.body.error.request_id).toBe(res.headers.get("X-Request-Id"));
  expect(res.body.error.message).toMatch(/Retry after 60 seconds/);
}

let owner: Actor;
let admin: Actor;
let companyId: string;
let otherCompany: string;

beforeAll(async () => {
  owner = await newOwner("Rate limits");
  admin = await newKey(owner.clientId, "ADMIN");
  companyId = await newCompany(owner);
  otherCompany = await newCompany(owner);
});

describe("rate limit configuration", () => {
  it("both blocks of wrangler.toml declare the limits the OpenAPI document states, in distinct namespaces", () => {
    for (const block of [config, config.env.production]) {
      const declared = Object.fromEntries((block.ratelimits as Toml[]).map((r) => [r.name, { limit: r.simple.limit, period: r.simple.period }]));
      expect(declared).toEqual(Object.fromEntries(Object.entries(RATE_LIMITS).map(([name, l]) => [name, { limit: l.limit, period: l.period }])));
      const namespaces = (block.ratelimits as Toml[]).map((r) => r.namespace_id);
      expect(new Set(namespaces).size).toBe(namespaces.length);
    }
  });

  it("the OpenAPI document states every limit, and every authenticated operation documents 429", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const l of Object.values(RATE_LIMITS)) expect(doc.info.description).toContain(`| ${l.scope} | ${l.limit} | ${l.period} s |`);
    for (const r of ROUTE_REGISTRY.filter((x) => !x.public)) {
      const op = doc.paths[r.route.path][r.route.method];
      expect(op.responses["429"], `${r.route.method} ${r.route.path}`).toBeDefined();
    }
    expect(doc.paths["/api/companies/{company_id}/invoices"].post.description).toContain(`${RATE_LIMITS.ISSUANCE_RATE_LIMITER.limit} requests every 60 s per company`);
  });
});

describe("a burst over the limit gets 429 with Retry-After", () => {
  it("per API key: the fourth request of a key is refused, another key is not", async () => {
    const key = await newKey(owner.clientId, "ADMIN");
    await freshWindow();
    for (let i = 0; i < 3; i++) expect((await tight("API_KEY_RATE_LIMITER", "GET", "/api/companies", key.key)).status).toBe(200);
    expectLimited(await tight("API_KEY_RATE_LIMITER", "GET", "/api/companies", key.key));
    expectLimited(await tight("API_KEY_RATE_LIMITER", "GET", `/api/companies/${companyId}`, key.key));
    expect((await tight("API_KEY_RATE_LIMITER", "GET", "/api/companies", admin.key)).status).toBe(200);
  });

  it("per company: all keys share it, other companies are unaffected, and another client's refused calls spend none of it", async () => {
    const stranger = await newOwner("Rate limits stranger");
    await freshWindow();
    for (let i = 0; i < 5; i++) expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${companyId}/settings`, stranger.key)).status).toBe(403);
    expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${companyId}/settings`, owner.key)).status).toBe(200);
    expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${companyId}`, admin.key)).status).toBe(200);
    expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${companyId}/invoices`, owner.key)).status).toBe(200);
    expectLimited(await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${companyId}/settings`, admin.key));
    expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${otherCompany}/settings`, admin.key)).status).toBe(200);
  });

  it("issuance has its own limit per company; reading documents does not spend it", async () => {
    const company = await newCompany(owner);
    await freshWindow();
    for (let i = 0; i < 3; i++) expect((await tight("ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${company}/invoices`, owner.key, {})).status).toBe(400);
    expectLimited(await tight("ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${company}/invoices`, admin.key, {}));
    expect((await tight("ISSUANCE_RATE_LIMITER", "GET", `/api/companies/${company}/invoices`, owner.key)).status).toBe(200);
    expect((await tight("ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${otherCompany}/invoices`, owner.key, {})).status).toBe(400);
  });
});

describe("the high-volume tier (companies.rate_tier, set by the operator)", () => {
  /**
   * What `npm run companies:tier` does (a D1 write from outside the Worker), with the company's
   * control directory object told at once: left alone it shows the change within its safety TTL
   * (DIRECTORY_TTL_MS, docs/architecture.md "Caches"), then every isolate within 5 s.
   */
  const setTier = async (id: string, tier: "STANDARD" | "HIGH_VOLUME") => {
    await env.DB.prepare("UPDATE companies SET rate_tier = ? WHERE id = ?").bind(tier, id).run();
    await forgetInDirectory(env, [companyEntry(id)]);
    forgetAccess();
  };

  it("a new company is STANDARD; the tier is not something the API takes", async () => {
    const company = await newCompany(owner);
    const row = await env.DB.prepare("SELECT rate_tier FROM companies WHERE id = ?").bind(company).first<{ rate_tier: string }>();
    expect(row!.rate_tier).toBe("STANDARD");
    const res = await call("PATCH", `/api/companies/${company}/settings`, { key: owner.key, json: { rate_tier: "HIGH_VOLUME" } });
    expectError(res, 400, "VALIDATION_FAILED");
  });

  it("a high-volume company's issuance is counted by its own binding, not the standard one; standard companies are not", async () => {
    const big = await newCompany(owner);
    await setTier(big, "HIGH_VOLUME");
    await freshWindow();
    // The standard issuance limiter no longer counts it ...
    for (let i = 0; i < 5; i++) expect((await tight("ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${big}/invoices`, owner.key, {})).status).toBe(400);
    // ... the high-volume one does, and states its own limit.
    for (let i = 0; i < 3; i++) expect((await tight("HIGH_VOLUME_ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${big}/invoices`, owner.key, {})).status).toBe(400);
    const refused = await tight("HIGH_VOLUME_ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${big}/invoices`, admin.key, {});
    expectLimited(refused);
    expect(refused.body.error.message).toContain(`at most ${RATE_LIMITS.HIGH_VOLUME_ISSUANCE_RATE_LIMITER.limit} every 60 seconds`);
    const standard = await newCompany(owner);
    for (let i = 0; i < 5; i++) expect((await tight("HIGH_VOLUME_ISSUANCE_RATE_LIMITER", "POST", `/api/companies/${standard}/invoices`, owner.key, {})).status).toBe(400);
  });

  it("the company-wide limit follows the tier too, and back to STANDARD restores the standard limiters", async () => {
    const big = await newCompany(owner);
    await setTier(big, "HIGH_VOLUME");
    await freshWindow();
    for (let i = 0; i < 5; i++) expect((await tight("COMPANY_RATE_LIMITER", "GET", `/api/companies/${big}/settings`, owner.key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await tight("HIGH_VOLUME_COMPANY_RATE_LIMITER", "GET", `/api/companies/${big}/settings`, owner.key)).status).toBe(200);
    expectLimited(await tight("HIGH_VOLUME_COMPANY_RATE_LIMITER", "GET", `/api/companies/${big}/settings`, owner.key));
    await setTier(big, "STANDARD");
    for (let i = 0; i < 5; i++) expect((await tight("HIGH_VOLUME_COMPANY_RATE_LIMITER", "GET", `/api/companies/${big}/settings`, owner.key)).status).toBe(200);
  });

  it("the high-volume issuance limit carries the largest customer's peak (2,100 a minute) with room", () => {
    expect(RATE_LIMITS.HIGH_VOLUME_ISSUANCE_RATE_LIMITER.limit).toBeGreaterThanOrEqual(2 * 2_100);
    expect(RATE_LIMITS.HIGH_VOLUME_COMPANY_RATE_LIMITER.limit).toBeGreaterThan(RATE_LIMITS.HIGH_VOLUME_ISSUANCE_RATE_LIMITER.limit);
  });
});

describe("request body size limits per operation", () => {
  it("every operation with a body has a limit, stated in its description with 413 documented", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const r of ROUTE_REGISTRY.filter((x) => x.route.request?.body)) {
      expect(r.maxBodyBytes, `${r.route.method} ${r.route.path}`).toBeGreaterThan(0);
      const op = doc.paths[r.route.path][r.route.method];
      expect(op.description).toContain(`Request body: at most ${r.maxBodyBytes} bytes`);
      expect(op.responses["413"].content["application/json"].schema.properties.error.properties.code.enum).toContain("PAYLOAD_TOO_LARGE");
    }
  });

  it("a JSON body over its operation's limit is 413 in the envelope, before it is read", async () => {
    const big = { decimal_places: 2, language: "x".repeat(70 * 1024) };
    expectError(await call("PATCH", `/api/companies/${companyId}/settings`, { key: owner.key, json: big }), 413, "PAYLOAD_TOO_LARGE");
    // The same size is fine where the operation allows more (issuance): it fails validation instead.
    const issued = await call("POST", `/api/companies/${companyId}/invoices`, { key: owner.key, json: { invoice_type: "33", note: "x".repeat(70 * 1024) } });
    expect(issued.status).toBe(400);
  });

  it("a multipart upload over its limit is 413 (certificate: 64 KiB file)", async () => {
    const form = new FormData();
    form.append("certificate", new File([new Uint8Array(200 * 1024)], "big.pfx"));
    form.append("password", "x");
    expectError(await call("POST", `/api/companies/${companyId}/certificates`, { key: owner.key, body: form }), 413, "PAYLOAD_TOO_LARGE");
  });
});
