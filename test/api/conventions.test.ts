import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { CRON_JOBS } from "../../src/operations/scheduled";
import { ERROR_CODES } from "../../src/lib/errors";
import { TAGS } from "../../src/http/openapi/document";
import { ROUTE_REGISTRY } from "../../src/http/route";
import { call, companyBody, expectError, newOwner } from "../helpers/api";
import wranglerToml from "../../wrangler.toml?raw";

describe("errors and conventions", () => {
  it("malformed JSON -> 400 MALFORMED_JSON", async () => {
    const owner = await newOwner();
    const res = await call("POST", "/api/companies", { key: owner.key, body: '{"legal_name": ', headers: { "Content-Type": "application/json" } });
    expectError(res, 400, "MALFORMED_JSON");
  });

  it("wrong content type -> 415", async () => {
    const owner = await newOwner();
    const res = await call("POST", "/api/companies", { key: owner.key, body: "legal_name=x", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
    expectError(await call("POST", "/api/companies", { key: owner.key, body: "x", headers: { "Content-Type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("a body over 2 MiB -> 413", async () => {
    const owner = await newOwner();
    const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody({ legal_name: "x".repeat(2 * 1024 * 1024 + 10) }) });
    expectError(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("unknown route -> 404 ROUTE_NOT_FOUND; wrong method -> 405 with Allow", async () => {
    const owner = await newOwner();
    expectError(await call("GET", "/api/nothing-here", { key: owner.key }), 404, "ROUTE_NOT_FOUND");
    expectError(await call("GET", "/nothing"), 404, "ROUTE_NOT_FOUND");
    // Under /api/ the key comes first: without a valid one, a path that is no operation says so (401), not which paths exist.
    expectError(await call("GET", "/api/nothing-here"), 401, "AUTH_MISSING_API_KEY");
    expectError(await call("GET", "/api/companies/./webhooks/whk_x/rotate-secret", { key: "dte_test_notakey" }), 401, "AUTH_INVALID_API_KEY");
    const res = await call("PUT", "/api/companies", { key: owner.key, json: {} });
    expectError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.get("Allow")).toBe("POST, GET");
    const del = await call("POST", "/api/companies/cmp_x/settings", { key: owner.key, json: {} });
    expectError(del, 405, "METHOD_NOT_ALLOWED");
    expect(del.headers.get("Allow")).toContain("PATCH");
  });

  it("X-Request-Id: generated, or the caller's own when sane", async () => {
    const own = await call("GET", "/health", { headers: { "X-Request-Id": "trace-abc-12345" } });
    expect(own.headers.get("X-Request-Id")).toBe("trace-abc-12345");
    const bad = await call("GET", "/health", { headers: { "X-Request-Id": "<script>" } });
    expect(bad.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it("an unexpected failure is a generic 500 in the envelope, without internals", async () => {
    const owner = await newOwner();
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args.join(" "));
    try {
      await env.DB.exec("ALTER TABLE company_settings RENAME TO company_settings_gone");
      const res = await call("POST", "/api/companies", { key: owner.key, json: companyBody() });
      expectError(res, 500, "INTERNAL");
      expect(res.body.error.message).toBe("An unexpected error occurred. Quote the request_id to support.");
      expect(JSON.stringify(res.body)).not.toMatch(/company_settings|SQLITE|stack|at /i);
      expect(errors.some((e) => e.includes(res.body.error.request_id))).toBe(true);
      // nothing half-written: the company insert was in the same batch as the failed settings insert
      const n = await env.DB.prepare("SELECT count(*) AS n FROM companies WHERE client_id = ?").bind(owner.clientId).first<{ n: number }>();
      expect(n!.n).toBe(0);
    } finally {
      console.error = original;
      await env.DB.exec("ALTER TABLE company_settings_gone RENAME TO company_settings");
    }
  });

  it("health answers without a key", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", sii_mode: "simulator" });
  });
});

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1, version 1.0.0, with the spec's tags and the X-Api-Key scheme", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual([...TAGS]);
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
    for (const item of Object.values(doc.paths) as Record<string, { tags: string[] }>[]) {
      for (const op of Object.values(item)) for (const tag of op.tags) expect(TAGS).toContain(tag);
    }
    // Every error code, with its status, in one schema of the reference; the introduction points at the guides.
    expect(doc.components.schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_CODES));
    for (const [code, { status }] of Object.entries(ERROR_CODES)) expect(doc.components.schemas.ErrorCode.description).toContain(`| ${status} | \`${code}\` |`);
    expect(doc.info.description).toContain("docs/api-guide.md");
  });

  it("documents every route the app serves, and nothing it does not", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`);
    }
    const served = new Set(
      app.routes
        .filter((r) => r.method !== "ALL" && !["/openapi.json", "/docs", "/docs-assets/*"].includes(r.path))
        .map((r) => `${r.method} ${r.path}`),
    );
    expect([...served].sort()).toEqual([...documented].sort());
    expect(ROUTE_REGISTRY.length).toBe(documented.size);
  });

  it("every documented error response names only codes of the enum, with their real status", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const [path, item] of Object.entries(doc.paths) as [string, Record<string, { responses: Record<string, { content?: Record<string, { schema: any }> }> }>][]) {
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const schema = response.content!["application/json"]!.schema;
          // The one non-error answer at 4xx/5xx: /health's 503 is its report (which binding is down).
          if (path === "/health" && status === "503") {
            expect(schema.$ref).toBe("#/components/schemas/Health");
            continue;
          }
          const codes: string[] = schema.properties.error.properties.code.enum;
          for (const code of codes) expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status).toBe(Number(status));
        }
      }
    }
  });

  it("/docs is the API reference served from the Worker's own assets: no CDN, scripts from this address", async () => {
    const res = await call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    const html = res.body as string;
    expect(html).not.toMatch(/https?:\/\//);
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toEqual(["/docs-assets/scalar.standalone.js", "/docs-assets/docs.js"]);
    for (const src of scripts) {
      const asset = await call("GET", src);
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get("Content-Type")).toContain("javascript");
    }
    const config = (await call("GET", "/docs-assets/docs.js")).body as string;
    expect(config).toContain('url: "/openapi.json"');
    expect(config).toContain("withDefaultFonts: false");
  });
});

describe("cron", () => {
  it("the job table matches wrangler.toml", () => {
    const crons = /crons\s*=\s*\[([^\]]*)\]/.exec(wranglerToml)![1]!.match(/"([^"]+)"/g)!.map((s) => s.slice(1, -1));
    expect(Object.keys(CRON_JOBS).sort()).toEqual(crons.sort());
  });
});
