/**
 * The SII client against the simulator through the real Worker (exports.default.fetch): the whole
 * HTTP wire format (SOAP, multipart, cookies) with the simulator's D1 state.
 */
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { siiClientFor } from "../../src/countries/cl/sii";
import { clearSiiTokenCache } from "../../src/countries/cl/sii/client";
import { SiiError } from "../../src/countries/cl/sii/errors";
import { parseRecepcionDte, parseRespuesta, parseSoapResponse, soapRequest } from "../../src/countries/cl/sii/wire";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { buildTokenRequest } from "../../src/countries/cl/xml/xmldsig";
import { unsafeDte, envelope, expectStates, fakeCredentials, HOLDER_RUT, ISSUER_RUT, scenario, signedDte, simulatorCaf, simulatorFetch, uploadAndPoll, workerClient } from "./helpers";

const BASE = "http://sii.simulator/simulator/sii";

async function soap(service: string, method: string, params: [string, string][]) {
  const res = await simulatorFetch(new Request(`${BASE}/DTEWS/${service}.jws`, { method: "POST", headers: { "Content-Type": "text/xml" }, body: soapRequest(method, params) }));
  const p = parseSoapResponse(await res.text());
  if (p.kind !== "return") throw new Error(`fault ${p.faultString}`);
  return parseRespuesta(p.value);
}

async function siiError(p: Promise<unknown>): Promise<SiiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SiiError) return e;
    throw e;
  }
  throw new Error("expected a SiiError");
}

async function rows<T = Record<string, unknown>>(sql: string, ...args: unknown[]): Promise<T[]> {
  return (await env.DB.prepare(sql).bind(...args).all<T>()).results;
}

async function docReasons(trackId: string): Promise<string[]> {
  const r = await rows<{ errors: string }>("select errors from sim_documents where track_id = ?", Number(trackId));
  return r.flatMap((x) => JSON.parse(x.errors) as string[]);
}

let cert: SigningCredentials;
let caf33: Caf;
const client = workerClient();

beforeEach(async () => {
  cert ??= await fakeCredentials();
  caf33 ??= await simulatorCaf({ documentType: 33, from: 1, to: 100 });
  await scenario(null);
});

describe("seed and token", () => {
  it("gets a seed and a token; the simulator records the certificate holder", async () => {
    const seed = await client.getSeed();
    expect(seed).toMatch(/^\d{12}$/);
    const token = await client.requestToken(cert);
    expect(token).toMatch(/^[A-Z0-9]{13}$/);
    const [row] = await rows<{ rut: string; cert_fingerprint: string }>("select rut, cert_fingerprint from sim_tokens where token = ?", token);
    expect(row).toEqual({ rut: HOLDER_RUT, cert_fingerprint: cert.fingerprintSha1 });
  });

  it("refuses a bad signature (05), an unsigned request (04), unknown (08), stale (08) and used (08) seeds", async () => {
    const seed = (await soap("CrSeed", "getSeed", [])).body[0]![1];
    const signed = await buildTokenRequest(seed, cert);
    const tampered = signed.replace(`<Semilla>${seed}</Semilla>`, `<Semilla>${seed.slice(0, -1)}${(Number(seed.slice(-1)) + 1) % 10}</Semilla>`);
    expect((await soap("GetTokenFromSeed", "getToken", [["pszXml", tampered]])).hdr.ESTADO).toBe("05");
    expect((await soap("GetTokenFromSeed", "getToken", [["pszXml", `<getToken><item><Semilla>${seed}</Semilla></item></getToken>`]])).hdr.ESTADO).toBe("04");
    expect((await soap("GetTokenFromSeed", "getToken", [["pszXml", "<getToken><item>"]])).hdr.ESTADO).toBe("01");
    const unknown = await soap("GetTokenFromSeed", "getToken", [["pszXml", await buildTokenRequest("123456789012", cert)]]);
    expect(unknown.hdr).toMatchObject({ ESTADO: "08", GLOSA: expect.stringMatching(/no existe/) });
    // the genuine request still works once, then the seed is spent
    const ok = await soap("GetTokenFromSeed", "getToken", [["pszXml", signed]]);
    expect(ok.hdr.ESTADO).toBe("00");
    expect((await soap("GetTokenFromSeed", "getToken", [["pszXml", signed]])).hdr).toMatchObject({ ESTADO: "08", GLOSA: expect.stringMatching(/utilizada/) });
    // stale: a seed older than 2 minutes
    const old = (await soap("CrSeed", "getSeed", [])).body[0]![1];
    await env.DB.prepare("update sim_seeds set created_at = ? where seed = ?").bind(new Date(Date.now() - 121_000).toISOString(), old).run();
    expect((await soap("GetTokenFromSeed", "getToken", [["pszXml", await buildTokenRequest(old, cert)]])).hdr).toMatchObject({ ESTADO: "08", GLOSA: expect.stringMatching(/vencida/) });
  });

  it("refuses an expired certificate (-3) and one without RUT (-07) through the client, not retryable", async () => {
    const expired = await fakeCredentials({ notBefore: new Date(Date.UTC(2020, 0, 1)), notAfter: new Date(Date.UTC(2021, 0, 1)) });
    expect(await siiError(client.requestToken(expired))).toMatchObject({ code: "TOKEN_REFUSED", siiCode: "-3", retryable: false });
    const noRut = await fakeCredentials({ rut: null });
    expect(await siiError(client.requestToken(noRut))).toMatchObject({ code: "TOKEN_REFUSED", siiCode: "-07", retryable: false });
  });
});

