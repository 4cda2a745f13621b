/**
 * The simulated SII (DECISIONS 15, 18, 19): a plain Hono sub-app mounted by the main app under
 * /simulator/sii, answering only whom ./gate.ts lets in (404 otherwise). It speaks the SII's wire
 * protocol at the SII's relative paths, so the real client (../client.ts) talks to it unchanged:
 *
 *   POST /DTEWS/CrSeed.jws              SOAP getSeed            -> SII:RESPUESTA SEMILLA
 *   POST /DTEWS/GetTokenFromSeed.jws    SOAP getToken(pszXml)   -> TOKEN (signed seed checked)
 *   POST /DTEWS/QueryEstUp.jws          SOAP getEstUp           -> REC, SOK, FOK, EPR (+counts) | RSC/RFR/RCT
 *   POST /DTEWS/QueryEstDte.jws         SOAP getEstDte          -> DOK, DNK, FAU
 *   POST /cgi_dte/UPL/DTEUpload         multipart upload        -> RECEPCIONDTE STATUS/TRACKID
 *   POST /cgi_rtc/RTC/RTCAnotEnvio.cgi  multipart AEC upload    -> RECEPCIONAEC STATUS/TRACKID (./rpetc-upload.ts)
 *   POST /DTEWS/services/wsRPETCConsulta SOAP getEstEnvio, getEstCesion, getEstCesionRelac (./rpetc-status.ts)
 *   GET  /recursos/v1/boleta.electronica.semilla                -> SEMILLA
 *   POST /recursos/v1/boleta.electronica.token                  -> TOKEN
 *   POST /recursos/v1/boleta.electronica.envio                  -> JSON {trackid, estado: REC}
 *   GET  /recursos/v1/boleta.electronica.envio/{rut}-{dv}-{trackid} -> JSON estado/estadistica/detalle_rep_rech
 *   GET|POST|DELETE /scenario                                   -> scenario control (JSON)
 *
 * Scenario contract (POST /simulator/sii/scenario, JSON):
 *   { "mode": "accept" | "reject" | "object" | "delay" | "down",
 *     "count"?: n      // next n uploads (for "down": next n calls); default until DELETE
 *     "rut"?: "76086428-5"  // only uploads of that company ("down" with rut: only its uploads)
 *     "polls"?: n, "seconds"?: s,   // "delay": stay in REC/SOK for n polls and/or s seconds (default 3 polls)
 *     "failure"?: "http503" | "error500" | "reset" }  // "down": 503 page (default), HTTP 200 "Error 500"
 *                                                  // body (the SII gateway's), or a dropped connection
 *   accept = normal checks; reject = every document RCH (SIM-RECHAZO); object = documents that pass
 *   are accepted with reparos (RLV, SIM-REPARO); down = every call but /scenario and /caf fails.
 *   The newest matching scenario applies. GET lists them; DELETE removes them all.
 * No API key in local development (ENVIRONMENT=development, SII_MODE=simulator). Elsewhere (tests,
 * staging, production...) only a test key (X-Api-Key: dte_test_…) reaches these pages; the SII client
 * of a company calls in-process. Scenarios belong to the API client that set them (the key's, or for
 * an in-process call the company's): GET, DELETE and the calls that apply them see only that
 * client's; a `rut` must be one of its test companies (./gate.ts).
 */
import { Hono } from "hono";
import { createDb, type Db } from "../../../storage/db/client";
import { respondError } from "../../../http/errors/handler";
import type { AppEnv } from "../../../http/types";
import { normalizeRut } from "../documents/rut";
import { buildRecepcionDte, buildRespuesta, parseSoapRequest, soapFault, soapResponse } from "../sii/wire";
import { addScenario, clearScenarios, envioDocuments, listScenarios, newSeed, takeScenario, visibleState, tokenQuery, tokenVerdict, pollIfAllowedQuery } from "./store";
import { log } from "../../../lib/log";
import { C, cookieToken, xml } from "./common";
import { tokenAnswer } from "./auth";
import { SimulatedOutage, handleUpload, outage } from "./upload";
import { boletaStatusJson, estDte, estUp } from "./status";
import { scenarioJson, scenarioSchema } from "./scenario";
import { ownTestRuts, simulatorOwner, simulatorReachable } from "./gate";
import { reclamoService, receptionDocument, receptionRegister } from "./reception";
import { injectEnvio } from "./inject";
import { rpetcUpload } from "./rpetc-upload";
import { rpetcConsulta } from "./rpetc-status";

// ---- the app ---------------------------------------------------------------------------------------

/** Routes carry the full /simulator/sii prefix: the main app forwards /simulator/sii/* here. */
export const SIMULATOR_BASE_PATH = "/simulator/sii";

export const simulatorApp = new Hono<AppEnv>().basePath(SIMULATOR_BASE_PATH);

simulatorApp.notFound((c) => respondError(c, "ROUTE_NOT_FOUND", `No simulated SII operation at ${c.req.method} ${new URL(c.req.url).pathname}.`));

