import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { call, findRoute, newCompany, newKey, newOwner, type Actor } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { operations, requestArb, type Fixtures, type FuzzRequest, type OpenApiDoc } from "./generate";
import { SIMULATOR_CONTROL_ROUTES } from "../../src/countries/cl/simulator/control-routes";

/**
 * Schema-driven fuzz: requests generated from our own /openapi.json over every operation
 * (generate.ts), sent to the Worker one at a time. Invariants: no 5xx; every error is our envelope
 * with a code the document lists for that operation and status; every 2xx JSON body matches the
 * documented schema; a 4xx to a changing method leaves stored data as it was.
 * `npm test` runs a short seeded version; `npm run fuzz` runs FUZZ_REQUESTS (5,000) with a new seed.
 */
const REQUESTS = Number(env.FUZZ_REQUESTS ?? "400");
const SEED = Number(env.FUZZ_SEED ?? "1515");

let doc: OpenApiDoc;
let fx: Fixtures;
let issuer: Issuer;

beforeAll(async () => {
  doc = (await (await exports.default.fetch("http://localhost/openapi.json")).json()) as OpenApiDoc;
  issuer = await readyIssuer([33], 50);
  const member = await newKey(issuer.owner.clientId, "MEMBER");
  const spareMember = await newKey(issuer.owner.clientId, "MEMBER");
  expect((await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${issuer.companyId}`, { key: issuer.owner.key })).status).toBeLessThan(300);
  const other: Actor = await newOwner("Fuzz other client");
  const otherCompany = await newCompany(other);
  const spareCompany = await newCompany(issuer.owner);
  const invoice = (await issue(issuer, invoiceBody(issuer.rut, "33"))).body.id as string;
  await untilFinal(issuer, invoice);
  const hook = (await call("POST", `${issuer.base}/webhooks`, { key: issuer.owner.key, json: { url: "http://127.0.0.1:4010/hooks/fuzz", events: ["*"] } })).body.id as string;
  const spareHook = (await call("POST", `${issuer.base}/webhooks`, { key: issuer.owner.key, json: { url: "http://127.0.0.1:4010/hooks/fuzz-spare", events: ["*"] } })).body.id as string;
  const user = (await call("POST", "/api/users", { key: issuer.owner.key, json: { email: "fuzz@example.cl", name: "Fuzz" } })).body.id as string;
  const spareUser = (await call("POST", "/api/users", { key: issuer.owner.key, json: { email: "spare@example.cl", name: "Spare" } })).body.id as string;
  const certificate = (await call("GET", `${issuer.base}/certificates`, { key: issuer.owner.key })).body.data[0].id as string;
  const ids = { company_id: issuer.companyId, idCompany: issuer.companyId, invoice_id: invoice, webhook_id: hook, user_id: user, api_key_id: member.apiKeyId, certificate_id: certificate, document_type_id: "33", format: "A4", type: "xml", country: "CL", tax_id: issuer.rut };
  fx = {
    ids,
    spare: { company_id: spareCompany, idCompany: spareCompany, webhook_id: spareHook, user_id: spareUser, api_key_id: spareMember.apiKeyId },
    foreign: { company_id: otherCompany, idCompany: otherCompany },
    keys: { owner: issuer.owner.key, member: member.key, foreign: other.key },
  };
}, 120_000);

/** Stored data a 4xx must not change: client-driven tables in full, documents by count, client-written R2 objects by key. */
const SKIP_TABLES = /^(sqlite_|_cf_|d1_migrations|sim_|event_outbox)/;
async function digest(): Promise<string> {
  const tables = (await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string }>()).results.map((t) => t.name);
  const parts: string[] = [];
  for (const t of tables) {
    if (SKIP_TABLES.test(t)) continue;
    const rows = (await env.DB.prepare(`SELECT * FROM "${t}"`).all<Record<string, unknown>>()).results;
    parts.push(`${t}:${rows.map(({ last_used_at: _, ...r }) => JSON.stringify(r)).sort().join("\n")}`);
  }
  // Issued documents live in the companies' document stores.
  for (const c of [fx.ids.company_id, fx.spare.company_id, fx.foreign.company_id]) parts.push(`invoices ${c}:${(await storeRows(String(c), "SELECT id FROM invoices")).length}`);
  const objects = await env.FILES.list({ prefix: "companies/" });
  parts.push(objects.objects.map((o) => o.key).filter((k) => /\/(logos|certificates|cafs)\//.test(k)).join(","));
  return parts.join("\n");
}

/** zod's own wording where a schema gave no message of ours: a pattern, a bare "Invalid input", a key that must be present. */
const ZOD_WORDING = /must match pattern|^Invalid input|^Invalid string|expected nonoptional|Invalid ISO|^Invalid (email|URL|url)/;

interface Violation {
  operation: string;
  kind: string;
  status: number;
  problem: string;
}

function documentedCodes(template: string, method: string, status: number): string[] | null {
  const response = doc.paths[template]?.[method.toLowerCase()]?.responses[String(status)];
  const schema = response?.content?.["application/json"]?.schema as { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } | undefined;
  return schema?.properties?.error?.properties?.code?.enum ?? null;
}

/** Sends one request and returns what is wrong with the answer (nothing, usually). */
async function check(req: FuzzRequest): Promise<string[]> {
  const changing = req.method !== "GET";
  const before = changing ? await digest() : "";
  const url = new URL(`http://localhost${req.path}`);
  const res = await exports.default.fetch(new Request(url, { method: req.method, headers: req.headers, body: req.body }));
  // The operation that answered: a ".." id makes the URL another path (normalised by the URL parser).
  const route = findRoute(req.method, url.pathname);
  const text = await res.text();
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`5xx: ${text.slice(0, 300)}`);
  const type = res.headers.get("Content-Type") ?? "";
  let json: any;
  try {
    json = type.includes("json") ? JSON.parse(text) : undefined;
  } catch {
    problems.push(`unparsable JSON: ${text.slice(0, 100)}`);
  }
  if (res.status >= 400) {
    const e = json?.error;
    if (!e || typeof e.code !== "string" || typeof e.message !== "string" || typeof e.request_id !== "string" || !Array.isArray(e.details)) problems.push(`not our error envelope: ${text.slice(0, 200)}`);
    else {
      // No operation for this method at the path the URL became: 404, or 405 naming in Allow the methods that do have one;
      // under /api/ the key is checked first (as documented), so without a valid key 401.
      const codes = route ? documentedCodes(route.route.path, req.method, res.status) : res.status === 404 ? ["ROUTE_NOT_FOUND"] : res.status === 405 ? ["METHOD_NOT_ALLOWED"] : res.status === 401 && url.pathname.startsWith("/api/") ? ["AUTH_MISSING_API_KEY", "AUTH_INVALID_API_KEY"] : null;
      if (!route && res.status === 405) {
        const allow = (res.headers.get("Allow") ?? "").split(", ").filter(Boolean);
        if (!allow.length || allow.some((m) => !findRoute(m, url.pathname))) problems.push(`405 with Allow "${res.headers.get("Allow")}" for ${url.pathname}`);
      }
      // A validation answer speaks the API's words, never the validator's internals (a regex, a bare "Invalid input").
      for (const d of e.details as { field?: string; message?: string }[]) if (ZOD_WORDING.test(d.message ?? "")) problems.push(`validator wording for ${d.field}: ${d.message}`);
      if (!codes) problems.push(`status ${res.status} not documented (code ${e.code})`);
      else if (!codes.includes(e.code)) problems.push(`code ${e.code} not listed for status ${res.status} (listed: ${codes.join(", ")})`);
    }
    if (changing && res.status < 500 && (await digest()) !== before) problems.push(`stored data changed after a ${res.status} ${e?.code}`);
  } else if (res.status >= 200 && res.status < 300 && json !== undefined) {
    const schema = (route?.route.responses[String(res.status)] as { content?: Record<string, { schema: z.ZodType }> } | undefined)?.content?.["application/json"]?.schema;
    if (!route || !schema) problems.push(`${res.status} not documented with a JSON schema`);
    else {
      const parsed = schema.safeParse(json);
      if (!parsed.success) problems.push(`2xx body does not match its schema: ${JSON.stringify(parsed.error.issues).slice(0, 300)}`);
    }
  }
  return problems.map((p) => `${res.status} ${p}`);
}

describe("schema-driven fuzz over /openapi.json", () => {
  it(`${REQUESTS} generated requests (seed ${SEED}): no 5xx, declared error codes, documented 2xx bodies, nothing stored after a 4xx`, async () => {
    // Not the simulated SII's scenario and inject routes: the simulator answers them with its own
    // checks, and a scenario would change how the simulated SII answers the other operations.
    const ops = operations(doc).filter((o) => !SIMULATOR_CONTROL_ROUTES.includes(`${o.method} ${o.template}`));
    expect(ops.length).toBeGreaterThan(60);
    const arb = fc.constantFrom(...ops).chain((ref) => requestArb(doc, ref, fx));
    const requests = fc.sample(arb, { seed: SEED, numRuns: REQUESTS });
    const violations = new Map<string, Violation & { count: number; example: string }>();
    const covered = new Set<string>();
    for (const req of requests) {
      covered.add(`${req.method} ${req.template}`);
      for (const problem of await check(req)) {
        const key = `${req.method} ${req.template} | ${problem.replace(/[0-9A-Z]{26}/g, "…").slice(0, 160)}`;
        const v = violations.get(key);
        if (v) v.count++;
        else violations.set(key, { operation: `${req.method} ${req.template}`, kind: req.kind, status: Number(problem.slice(0, 3)), problem, count: 1, example: `${req.method} ${req.path.slice(0, 200)} ${typeof req.body === "string" ? req.body.slice(0, 300) : req.body ? "(form)" : ""}` });
      }
    }
    const report = [...violations.values()].map((v) => `${v.count} × ${v.operation} [${v.kind}]: ${v.problem}\n    e.g. ${v.example}`);
    console.log(`fuzz: ${requests.length} requests over ${covered.size} of ${ops.length} operations, seed ${SEED}, ${violations.size} distinct violations`);
    expect(report, report.join("\n")).toEqual([]);
    if (REQUESTS >= 2000) expect(covered.size).toBe(ops.length);
  }, 3_600_000);
});