describe("EnvioDTE upload and status", () => {
  let accepted: SignedDte;
  let trackId: string;

  it("uploads a signed EnvioDTE, moves REC -> SOK -> FOK -> EPR, and the document is DOK", async () => {
    clearSiiTokenCache();
    accepted = await signedDte(caf33, 1, cert);
    const env1 = await envelope([accepted], cert);
    const r = await uploadAndPoll(client, cert, () => client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env1.xml, fileName: "EnvioDTE_1.xml" }));
    expect(r.up).toMatchObject({ status: 0, duplicate: false });
    trackId = r.trackId;
    expectStates(r, ["REC", "SOK", "FOK", "EPR"]);
    expect(r.last.counts).toEqual([{ type: 33, informed: 1, accepted: 1, rejected: 0, objected: 0 }]);
    expect(r.last.outcome).toBe("ACCEPTED");
    const q = { cert, companyRut: ISSUER_RUT, receiverRut: accepted.receiverRut, documentType: 33, folio: 1, issueDate: accepted.issueDate, total: accepted.total };
    expect(await client.queryEstDte(q)).toMatchObject({ estado: "DOK", outcome: "ACCEPTED" });
    expect(await client.queryEstDte({ ...q, total: "1" })).toMatchObject({ estado: "DNK", outcome: "REJECTED" });
    expect(await client.queryEstDte({ ...q, folio: 99 })).toMatchObject({ estado: "FAU", outcome: "PENDING" });
    // one token for all of it (cached per company + certificate)
    expect((await rows("select token from sim_tokens where rut = ? and channel = 'soap'", HOLDER_RUT)).length).toBeGreaterThanOrEqual(1);
  });

  it("the same file again is STATUS 99: the original track id, as success", async () => {
    const env1 = await envelope([accepted], cert);
    const again = await client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env1.xml });
    expect(again).toMatchObject({ trackId, status: 99, duplicate: true });
  });

  it("re-authenticates when the SII no longer knows the cached token (query and upload)", async () => {
    await env.DB.prepare("delete from sim_tokens").run();
    const st = await client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId });
    expect(st.estado).toBe("EPR");
    expect((await rows("select token from sim_tokens")).length).toBe(1);
    await env.DB.prepare("delete from sim_tokens").run();
    const up = await client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: (await envelope([await signedDte(caf33, 6, cert)], cert)).xml });
    expect(up.status).toBe(0);
    expect((await rows("select token from sim_tokens")).length).toBe(1);
  });

  it("caches the token for its TTL per company + certificate, then authenticates again", async () => {
    let t = Date.now();
    const c = workerClient({ now: () => t, tokenTtlMs: 60_000 });
    const other = await fakeCredentials();
    const a = await c.token(cert, "77879240-0");
    expect(await c.token(cert, "77879240-0")).toBe(a);
    expect(await c.token(other, "77879240-0")).not.toBe(a);
    t += 61_000;
    expect(await c.token(cert, "77879240-0")).not.toBe(a);
  });

  it("rejects a repeated folio in a new envelope (DTE-REPETIDO)", async () => {
    const env2 = await envelope([accepted], cert, { timestamp: "2026-11-20T11:00:00" });
    const { up, last } = await uploadAndPoll(client, cert, () => client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env2.xml }));
    expect(up.trackId).not.toBe(trackId);
    expect(last).toMatchObject({ estado: "EPR", outcome: "REJECTED", counts: [{ type: 33, informed: 1, accepted: 0, rejected: 1, objected: 0 }] });
    expect((await docReasons(up.trackId)).join(" ")).toMatch(/^DTE-REPETIDO/);
    // the first one stays DOK
    expect((await client.queryEstDte({ cert, companyRut: ISSUER_RUT, receiverRut: accepted.receiverRut, documentType: 33, folio: 1, issueDate: accepted.issueDate, total: accepted.total })).estado).toBe("DOK");
  });
});

