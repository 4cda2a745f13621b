/**
 * Who reaches the simulated SII, and whose scenarios a call sees. Outside local development (this
 * test environment included) only test keys reach it over HTTP; a test key mints CAFs only for its
 * client's test companies; scenarios belong to the API client that set them, also when two clients
 * have test companies with the same RUT, and the in-process SII client of a company follows the
 * company's client. Local development (ENVIRONMENT=development) stays open without a key.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { envForCompany, simulatorEnabled } from "../../src/config";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { SiiClient, siiClientFor } from "../../src/countries/cl/sii";
import { SiiError } from "../../src/countries/cl/sii/errors";
import { soapRequest } from "../../src/countries/cl/sii/wire";
import { newCompany, newKey, newOwner, nextRut, type Actor } from "../helpers/api";
import { envelope, fakeCredentials, ISSUER_RUT, signedDte, simulatorCaf } from "./helpers";

const BASE = "http://localhost/simulator/sii";

function send(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const { key, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key) headers.set("X-Api-Key", key);
  return exports.default.fetch(new Request(`${BASE}${path}`, { ...rest, headers }));
}

const postJson = (path: string, key: string | undefined, body: unknown) => send(path, { method: "POST", key, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/** An SII client over HTTP that sends this key with every call. */
function keyedClient(key: string): SiiClient {
  return new SiiClient({
    mode: "simulator",
    fetcher: (req) => {
      const keyed = new Request(req);
      keyed.headers.set("X-Api-Key", key);
      return exports.default.fetch(keyed);
    },
  });
}

async function listedRuts(key: string): Promise<(string | null)[]> {
  const res = await send("/scenario", { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { rut: string | null }[] }).data.map((s) => s.rut);
}

let a: Actor;
let b: Actor;
let liveA: Actor;
let cert: SigningCredentials;
let caf: Caf;
let folio = 1;

beforeAll(async () => {
  a = await newOwner("Simulator access A");
  b = await newOwner("Simulator access B");
  liveA = await newKey(a.clientId, "OWNER", "live", true);
  // Both clients have a test company with the same RUT.
  for (const who of [a, b]) await newCompany(who, { tax_identification_document_number: ISSUER_RUT, legal_name: "EMPRESA DE PRUEBA SPA" });
  cert = await fakeCredentials();
  caf = await simulatorCaf({ documentType: 33, from: 1, to: 100 });
});

async function upload(client: SiiClient) {
  const dte = await signedDte(caf, folio++, cert);
  return client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: (await envelope([dte], cert)).xml });
}

async function refusedWith(p: Promise<unknown>): Promise<SiiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SiiError) return e;
    throw e;
  }
  throw new Error("expected a SiiError");
}

describe("who reaches the simulator in the test environment", () => {
  it("is not local development: the simulator is open without a key only with ENVIRONMENT=development", () => {
    expect(env.ENVIRONMENT).toBe("test");
    expect(simulatorEnabled(env)).toBe(false);
    for (const environment of ["test", "staging", "production"]) expect(simulatorEnabled({ ENVIRONMENT: environment, SII_MODE: "simulator" })).toBe(false);
    expect(simulatorEnabled({ ENVIRONMENT: "development", SII_MODE: "simulator" })).toBe(true);
    expect(simulatorEnabled({ ENVIRONMENT: "development", SII_MODE: "certification" })).toBe(false);
  });

  it("no key and a live key find nothing (404); a test key gets the answer", async () => {
    const seed = (key?: string) => send("/DTEWS/CrSeed.jws", { method: "POST", key, headers: { "Content-Type": "text/xml" }, body: soapRequest("getSeed") });
    const caf = (key?: string) => postJson("/caf", key, { rut: ISSUER_RUT, document_type: 33, quantity: 1 });
    for (const key of [undefined, liveA.key, "dte_test_not-a-real-key"]) {
      for (const res of [await seed(key), await send("/scenario", { key }), await postJson("/scenario", key, { mode: "down" }), await caf(key)]) {
        expect(res.status).toBe(404);
        expect(await errorCode(res)).toBe("ROUTE_NOT_FOUND");
      }
    }
    const answered = await seed(a.key);
    expect(answered.status).toBe(200);
    expect(await answered.text()).toMatch(/&lt;SEMILLA&gt;\d{12}&lt;\/SEMILLA&gt;/);
    expect((await send("/scenario", { key: a.key })).status).toBe(200);
    const granted = await caf(a.key);
    expect(granted.status).toBe(200);
    expect(await granted.text()).toContain("<AUTORIZACION>");
  });
});

describe("CAF grants to a test key", () => {
  it("only for the RUTs of its client's active test companies: 403 SIMULATOR_RUT_NOT_OWNED for any other", async () => {
    const liveRut = nextRut();
    await newCompany(liveA, { tax_identification_document_number: liveRut });
    const othersRut = nextRut();
    await newCompany(b, { tax_identification_document_number: othersRut });
    for (const rut of [nextRut(), liveRut, othersRut]) {
      const res = await postJson("/caf", a.key, { rut, document_type: 33, quantity: 1 });
      expect(res.status, rut).toBe(403);
      const body = (await res.json()) as { error: { code: string; message: string; details: { field: string }[] } };
      expect(body.error.code).toBe("SIMULATOR_RUT_NOT_OWNED");
      expect(body.error.message).toContain(rut);
      expect(body.error.message).toMatch(/not the RUT of one of your active test-mode companies/);
      expect(body.error.details).toEqual([{ field: "rut", message: "Not one of your test-mode companies" }]);
    }
    const own = await postJson("/caf", b.key, { rut: othersRut, document_type: 33, quantity: 1 });
    expect(own.status).toBe(200);
  });

  it("a company of the key's client that is deleted no longer counts", async () => {
    const rut = nextRut();
    const id = await newCompany(a, { tax_identification_document_number: rut });
    expect((await postJson("/caf", a.key, { rut, document_type: 33, quantity: 1 })).status).toBe(200);
    const removed = await exports.default.fetch(new Request(`http://localhost/api/companies/${id}`, { method: "DELETE", headers: { "X-Api-Key": a.key } }));
    expect(removed.status, await removed.clone().text()).toBeLessThan(300);
    expect(await errorCode(await postJson("/caf", a.key, { rut, document_type: 33, quantity: 1 }))).toBe("SIMULATOR_RUT_NOT_OWNED");
  });
});

