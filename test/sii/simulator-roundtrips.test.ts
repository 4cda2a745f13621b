/**
 * D1 round trips of the simulator's hot paths (each costs the single workerd thread ~0.5 ms under
 * load): an EnvioDTE upload of any size is one batch of reads plus one batch of writes, a QueryEstUp
 * poll one batch, a boleta REST status poll one batch (plus the documents at EPR). Also what those
 * batches must get right: documents stored with their own envelope (several envelopes, concurrent
 * uploads, more documents than one INSERT takes) and repeated folios found beyond one statement's
 * worth of folios.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { SiiClient, clearSiiTokenCache } from "../../src/countries/cl/sii/client";
import { internalSimulatorEnv } from "../../src/config";
import { simulatorApp } from "../../src/countries/cl/simulator/app";
import { precheckUpload } from "../../src/countries/cl/simulator/validate";
import { envelope, fakeCredentials, ISSUER_RUT, signedDte, simulatorCaf } from "./helpers";

/** A D1 binding that counts round trips (statement executions and batches) by request path. */
function countingD1(db: D1Database, counts: Map<string, number>, current: () => string): D1Database {
  const tick = () => counts.set(current(), (counts.get(current()) ?? 0) + 1);
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (s: D1PreparedStatement): D1PreparedStatement => {
    const w = new Proxy(s, {
      get(target, prop) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args));
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") {
          return (...args: unknown[]) => {
            tick();
            return (target[prop] as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    real.set(w, s);
    return w;
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (q: string) => wrap(target.prepare(q));
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          tick();
          return target.batch(stmts.map((s) => real.get(s) ?? s));
        };
      }
      if (prop === "exec") {
        return (q: string) => {
          tick();
          return target.exec(q);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const counts = new Map<string, number>();
let path = "";
// Called as the SII client of a company calls it, in-process (no API key to check on the way).
const countedEnv = internalSimulatorEnv({ ...env, DB: countingD1(env.DB, counts, () => path) });
const client = new SiiClient({
  mode: "simulator",
  fetcher: (req) => {
    path = new URL(req.url).pathname.replace(/^\/simulator\/sii/, "").replace(/\/\d+-[\dkK]-\d+$/, "/{id}");
    return Promise.resolve(simulatorApp.fetch(req, countedEnv));
  },
});
function roundTrips(p: string): number {
  return counts.get(p) ?? 0;
}

let cert: SigningCredentials;
let caf33: Caf;
let caf39: Caf;

beforeAll(async () => {
  clearSiiTokenCache();
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 1000 });
  caf39 = await simulatorCaf({ documentType: 39, from: 1, to: 1000 });
});

async function dtes(caf: Caf, from: number, n: number, type: "33" | "39" = "33"): Promise<SignedDte[]> {
  const out: SignedDte[] = [];
  for (let f = from; f < from + n; f++) out.push(await signedDte(caf, f, cert, type));
  return out;
}

async function poll(trackId: string, boleta = false) {
  for (let i = 0; i < 6; i++) {
    const s = boleta ? await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId }) : await client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId });
    if (s.estado === "EPR") return s;
  }
  throw new Error("no EPR");
}

async function documentsOf(trackId: string): Promise<{ folio: number; status: string; errors: string }[]> {
  const r = await env.DB.prepare("select folio, status, errors from sim_documents where track_id = ? order by id").bind(Number(trackId)).all<{ folio: number; status: string; errors: string }>();
  return r.results;
}