describe("what the simulated SII rejects", () => {
  const sendAndSettle = (file: Uint8Array) => uploadAndPoll(client, cert, () => client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file }));

  it("a tampered amount: DTE signature and TED data fail", async () => {
    const dte = await signedDte(caf33, 2, cert);
    const m = /<MntTotal>(\d+)<\/MntTotal>/.exec(dte.element)!;
    const forged = { ...dte, element: dte.element.replace(m[0], `<MntTotal>${Number(m[1]) + 1000}</MntTotal>`) };
    const r = await sendAndSettle((await envelope([forged], cert)).xml);
    expect(r.last).toMatchObject({ estado: "EPR", outcome: "REJECTED" });
    const reasons = (await docReasons(r.up.trackId)).join("\n");
    expect(reasons).toMatch(/DTE-FIRMA/);
    // The stamp's amount alone differs: a reparo TED-3-640 (reference §3.2), besides the broken signature.
    expect(reasons).toMatch(/TED-3-640 Monto del timbre/);
  });

  it("a folio outside the CAF range (CAF-RANGO)", async () => {
    const small = await simulatorCaf({ documentType: 33, from: 200, to: 210 });
    const r = await sendAndSettle((await envelope([await unsafeDte(small, 250, cert)], cert)).xml);
    expect(r.last.outcome).toBe("REJECTED");
    expect((await docReasons(r.up.trackId)).join("\n")).toMatch(/CAF-RANGO Folio 250 fuera del rango autorizado 200-210/);
  });

  it("a CAF not signed by a trusted SII key (forged FRMA, unknown IDK)", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 512, publicExponent: new Uint8Array([3]), hash: "SHA-1" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
    const forged999 = await simulatorCaf({ documentType: 33, from: 300, to: 310, signer: { idk: 999, privateKey: pair.privateKey } }, { extraKeys: { 999: spki } });
    const forged777 = await simulatorCaf({ documentType: 33, from: 400, to: 410, signer: { idk: 777, privateKey: pair.privateKey } }, { extraKeys: { 777: spki } });
    const r = await sendAndSettle((await envelope([await signedDte(forged999, 300, cert), await signedDte(forged777, 400, cert)], cert)).xml);
    expect(r.last).toMatchObject({ outcome: "REJECTED", counts: [{ type: 33, informed: 2, rejected: 2 }] });
    const reasons = await docReasons(r.up.trackId);
    expect(reasons.filter((x) => x.startsWith("CAF-FIRMA")).length).toBe(2);
  });

  it("RutEnvia that is not the certificate holder: carátula rejected (RCT)", async () => {
    const r = await sendAndSettle((await envelope([await signedDte(caf33, 3, cert)], cert, { senderRut: "22222222-2" })).xml);
    expectStates(r, ["REC", "SOK", "RCT"]);
    expect(r.last.outcome).toBe("REJECTED");
    const [e] = await rows<{ errors: string }>("select errors from sim_envios where track_id = ?", Number(r.up.trackId));
    expect(e!.errors).toMatch(/RUT no autorizado a firmar/);
  });

  it("an envelope altered after signing: RFR; a broken structure: RSC; not XML: STATUS 7", async () => {
    const good = await envelope([await signedDte(caf33, 4, cert)], cert);
    const altered = encodeLatin1(good.xmlString.replace("<NroResol>0</NroResol>", "<NroResol>12</NroResol>"));
    const r1 = await sendAndSettle(altered);
    expectStates(r1, ["REC", "SOK", "RFR"]);
    const broken = encodeLatin1(good.xmlString.replace(/<TmstFirmaEnv>[^<]*<\/TmstFirmaEnv>/, ""));
    const r2 = await sendAndSettle(broken);
    expectStates(r2, ["REC", "RSC"]);
    expect(r2.last.outcome).toBe("REJECTED");
    const e = await siiError(client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: encodeLatin1("this is not xml") }));
    expect(e).toMatchObject({ code: "UPLOAD_REFUSED", siiCode: "7", retryable: false });
    expect(e.es).toMatch(/Esquema/);
  });

  it("DTEUpload refuses a missing token (5), a truncated/chunked body (3) and fields out of order (7)", async () => {
    const file = (await envelope([await signedDte(caf33, 5, cert)], cert)).xml;
    const { buildMultipart } = await import("../../src/countries/cl/sii/wire");
    const form = (names: string[]) =>
      buildMultipart(names.map((n) => (n === "archivo" ? { name: n, filename: "e.xml", contentType: "text/xml", data: file } : { name: n, value: { rutSender: "11111111", dvSender: "1", rutCompany: "76086428", dvCompany: "5" }[n]! })));
    const token = await client.token(cert, ISSUER_RUT);
    const post = async (mp: ReturnType<typeof form>, headers: Record<string, string>) =>
      parseRecepcionDte(await (await simulatorFetch(new Request(`${BASE}/cgi_dte/UPL/DTEUpload`, { method: "POST", headers: { "Content-Type": mp.contentType, ...headers }, body: mp.body }))).text());
    const ok = form(["rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"]);
    expect((await post(ok, { Cookie: "TOKEN=NOPE", "Content-Length": String(ok.body.length) })).status).toBe(5);
    expect((await post(ok, { Cookie: `TOKEN=${token}`, "Content-Length": String(ok.body.length + 10) })).status).toBe(3);
    expect((await post(ok, { Cookie: `TOKEN=${token}`, "Transfer-Encoding": "chunked" })).status).toBe(3);
    const swapped = form(["rutCompany", "dvCompany", "rutSender", "dvSender", "archivo"]);
    const r = await post(swapped, { Cookie: `TOKEN=${token}`, "Content-Length": String(swapped.body.length) });
    expect(r).toMatchObject({ status: 7, errors: [expect.stringMatching(/en ese orden/)] });
  });
});