// Open in local development; elsewhere only to test mode (./gate.ts). For anyone else these paths do not exist.
simulatorApp.use("*", async (c, next) => {
  if (!(await simulatorReachable(c))) {
    return respondError(c, "ROUTE_NOT_FOUND", `No operation at ${c.req.method} ${new URL(c.req.url).pathname}. The API is described at /openapi.json and /docs.`);
  }
  await next();
});

// Scenario "down": every SII call fails with 503 (scenario control and CAF grants stay up). The
// uploads and QueryEstUp check it themselves, in the batch of their other reads (one round trip).
simulatorApp.use("*", async (c, next) => {
  const path = new URL(c.req.url).pathname;
  if (/\/simulator\/sii\/(scenario|caf)\/?$/.test(path)) return next();
  if (c.req.method === "POST" && /\/simulator\/sii\/(cgi_dte\/UPL\/DTEUpload|recursos\/v1\/boleta\.electronica\.envio|DTEWS\/QueryEstUp\.jws)$/.test(path)) return next();
  const down = await takeScenario(createDb(c.env.DB), simulatorOwner(c), ["down"], null);
  if (down) return outage(c, down.failure);
  await next();
});

simulatorApp.onError((err, c) => {
  if (err instanceof SimulatedOutage) return outage(c, err.failure);
  log("error", "SII simulator failure", { error: String(err?.message), stack: err?.stack });
  // What the SII's gateway does on an internal failure.
  return c.text("Error 500: internal error of the SII simulator", 500);
});

async function soapOp(c: C, service: string, handler: (db: Db, method: string, params: Record<string, string>, now: Date) => Promise<string | null>) {
  let req;
  try {
    req = parseSoapRequest(await c.req.text());
  } catch (e) {
    return xml(c, soapFault(`${service}: ${(e as Error).message}`, "soapenv:Client"), 500);
  }
  const out = await handler(createDb(c.env.DB), req.method, req.params, new Date());
  if (out === null) return xml(c, soapFault(`No such operation '${req.method}' in ${service}`, "soapenv:Client"), 500);
  return xml(c, soapResponse(req.method, out));
}

simulatorApp.post("/DTEWS/CrSeed.jws", (c) =>
  soapOp(c, "CrSeed", async (db, method, _p, now) => {
    if (method !== "getSeed") return null;
    const seed = await newSeed(db, "soap", now);
    return buildRespuesta([["ESTADO", "00"]], [["SEMILLA", seed]]);
  }),
);

simulatorApp.post("/DTEWS/GetTokenFromSeed.jws", (c) =>
  soapOp(c, "GetTokenFromSeed", async (db, method, p, now) => {
    if (method !== "getToken") return null;
    return tokenAnswer(db, p.pszXml ?? "", "soap", now);
  }),
);

simulatorApp.post("/DTEWS/QueryEstUp.jws", async (c) => {
  let parsed: { method: string; params: Record<string, string> } | { fault: string };
  try {
    parsed = parseSoapRequest(await c.req.text());
  } catch (e) {
    parsed = { fault: `QueryEstUp: ${(e as Error).message}` };
  }
  return estUp(c, createDb(c.env.DB), parsed, new Date());
});

simulatorApp.post("/WSREGISTRORECLAMODTE/registroreclamodteservice", reclamoService);
simulatorApp.get("/reception/register", receptionRegister);
simulatorApp.get("/reception/document", receptionDocument);
simulatorApp.post("/reception/inject", injectEnvio);
simulatorApp.post("/cgi_rtc/RTC/RTCAnotEnvio.cgi", rpetcUpload);
simulatorApp.post("/DTEWS/services/wsRPETCConsulta", rpetcConsulta);
simulatorApp.post("/DTEWS/QueryEstDte.jws", (c) => soapOp(c, "QueryEstDte", async (db, method, p, now) => (method === "getEstDte" ? estDte(db, p, now) : null)));

simulatorApp.post("/cgi_dte/UPL/DTEUpload", async (c) => {
  const now = new Date();
  const a = await handleUpload(c, createDb(c.env.DB), "soap", "EnvioDTE", now);
  if (a instanceof Response) return a;
  const body = buildRecepcionDte({
    ...(a.rutSender ? { rutSender: a.rutSender } : {}),
    ...(a.rutCompany ? { rutCompany: a.rutCompany } : {}),
    ...(a.file ? { file: a.file } : {}),
    timestamp: a.timestamp,
    status: a.status,
    ...(a.trackId !== undefined ? { trackId: String(a.trackId) } : {}),
    errors: a.errors,
  });
  return c.body(body, 200, { "Content-Type": "text/xml; charset=ISO-8859-1" });
});

// Boleta REST

function restGuard(c: C): Response | null {
  if (!/mozilla/i.test(c.req.header("user-agent") ?? "")) return c.json({ error: "Unauthorized: User-Agent no permitido" }, 401);
  return null;
}

simulatorApp.get("/recursos/v1/boleta.electronica.semilla", async (c) => {
  const seed = await newSeed(createDb(c.env.DB), "rest", new Date());
  return xml(c, buildRespuesta([["ESTADO", "00"]], [["SEMILLA", seed]]));
});

