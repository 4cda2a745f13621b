import { exports, env } from "cloudflare:workers";
import { expect } from "vitest";
import type { z } from "zod";
import { app } from "../../src/app";
import { createDb } from "../../src/storage/db/client";
import { clients } from "../../src/storage/db/schema";
import { createApiKey } from "../../src/accounts/access/api-keys";
import { computeDv } from "../../src/countries/cl/documents/rut";
import type { Role } from "../../src/accounts/access/roles";
import { newId } from "../../src/lib/ids";
import { ROUTE_REGISTRY, type RegisteredRoute } from "../../src/http/route";

void app; // importing the app fills ROUTE_REGISTRY in this isolate

export interface CallOptions {
  key?: string | null;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  raw: Response;
}

function toPattern(path: string) {
  return new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
}

export function findRoute(method: string, path: string): RegisteredRoute | undefined {
  return ROUTE_REGISTRY.find((r) => r.route.method.toUpperCase() === method.toUpperCase() && toPattern(r.route.path).test(path));
}

/**
 * Calls the Worker as the runtime does (exports.default.fetch) and checks the answer against the
 * OpenAPI contract: the status must be documented for the route, and a JSON body must match the
 * documented schema for that status. Every test that uses it is also a contract test.
 */
export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers["X-Api-Key"] = opts.key;
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] ??= "application/json";
  }
  const raw = await exports.default.fetch(new Request(`http://localhost${path}`, { method, headers, body }));
  expect(raw.headers.get("X-Request-Id"), `X-Request-Id on ${method} ${path}`).toMatch(/^\S{8,}$/);
  const type = raw.headers.get("Content-Type") ?? "";
  const parsed = type.includes("application/json") ? await raw.clone().json() : await raw.clone().text();
  const route = findRoute(method, path.split("?")[0]!);
  if (route) {
    const documented = route.route.responses[String(raw.status)] as { content?: Record<string, { schema: z.ZodType }> } | undefined;
    expect(documented, `${method} ${route.route.path} answered ${raw.status}, which its OpenAPI entry does not document: ${JSON.stringify(parsed)}`).toBeDefined();
    const schema = documented?.content?.["application/json"]?.schema;
    if (schema && type.includes("application/json")) {
      const check = schema.safeParse(parsed);
      expect(check.success, `${method} ${route.route.path} ${raw.status} body does not match its documented schema: ${JSON.stringify(check.error?.issues)} body=${JSON.stringify(parsed)}`).toBe(true);
    }
  } else if (raw.status < 400 || ![404, 405, 401].includes(raw.status)) {
    // No operation at this path: 404 or 405, or 401 under /api/ without a valid key (the key is checked first, as documented).
    if (path.startsWith("/api/")) throw new Error(`${method} ${path} answered ${raw.status} but no documented route matches it`);
  }
  if (raw.status >= 400 && type.includes("application/json")) {
    const err = (parsed as { error?: { request_id?: string } }).error;
    expect(err?.request_id, "error bodies carry request_id").toBe(raw.headers.get("X-Request-Id"));
  }
  return { status: raw.status, headers: raw.headers, body: parsed as T, raw };
}

export interface Actor {
  key: string;
  clientId: string;
  apiKeyId: string;
  role: Role;
  livemode: boolean;
}

const pepper = () => env.API_KEY_PEPPER!;

export async function newClient(name = "Test client"): Promise<string> {
  const id = newId("cli");
  await createDb(env.DB).insert(clients).values({ id, name });
  return id;
}

export async function newKey(clientId: string, role: Role, name = `${role} key`, livemode = false): Promise<Actor> {
  const k = await createApiKey(createDb(env.DB), pepper(), { clientId, userId: null, name, role, livemode });
  return { key: k.key, clientId, apiKeyId: k.id, role, livemode };
}

export async function newOwner(name?: string, livemode = false): Promise<Actor> {
  return newKey(await newClient(name), "OWNER", undefined, livemode);
}

// A random start: files that share a runtime (vitest.config.ts) each count from their own point.
let rutSeq = 50_000_000 + Math.floor(Math.random() * 40_000_000);
/** A fresh valid company RUT (body between 50,000,000 and 99,999,999) each call. */
export function nextRut(): string {
  rutSeq += 1 + Math.floor(Math.random() * 1000);
  const body = String(rutSeq);
  return `${body}-${computeDv(body)}`;
}

export function companyBody(overrides: Record<string, unknown> = {}) {
  return {
    legal_name: "Comercial Los Andes SpA",
    tax_identification_document_code: "RUT",
    tax_identification_document_number: nextRut(),
    country: "CHL",
    start_activities_date: "2019-03-01",
    ...overrides,
  };
}

export async function newCompany(actor: Actor, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/api/companies", { key: actor.key, json: companyBody(overrides) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id_company as string;
}

export function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  expect(Array.isArray(res.body.error.details)).toBe(true);
}