describe("scenarios belong to the client that set them", () => {
  it("a rut must be one of the key's test companies; without rut a scenario covers all of them", async () => {
    const foreign = await postJson("/scenario", a.key, { mode: "reject", rut: nextRut() });
    expect(foreign.status).toBe(403);
    expect(await errorCode(foreign)).toBe("SIMULATOR_RUT_NOT_OWNED");
    expect((await postJson("/scenario", a.key, { mode: "reject", rut: "76086428-4" })).status).toBe(400);
    expect((await postJson("/scenario", a.key, { mode: "delay", polls: 2 })).status).toBe(201);
    expect(await listedRuts(a.key)).toEqual([null]);
    expect((await send("/scenario", { method: "DELETE", key: a.key })).status).toBe(200);
  });

  it("two clients with test companies of the same RUT neither see nor delete each other's", async () => {
    expect((await postJson("/scenario", a.key, { mode: "reject", rut: ISSUER_RUT })).status).toBe(201);
    expect((await postJson("/scenario", a.key, { mode: "object", rut: "76.086.428-5", count: 2 })).status).toBe(201);
    expect((await postJson("/scenario", b.key, { mode: "delay", rut: ISSUER_RUT, polls: 3 })).status).toBe(201);
    expect(await listedRuts(a.key)).toEqual([ISSUER_RUT, ISSUER_RUT]);
    expect(await listedRuts(b.key)).toEqual([ISSUER_RUT]);
    const cleared = await send("/scenario", { method: "DELETE", key: b.key });
    expect(await cleared.json()).toEqual({ deleted: 1 });
    expect(await listedRuts(b.key)).toEqual([]);
    expect(await listedRuts(a.key)).toHaveLength(2);
    expect(await (await send("/scenario", { method: "DELETE", key: a.key })).json()).toEqual({ deleted: 2 });
  });

  it("only the owner's calls apply them: over HTTP with its key, and in-process for its company", async () => {
    expect((await postJson("/scenario", a.key, { mode: "down", rut: ISSUER_RUT })).status).toBe(201);
    const inProcess = (who: Actor) => siiClientFor(envForCompany(env, { livemode: false, clientId: who.clientId }));
    for (const client of [keyedClient(a.key), inProcess(a)]) {
      expect(await refusedWith(upload(client))).toMatchObject({ code: "HTTP_ERROR", httpStatus: 503, retryable: true });
    }
    for (const client of [keyedClient(b.key), inProcess(b)]) expect((await upload(client)).status).toBe(0);
    // A global outage of one client: its calls fail, the other's are served.
    expect((await postJson("/scenario", b.key, { mode: "down", count: 2 })).status).toBe(201);
    expect(await refusedWith(keyedClient(b.key).getSeed())).toMatchObject({ httpStatus: 503 });
    expect(await refusedWith(inProcess(b).getSeed())).toMatchObject({ httpStatus: 503 });
    expect(await keyedClient(a.key).getSeed()).toMatch(/^\d{12}$/);
    expect(await inProcess(a).getSeed()).toMatch(/^\d{12}$/);
    expect(await keyedClient(b.key).getSeed()).toMatch(/^\d{12}$/);
    await send("/scenario", { method: "DELETE", key: a.key });
    expect((await upload(inProcess(a))).status).toBe(0);
  });
});

describe("local development", () => {
  const development = { ...env, ENVIRONMENT: "development" } as Env;

  async function local(path: string, init?: RequestInit): Promise<Response> {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`${BASE}${path}`, init), development, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  }

  it("answers without a key, as one owner whose scenarios the in-process SII client applies", async () => {
    const set = await local("/scenario", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ mode: "down", count: 1 }) });
    expect(set.status).toBe(201);
    expect(((await (await local("/scenario")).json()) as { data: unknown[] }).data).toHaveLength(1);
    expect(await listedRuts(a.key)).toEqual([]);
    const caf = await local("/caf", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rut: nextRut(), document_type: 33, quantity: 1 }) });
    expect(caf.status).toBe(200);
    // The test environment's in-process calls belong to a company's client: the local scenario is not theirs.
    expect(await siiClientFor(envForCompany(env, { livemode: false, clientId: a.clientId })).getSeed()).toMatch(/^\d{12}$/);
    // In local development every in-process call is the one owner's.
    expect(await refusedWith(siiClientFor(envForCompany(development, { livemode: false, clientId: a.clientId })).getSeed())).toMatchObject({ httpStatus: 503 });
    expect(await siiClientFor(development).getSeed()).toMatch(/^\d{12}$/);
    expect(await (await local("/scenario", { method: "DELETE" })).json()).toEqual({ deleted: 0 });
  });
});