describe("simulator D1 round trips", () => {
  it("an upload of 50 documents: one batch of reads and one of writes; a QueryEstUp poll: one", async () => {
    await client.token(cert, ISSUER_RUT); // authenticate first: seed and token are not counted below
    counts.clear();
    const env50 = await envelope(await dtes(caf33, 1, 50), cert);
    const up = await client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env50.xml, fileName: "e50.xml" });
    expect(up).toMatchObject({ status: 0 });
    expect(roundTrips("/cgi_dte/UPL/DTEUpload")).toBe(2);
    const s = await client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId: up.trackId });
    expect(s.estado).toBe("REC");
    expect(roundTrips("/DTEWS/QueryEstUp.jws")).toBe(1);
    const last = await poll(up.trackId);
    expect(last.counts).toEqual([{ type: 33, informed: 50, accepted: 50, rejected: 0, objected: 0 }]);
    const docs = await documentsOf(up.trackId);
    expect(docs.map((d) => d.folio)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(docs.every((d) => d.status === "DOK")).toBe(true);
  });

  it("concurrent uploads: every document is stored with its own envelope", async () => {
    const [a, b, c] = await Promise.all([dtes(caf33, 101, 23), dtes(caf33, 201, 7), dtes(caf33, 301, 11)]);
    const envs = await Promise.all([envelope(a, cert), envelope(b, cert), envelope(c, cert)]);
    const ups = await Promise.all(envs.map((e, i) => client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: e.xml, fileName: `c${i}.xml` })));
    expect(new Set(ups.map((u) => u.trackId)).size).toBe(3);
    for (const [i, first] of [101, 201, 301].entries()) {
      const n = [23, 7, 11][i]!;
      const docs = await documentsOf(ups[i]!.trackId);
      expect(docs.map((d) => d.folio)).toEqual(Array.from({ length: n }, (_, k) => first + k));
    }
  });

  it("repeated folios are found across the statements of the duplicate check (more than 90 folios)", async () => {
    // Folios 1..50 were accepted above; this envelope repeats 40..50 as its last 11 of 95 documents,
    // so they fall in both statements of the check (90 folios each).
    const fresh = await dtes(caf33, 400, 84);
    const repeated = await dtes(caf33, 40, 11);
    const all = [...fresh, ...repeated];
    const env95 = await envelope(all, cert);
    const up = await client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env95.xml, fileName: "e95.xml" });
    const last = await poll(up.trackId);
    expect(last.counts).toEqual([{ type: 33, informed: 95, accepted: 84, rejected: 11, objected: 0 }]);
    const docs = await documentsOf(up.trackId);
    const rejected = docs.filter((d) => d.status === "RCH");
    expect(rejected.map((d) => d.folio).sort((x, y) => x - y)).toEqual(Array.from({ length: 11 }, (_, k) => 40 + k));
    for (const d of rejected) expect(d.errors).toMatch(/DTE-REPETIDO/);
  });

  it("boleta REST: upload in two batches, a status poll in one (plus the documents at EPR)", async () => {
    await client.token(cert, ISSUER_RUT, "rest");
    counts.clear();
    const env3 = await envelope(await dtes(caf39, 1, 3, "39"), cert);
    const up = await client.uploadBoleta({ cert, companyRut: ISSUER_RUT, file: env3.xml, fileName: "b3.xml" });
    expect(String(up.trackId)).toMatch(/^[1-9][0-9]*$/);
    expect(roundTrips("/recursos/v1/boleta.electronica.envio")).toBe(2);
    const first = await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId: up.trackId });
    expect(first.estado).toBe("REC");
    // the global "down" check of the middleware + the token/poll batch
    expect(roundTrips("/recursos/v1/boleta.electronica.envio/{id}")).toBe(2);
    expect((await poll(up.trackId, true)).counts).toEqual([{ type: 39, informed: 3, accepted: 3, rejected: 0, objected: 0 }]);
  });
});

describe("upload precheck", () => {
  it("refuses a line over 4096 characters (CRLF or LF ends), accepts 4096", () => {
    const body = (n: number, eol: string) => `<?xml version="1.0"?>${eol}<EnvioDTE>${eol}<a>${"x".repeat(n - 7)}</a>${eol}</EnvioDTE>${eol}`;
    expect(precheckUpload(body(4096, "\n"), "EnvioDTE").ok).toBe(true);
    expect(precheckUpload(body(4096, "\r\n"), "EnvioDTE").ok).toBe(true);
    expect(precheckUpload(body(4097, "\n"), "EnvioDTE")).toEqual({ ok: false, errors: ["CHR-00002: Line too long (line 3 exceeds 4096 characters)"] });
    expect(precheckUpload(body(4097, "\r\n"), "EnvioDTE")).toEqual({ ok: false, errors: ["CHR-00002: Line too long (line 3 exceeds 4096 characters)"] });
    expect(precheckUpload(`<EnvioDTE>${"y".repeat(5000)}</EnvioDTE>`, "EnvioDTE")).toMatchObject({ ok: false, errors: [expect.stringMatching(/line 1 exceeds/)] });
  });
});