describe("scenarios", () => {
  let folio = 10;
  const send = async () => {
    const dte = await signedDte(caf33, folio++, cert);
    return client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: (await envelope([dte], cert)).xml });
  };

  it("reject (next upload only), object, and the scenario list", async () => {
    expect((await scenario({ mode: "reject", count: 1 })).status).toBe(201);
    const listed = (await (await simulatorFetch(new Request(`${BASE}/scenario`))).json()) as { data: { mode: string; remaining: number }[] };
    expect(listed.data).toMatchObject([{ mode: "reject", remaining: 1 }]);
    const r1 = await uploadAndPoll(client, cert, send);
    expect(r1.last).toMatchObject({ estado: "EPR", outcome: "REJECTED" });
    const r2 = await uploadAndPoll(client, cert, send);
    expect(r2.last.outcome).toBe("ACCEPTED");
    await scenario({ mode: "object", rut: "76.086.428-5" });
    const r3 = await uploadAndPoll(client, cert, send);
    expect(r3.last).toMatchObject({ outcome: "ACCEPTED_WITH_OBJECTIONS", counts: [{ informed: 1, accepted: 1, rejected: 0, objected: 1 }] });
    expect((await docReasons(r3.trackId)).join()).toMatch(/SIM-REPARO/);
  });

  it("a scenario for another company does not apply", async () => {
    await scenario({ mode: "reject", rut: "77879240-0" });
    const r = await uploadAndPoll(client, cert, send);
    expect(r.last.outcome).toBe("ACCEPTED");
  });

  it("delay: stays in REC/SOK for the given polls, then completes", async () => {
    await scenario({ mode: "delay", polls: 4, count: 1 });
    const { trackId } = await send();
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) seen.push((await client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId })).estado);
    expect(seen).toEqual(["REC", "SOK", "SOK", "SOK", "EPR"]);
  });

  it("down: every call gets 503 and the client a retryable error; DELETE restores service", async () => {
    await scenario({ mode: "down", count: 2 });
    expect(await siiError(client.getSeed())).toMatchObject({ code: "HTTP_ERROR", httpStatus: 503, retryable: true });
    expect(await siiError(client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId: "1" }))).toMatchObject({ retryable: true });
    expect(await client.getSeed()).toMatch(/^\d+$/);
    await scenario({ mode: "down" });
    expect(await siiError(send())).toMatchObject({ retryable: true });
    expect((await scenario(null)).status).toBe(200);
    expect(await client.getSeed()).toMatch(/^\d+$/);
  });

  it("down with an 'Error 500' body or a dropped connection: retryable SERVICE_ERROR / NETWORK", async () => {
    await scenario({ mode: "down", count: 1, failure: "error500" });
    expect(await siiError(client.getSeed())).toMatchObject({ code: "SERVICE_ERROR", retryable: true });
    await scenario({ mode: "down", count: 1, failure: "reset" });
    expect(await siiError(client.getSeed())).toMatchObject({ code: "NETWORK", retryable: true });
    expect(await client.getSeed()).toMatch(/^\d+$/);
  });

  it("down for one company only hits that company's uploads", async () => {
    await scenario({ mode: "down", rut: ISSUER_RUT, count: 1 });
    expect(await client.getSeed()).toMatch(/^\d+$/);
    expect(await siiError(send())).toMatchObject({ code: "HTTP_ERROR", httpStatus: 503, retryable: true });
    expect((await send()).status).toBe(0);
  });

  it("delay by time: held in SOK until the seconds pass, then it moves on", async () => {
    await scenario({ mode: "delay", seconds: 1, count: 1 });
    const { trackId } = await send();
    const q = () => client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId });
    expect((await q()).estado).toBe("REC");
    for (let i = 0; i < 4; i++) expect((await q()).estado).toBe("SOK");
    await new Promise((r) => setTimeout(r, 1100));
    expect((await q()).estado).toBe("EPR");
  });

  it("validates the scenario body", async () => {
    const res = await scenario({ mode: "explode" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("VALIDATION_FAILED");
    expect((await scenario({ mode: "reject", polls: 2 })).status).toBe(400);
    expect((await scenario({ mode: "reject", rut: "76086428-4" })).status).toBe(400);
  });
});

