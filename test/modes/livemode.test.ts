/**
 * Test and live mode in one deployment: keys of each mode, data of each mode
 * invisible to the other, the same RUT in both, `livemode` in responses, and the simulator reachable
 * in production only by test mode (its SII client in-process, or a request with a test key, which
 * names only its client's test companies).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { call, companyBody, newClient, newKey, nextRut, type Actor } from "../helpers/api";

let test: Actor;
let live: Actor;

beforeAll(async () => {
  const clientId = await newClient("Modes");
  test = await newKey(clientId, "OWNER", "test owner", false);
  live = await newKey(clientId, "OWNER", "live owner", true);
});

async function production(path: string, init: RequestInit = {}, mode = "production"): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://localhost${path}`, init), { ...env, ENVIRONMENT: "production", SII_MODE: mode } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const json = (key: string | undefined, body: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json", ...(key ? { "X-Api-Key": key } : {}) },
  body: JSON.stringify(body),
});

describe("keys say their mode", () => {
  it("dte_test_ and dte_live_ prefixes; /api/me and every JSON answer carry livemode", async () => {
    expect(test.key).toMatch(/^dte_test_[0-9A-Za-z]{40}$/);
    expect(live.key).toMatch(/^dte_live_[0-9A-Za-z]{40}$/);
    expect((await call("GET", "/api/me", { key: test.key })).body.livemode).toBe(false);
    expect((await call("GET", "/api/me", { key: live.key })).body.livemode).toBe(true);
    const list = await call("GET", "/api/companies", { key: live.key });
    expect(list.body).toMatchObject({ livemode: true, data: [] });
  });

  it("a test key cannot mint a live key; a live key mints either", async () => {
    const user = await call("POST", "/api/users", { key: live.key, json: { email: "modes@example.cl", name: "Modes" } });
    expect(user.status).toBe(201);
    const denied = await call("POST", `/api/users/${user.body.id}/api-keys`, { key: test.key, json: { name: "x", role: "ADMIN", livemode: true } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("AUTH_ROLE_FORBIDDEN");
    const fromTest = await call("POST", `/api/users/${user.body.id}/api-keys`, { key: test.key, json: { name: "t", role: "ADMIN" } });
    expect(fromTest.body).toMatchObject({ livemode: false });
    expect(fromTest.body.api_key).toMatch(/^dte_test_/);
    const fromLive = await call("POST", `/api/users/${user.body.id}/api-keys`, { key: live.key, json: { name: "l", role: "ADMIN", livemode: false } });
    expect(fromLive.body.api_key).toMatch(/^dte_test_/);
  });
});

describe("data of one mode is invisible to the other", () => {
  it("the same RUT exists in both; each key lists, reads and reaches only its own", async () => {
    const rut = nextRut();
    const t = await call("POST", "/api/companies", { key: test.key, json: companyBody({ tax_identification_document_number: rut }) });
    const l = await call("POST", "/api/companies", { key: live.key, json: companyBody({ tax_identification_document_number: rut }) });
    expect(t.status).toBe(201);
    expect(l.status).toBe(201);
    expect(t.body.livemode).toBe(false);
    expect(l.body.livemode).toBe(true);
    const again = await call("POST", "/api/companies", { key: live.key, json: companyBody({ tax_identification_document_number: rut }) });
    expect(again.body.error.code).toBe("COMPANY_TAX_ID_TAKEN");

    const testList = await call("GET", `/api/companies?tax_identifier=${rut}`, { key: test.key });
    expect(testList.body.data.map((c: { id: string }) => c.id)).toEqual([t.body.id]);
    const liveList = await call("GET", `/api/companies?tax_identifier=${rut}`, { key: live.key });
    expect(liveList.body.data.map((c: { id: string }) => c.id)).toEqual([l.body.id]);

    for (const [key, other] of [[test.key, l.body.id], [live.key, t.body.id]] as const) {
      for (const path of [`/api/companies/${other}`, `/api/companies/${other}/settings`, `/api/companies/${other}/invoices`, `/api/companies/${other}/webhooks`, `/api/companies/${other}/enumeration/list`]) {
        const res = await call("GET", path, { key });
        expect(res.status, path).toBe(403);
        expect(res.body.error.code).toBe("AUTH_COMPANY_ACCESS_DENIED");
      }
    }
    expect((await call("GET", "/api/me", { key: test.key })).body.accessibleCompanyIds).not.toContain(l.body.id);
  });

  it("an Idempotency-Key of one mode never replays the other's answer; reordered JSON is the same request", async () => {
    const body = companyBody();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const first = await call("POST", "/api/companies", { key: test.key, json: body, headers: { "Idempotency-Key": "modes-1" } });
    expect(first.status).toBe(201);
    const replay = await call("POST", "/api/companies", { key: test.key, body: JSON.stringify(reordered, null, 2), headers: { "Idempotency-Key": "modes-1", "Content-Type": "application/json" } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.body.id).toBe(first.body.id);
    const otherMode = await call("POST", "/api/companies", { key: live.key, json: body, headers: { "Idempotency-Key": "modes-1" } });
    expect(otherMode.status).toBe(201);
    expect(otherMode.headers.get("Idempotent-Replayed")).toBeNull();
    expect(otherMode.body.id).not.toBe(first.body.id);
    expect(otherMode.body.livemode).toBe(true);
  });

  it("a MEMBER key is granted only companies of its own mode", async () => {
    const member = await newKey(test.clientId, "MEMBER", "live member", true);
    const testCompany = (await call("POST", "/api/companies", { key: test.key, json: companyBody() })).body.id;
    const grant = await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${testCompany}`, { key: test.key });
    expect(grant.status).toBe(400);
    expect(grant.body.error.code).toBe("API_KEY_GRANT_NOT_APPLICABLE");
  });
});

describe("the simulator in a production deployment", () => {
  it("answers the CAF portal to a test key only, for its own test companies; a live key and no key find nothing", async () => {
    const rut = nextRut();
    await call("POST", "/api/companies", { key: test.key, json: companyBody({ tax_identification_document_number: rut }) });
    const request = { rut, document_type: 33, quantity: 1 };
    for (const mode of ["production", "certification"]) {
      expect((await production("/simulator/sii/caf", json(undefined, request), mode)).status).toBe(404);
      expect((await production("/simulator/sii/caf", json(live.key, request), mode)).status).toBe(404);
      const granted = await production("/simulator/sii/caf", json(test.key, request), mode);
      expect(granted.status).toBe(200);
      expect(await granted.text()).toContain("<AUTORIZACION>");
      const foreign = await production("/simulator/sii/caf", json(test.key, { ...request, rut: nextRut() }), mode);
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe("SIMULATOR_RUT_NOT_OWNED");
    }
  });

  it("scenario control with a test key is that client's own: its test companies' RUTs, its scenarios", async () => {
    const rut = nextRut();
    await call("POST", "/api/companies", { key: test.key, json: companyBody({ tax_identification_document_number: rut }) });
    expect((await production("/simulator/sii/scenario", json(live.key, { mode: "down", rut }))).status).toBe(404);
    const foreign = await production("/simulator/sii/scenario", json(test.key, { mode: "down", rut: nextRut() }));
    expect(foreign.status).toBe(403);
    const own = await production("/simulator/sii/scenario", json(test.key, { mode: "reject", rut, count: 1 }));
    expect(own.status).toBe(201);
    const global = await production("/simulator/sii/scenario", json(test.key, { mode: "down", count: 1 }));
    expect(global.status).toBe(201);
    const listed = (await (await production("/simulator/sii/scenario", { headers: { "X-Api-Key": test.key } })).json()) as { data: { rut: string | null }[] };
    expect(listed.data.map((s) => s.rut)).toEqual([null, rut]);
    const cleared = (await (await production("/simulator/sii/scenario", { method: "DELETE", headers: { "X-Api-Key": test.key } })).json()) as { deleted: number };
    expect(cleared.deleted).toBe(2);
  });

  it("a test company gets folios from the simulator in production; a live one is told the SII hands them out in its portal", async () => {
    const body = companyBody();
    const create = (key: string) => production("/api/companies", json(key, body));
    const testCompany = ((await (await create(test.key)).json()) as { id: string }).id;
    const liveCompany = ((await (await create(live.key)).json()) as { id: string }).id;
    const refetch = (key: string, id: string) => production(`/api/companies/${id}/enumeration/refetch`, json(key, { document_type: "33", quantity: 5 }));
    const fromSimulator = await refetch(test.key, testCompany);
    expect(fromSimulator.status, await fromSimulator.clone().text()).toBe(201);
    expect(await fromSimulator.json()).toMatchObject({ livemode: false });
    const fromSii = await refetch(live.key, liveCompany);
    expect(((await fromSii.json()) as { error: { code: string } }).error.code).toBe("ENUMERATION_REFETCH_NOT_SUPPORTED");
  });
});