simulatorApp.post("/recursos/v1/boleta.electronica.token", async (c) => {
  const body = await c.req.text();
  return xml(c, await tokenAnswer(createDb(c.env.DB), body, "rest", new Date()));
});

simulatorApp.post("/recursos/v1/boleta.electronica.envio", async (c) => {
  const a = await handleUpload(c, createDb(c.env.DB), "rest", "EnvioBOLETA", new Date(), { guard: restGuard, restAuth: true });
  if (a instanceof Response) return a;
  if (a.status !== 0 && a.status !== 99) return c.json({ status: a.status, errors: a.errors }, 400);
  return c.json({ rut_emisor: a.rutCompany, rut_envia: a.rutSender, trackid: a.trackId, fecha_recepcion: a.timestamp, estado: "REC", file: a.file, ...(a.duplicate ? { duplicado: true } : {}) });
});

simulatorApp.get("/recursos/v1/boleta.electronica.envio/:id", async (c) => {
  const refused = restGuard(c);
  if (refused) return refused;
  const db = createDb(c.env.DB);
  const now = new Date();
  const m = /^(\d{1,9})-([\dkK])-(\d{1,15})$/.exec(c.req.param("id"));
  let company: string | null = null;
  try {
    if (m) company = normalizeRut(`${m[1]}-${m[2]}`);
  } catch {
    company = null;
  }
  // Token check and poll count in one round trip (the count only moves with a valid token).
  const token = cookieToken(c);
  const trackId = Number(m?.[3]);
  const pollQ = token && company !== null && Number.isSafeInteger(trackId) ? pollIfAllowedQuery(db, { trackId, companyRut: company, channel: "rest", token, now, owner: simulatorOwner(c) }) : null;
  const [tokenRows, polled] = token ? await db.batch(pollQ ? [tokenQuery(db, token), pollQ] : [tokenQuery(db, token)]) : [[], undefined];
  if (!tokenVerdict(token, tokenRows[0], "rest", now).ok) return c.json({ error: "Unauthorized: token invalido" }, 401);
  if (!m) return c.json({ error: "Formato esperado {rut}-{dv}-{trackid}" }, 400);
  if (company === null) return c.json({ error: "RUT invalido" }, 400);
  const e = polled?.[0];
  if (!e) return c.json({ error: "Envio no encontrado" }, 404);
  const state = visibleState(e, e.polls, now);
  return c.json(boletaStatusJson(e, state, state === "EPR" ? await envioDocuments(db, e.trackId) : []));
});

// Scenario control

simulatorApp.get("/scenario", async (c) => {
  return c.json({ data: (await listScenarios(createDb(c.env.DB), simulatorOwner(c))).map(scenarioJson) });
});

simulatorApp.post("/scenario", async (c) => {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return respondError(c, "VALIDATION_FAILED", "The body must be JSON: {mode, count?, rut?, polls?, seconds?}.");
  }
  const parsed = scenarioSchema.safeParse(raw);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ field: i.path.join(".") || "(body)", message: i.message }));
    return respondError(c, "VALIDATION_FAILED", `Invalid scenario: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
  }
  let rut: string | undefined;
  if (parsed.data.rut !== undefined) {
    try {
      rut = normalizeRut(parsed.data.rut);
    } catch (e) {
      return respondError(c, "VALIDATION_FAILED", `rut: ${(e as Error).message}`, [{ field: "rut", message: (e as Error).message }]);
    }
  }
  if ((parsed.data.polls !== undefined || parsed.data.seconds !== undefined) && parsed.data.mode !== "delay") {
    return respondError(c, "VALIDATION_FAILED", "polls and seconds apply to mode delay only.", [{ field: "mode", message: "polls/seconds need mode delay" }]);
  }
  if (parsed.data.failure !== undefined && parsed.data.mode !== "down") {
    return respondError(c, "VALIDATION_FAILED", "failure applies to mode down only.", [{ field: "failure", message: "failure needs mode down" }]);
  }
  const db = createDb(c.env.DB);
  const own = rut ? await ownTestRuts(c, db) : undefined;
  if (rut && own && !own.includes(rut)) {
    const message = `${rut} is not the RUT of one of your active test-mode companies: a scenario applies only to your own companies' calls (omit rut for all of them).`;
    return respondError(c, "SIMULATOR_RUT_NOT_OWNED", message, [{ field: "rut", message: "Not one of your test-mode companies" }]);
  }
  const row = await addScenario(db, simulatorOwner(c), { ...parsed.data, ...(rut ? { rut } : {}) }, new Date());
  return c.json(scenarioJson(row), 201);
});

simulatorApp.delete("/scenario", async (c) => {
  return c.json({ deleted: await clearScenarios(createDb(c.env.DB), simulatorOwner(c)) });
});

// CAF grants (DECISIONS 18, POST /simulator/sii/caf) live in ./caf-route.ts: the main app mounts
// that documented route before handing the rest of /simulator/sii/* to this sub-app.