describe("boleta REST (39)", () => {
  it("token, upload of an EnvioBOLETA, status with statistics, rejected detail under a scenario", async () => {
    const caf39 = await simulatorCaf({ documentType: 39, from: 1, to: 50 });
    const b1 = await signedDte(caf39, 1, cert, "39");
    const env39 = await envelope([b1], cert);
    expect(env39.kind).toBe("EnvioBOLETA");
    const since = Date.now();
    const up = await client.uploadBoleta({ cert, companyRut: ISSUER_RUT, file: env39.xml });
    expect(up).toMatchObject({ status: 0, estado: "REC", duplicate: false });
    const seen: string[] = [];
    let st;
    for (let i = 0; i < 5; i++) {
      st = await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId: up.trackId });
      seen.push(st.estado);
      if (st.estado === "EPR") break;
    }
    expectStates({ seen, elapsedMs: Date.now() - since }, ["REC", "SOK", "FOK", "EPR"]);
    expect(st).toMatchObject({ outcome: "ACCEPTED", counts: [{ type: 39, informed: 1, accepted: 1, rejected: 0, objected: 0 }], details: [] });
    // the REST token is its own (channel rest); a forgotten one is renewed after a 401
    expect((await rows("select token from sim_tokens where channel = 'rest'")).length).toBe(1);
    await env.DB.prepare("delete from sim_tokens where channel = 'rest'").run();
    expect((await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId: up.trackId })).estado).toBe("EPR");

    await scenario({ mode: "reject", count: 1 });
    const b2 = await signedDte(caf39, 2, cert, "39");
    const up2 = await client.uploadBoleta({ cert, companyRut: ISSUER_RUT, file: (await envelope([b2], cert)).xml });
    let st2;
    for (let i = 0; i < 5; i++) st2 = await client.queryBoletaEnvio({ cert, companyRut: ISSUER_RUT, trackId: up2.trackId });
    expect(st2).toMatchObject({ estado: "EPR", outcome: "REJECTED", details: [{ type: 39, folio: 2, estado: "RCH", outcome: "REJECTED" }] });
    expect(st2!.details[0]!.errors.join()).toMatch(/SIM-RECHAZO/);

    // boletas do not go through DTEUpload, and the REST upload refuses non-Mozilla agents
    expect(await siiError(client.uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env39.xml }))).toMatchObject({ siiCode: "7" });
    const res = await simulatorFetch(new Request(`${BASE}/recursos/v1/boleta.electronica.envio`, { method: "POST", headers: { "User-Agent": "curl/8" }, body: "x" }));
    expect(res.status).toBe(401);
  });
});

describe("wiring", () => {
  it("siiClientFor(env) talks to the in-process simulator", async () => {
    const c = siiClientFor(env);
    expect(c.mode).toBe("simulator");
    expect(await c.getSeed()).toMatch(/^\d{12}$/);
  });

  it("outside simulator mode the simulator paths do not exist; the client points at the SII", async () => {
    const res = await app.fetch(new Request(`${BASE}/DTEWS/CrSeed.jws`, { method: "POST", body: soapRequest("getSeed") }), { ...env, SII_MODE: "certification" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("ROUTE_NOT_FOUND");
    expect(siiClientFor({ ...env, SII_MODE: "production" }).endpoints.soapBase).toBe("https://palena.sii.cl");
  });
});
