/**
 * The simulated SII (DECISIONS 15, 18, 19): a plain Hono sub-app mounted by the main app under
 * /simulator/sii, answering only when SII_MODE=simulator (404 otherwise). It speaks the SII's wire
 * protocol at the SII's relative paths, so the real client (../client.ts) talks to it unchanged:
 *
 *   POST /DTEWS/CrSeed.jws              SOAP getSeed            -> SII:RESPUESTA SEMILLA
 *   POST /DTEWS/GetTokenFromSeed.jws    SOAP getToken(pszXml)   -> TOKEN (signed seed checked)
 *   POST /DTEWS/QueryEstUp.jws          SOAP getEstUp           -> REC, SOK, FOK, EPR (+counts) | RSC/RFR/RCT
 *   POST /DTEWS/QueryEstDte.jws         SOAP getEstDte          -> DOK, DNK, FAU
 *   POST /cgi_dte/UPL/DTEUpload         multipart upload        -> RECEPCIONDTE STATUS/TRACKID
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
 * No API key: these pages exist only in simulator mode and hold only simulated data.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import { createDb, type Db } from "../../../../db/client";
import { respondError } from "../../../../http/errors/handler";
import type { AppEnv } from "../../../../http/types";
import { normalizeRut, parseRut } from "../../rut";
import { decodeXmlBytes, firstChild, parseXml, type XElement } from "../../xml";
import { verifyChildSignature } from "../../xmldsig";
import { buildRecepcionDte, buildRespuesta, parseMultipart, parseSoapRequest, soapFault, soapResponse, WireError, type ParsedPart } from "../wire";
import {
  addScenario,
  checkToken,
  clearScenarios,
  consumeSeed,
  envioDocuments,
  getEnvio,
  issueToken,
  registeredDocument,
  listScenarios,
  newSeed,
  saveEnvio,
  takeScenario,
  visibleState,
  scenarioQuery,
  consumeScenario,
  tokenQuery,
  tokenVerdict,
  envioByFileQuery,
  acceptedQueries,
  acceptedSet,
  acceptedAmong,
  pollIfAllowedQuery,
  type TokenRow,
  type Channel,
  type EnvioRow,
  type ScenarioRow,
} from "./store";
import { reclamoService, receptionRegister } from "./reception";
import { injectEnvio } from "./inject";
import { documentKeyText, envelopeDocumentKeys, ENVIO_GLOSA, precheckUpload, statsOf, validateEnvio, type DocumentKey, type EnvelopeKind, type TypeStats } from "./validate";

/** Paths of the simulator relative to its mount point, for the README and the docs. */
export const SIMULATOR_PATHS = [
  { method: "POST", path: "/DTEWS/CrSeed.jws", what: "SOAP CrSeed.getSeed" },
  { method: "POST", path: "/DTEWS/GetTokenFromSeed.jws", what: "SOAP GetTokenFromSeed.getToken (signed seed)" },
  { method: "POST", path: "/DTEWS/QueryEstUp.jws", what: "SOAP QueryEstUp.getEstUp (envelope state)" },
  { method: "POST", path: "/DTEWS/QueryEstDte.jws", what: "SOAP QueryEstDte.getEstDte (document state)" },
  { method: "POST", path: "/cgi_dte/UPL/DTEUpload", what: "DTEUpload multipart (EnvioDTE)" },
  { method: "GET", path: "/recursos/v1/boleta.electronica.semilla", what: "Boleta REST seed" },
  { method: "POST", path: "/recursos/v1/boleta.electronica.token", what: "Boleta REST token" },
  { method: "POST", path: "/recursos/v1/boleta.electronica.envio", what: "Boleta REST upload (EnvioBOLETA)" },
  { method: "GET", path: "/recursos/v1/boleta.electronica.envio/{rut}-{dv}-{trackid}", what: "Boleta REST envelope status" },
  { method: "GET", path: "/scenario", what: "List active scenarios" },
  { method: "POST", path: "/scenario", what: "Add a scenario (accept, reject, object, delay, down)" },
  { method: "DELETE", path: "/scenario", what: "Remove all scenarios" },
] as const;

/** Largest envelope the simulator takes (the main app's body limit is 2 MiB anyway). */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

type C = Context<AppEnv>;

const xml = (c: C, body: string, status = 200) => c.body(body, status as 200, { "Content-Type": "text/xml; charset=utf-8" });

function numAtencion(now: Date): string {
  return `${Math.floor(Math.random() * 9e5) + 1e5} (${now.toISOString().slice(0, 19).replace("T", " ")})`;
}

function cookieToken(c: C): string | undefined {
  const m = /(?:^|;\s*)TOKEN=([^;]+)/.exec(c.req.header("cookie") ?? "");
  return m?.[1]?.trim();
}

// ---- token request --------------------------------------------------------------------------------

async function tokenAnswer(db: Db, pszXml: string, channel: Channel, now: Date): Promise<string> {
  const fail = (estado: string, glosa: string) => buildRespuesta([["ESTADO", estado], ["GLOSA", glosa]]);
  let root: XElement;
  let doc;
  try {
    doc = parseXml(pszXml.trim(), "The token request");
    root = doc.documentElement as XElement;
  } catch {
    return fail("01", "Error: XML de entrada mal formado");
  }
  const item = root.localName === "getToken" ? firstChild(root, "item") : undefined;
  if (!item) return fail("02", "Error: la raiz debe ser getToken/item");
  const sig = await verifyChildSignature(doc, root, { fallbacks: true });
  if (!sig.ok) {
    if (sig.failure === "SIGNATURE_MISSING") return fail("04", "Error: solicitud sin firma");
    if (/different keys/.test(sig.message ?? "")) return fail("21", "Error: la llave publica no corresponde al certificado");
    if (/carries no key/.test(sig.message ?? "")) return fail("11", "Error: la firma no trae certificado");
    return fail("05", `Error: firma invalida (${sig.message ?? sig.failure})`);
  }
  if (sig.reference !== "") return fail("05", "Error: la firma debe cubrir el documento completo (Reference URI=\"\")");
  if (!sig.signer) return fail("11", "Error: la firma no trae certificado X509");
  const seed = (firstChild(item, "Semilla")?.textContent ?? "").trim();
  if (!/^\d+$/.test(seed)) return fail("06", "Error: falta la semilla");
  const problem = await consumeSeed(db, seed, channel, now);
  if (problem) return fail("08", problem === "expired" ? "Error: semilla vencida (mas de 2 minutos)" : problem === "used" ? "Error: semilla ya utilizada" : "Error: semilla no existe");
  if (sig.signer.notBefore.getTime() > now.getTime() || sig.signer.notAfter.getTime() < now.getTime()) return fail("-3", "Error de autenticacion: certificado no vigente");
  if (!sig.signer.rut) return fail("-07", "Error: el certificado no trae el RUT del titular");
  const token = await issueToken(db, channel, sig.signer.rut, sig.signer.fingerprintSha1, now);
  return buildRespuesta([["ESTADO", "00"], ["GLOSA", "Token Creado"]], [["TOKEN", token]]);
}

// ---- upload ----------------------------------------------------------------------------------------

interface UploadAnswer {
  status: number;
  trackId?: number;
  errors: string[];
  rutSender?: string;
  rutCompany?: string;
  file?: string;
  timestamp: string;
  duplicate?: boolean;
}

function fieldsInOrder(parts: ParsedPart[]): Record<string, ParsedPart> | string {
  const want = ["rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"];
  const names = parts.map((p) => p.name);
  if (names.length !== want.length || names.some((n, i) => n !== want[i])) return `Campos del formulario deben ser ${want.join(", ")} en ese orden (recibidos: ${names.join(", ") || "ninguno"})`;
  return Object.fromEntries(parts.map((p) => [p.name, p]));
}

async function sha256Hex(b: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(b)));
  return [...d].map((x) => x.toString(16).padStart(2, "0")).join("");
}

type UploadGuard = (c: C) => Response | null;

/**
 * An upload, with as few D1 round trips as its checks allow: the request is read and checked in
 * memory first (form, RUTs, file, XML precheck, hash, the documents' keys), then ONE batch reads
 * everything the answer may depend on (global and company "down" scenarios, token, same file
 * uploaded before, accept/reject/object/delay scenario, accepted folios among the envelope's), then
 * ONE batch records the envelope and its documents. The checks are answered in the SII's order as
 * before: a global "down" first, then `guard` (boleta REST: User-Agent), the token, the form, a
 * company "down", the file, the duplicate file, the scenario, the validation. A scenario with a count
 * is consumed when it applies (one more round trip then).
 */
async function handleUpload(c: C, db: Db, channel: Channel, kind: EnvelopeKind, now: Date, opts: { guard?: UploadGuard; restAuth?: boolean } = {}): Promise<UploadAnswer | Response> {
  const timestamp = now.toISOString().slice(0, 19).replace("T", " ");
  const answer = (status: number, errors: string[], extra: Partial<UploadAnswer> = {}): UploadAnswer => ({ status, errors, timestamp, ...extra });
  const token = cookieToken(c);

  // In memory: everything that needs no database, its first failure kept for its turn.
  let early: UploadAnswer | null = null;
  let company: string | null = null;
  let sender: string | null = null;
  let base: { rutSender: string; rutCompany: string; file: string } | null = null;
  let file: Uint8Array | null = null;
  let pre: ReturnType<typeof precheckUpload> | null = null;
  let sha: string | null = null;
  let keys: DocumentKey[] = [];
  const declared = c.req.header("content-length");
  const body = new Uint8Array(await c.req.arrayBuffer());
  if (/chunked/i.test(c.req.header("transfer-encoding") ?? "")) early = answer(3, ["LPX-00007: unexpected end-of-file (el envio debe llevar Content-Length, no chunked)"]);
  else if (declared === undefined || !/^\d+$/.test(declared)) early = answer(3, ["Falta Content-Length"]);
  else if (Number(declared) !== body.length) early = answer(3, [`Archivo cortado: Content-Length ${declared}, recibidos ${body.length} bytes`]);
  else {
    let parts: ParsedPart[] | null = null;
    try {
      parts = parseMultipart(body, c.req.header("content-type") ?? "");
    } catch (e) {
      early = answer(3, [`Formulario multipart invalido: ${(e as WireError).message}`]);
    }
    const f = parts && fieldsInOrder(parts);
    if (typeof f === "string") early = answer(7, [f]);
    else if (f) {
      try {
        sender = normalizeRut(`${f.rutSender!.text.trim()}-${f.dvSender!.text.trim()}`);
      } catch {
        early = answer(1, ["rutSender/dvSender no es un RUT valido"]);
      }
      if (sender !== null) {
        try {
          company = normalizeRut(`${f.rutCompany!.text.trim()}-${f.dvCompany!.text.trim()}`);
        } catch {
          early = answer(6, ["rutCompany/dvCompany no es un RUT valido"], { rutSender: sender });
        }
      }
      if (sender !== null && company !== null) {
        base = { rutSender: sender, rutCompany: company, file: f.archivo!.filename ?? "archivo" };
        file = f.archivo!.data;
        if (file.length > 0 && file.length <= MAX_FILE_BYTES) {
          pre = precheckUpload(decodeXmlBytes(file), kind);
          if (pre.ok) {
            sha = await sha256Hex(file);
            keys = envelopeDocumentKeys(pre.doc);
          }
        }
      }
    }
  }

  // One round trip for every read.
  const globalDownQ = scenarioQuery(db, ["down"], null);
  const tokenQ = token ? tokenQuery(db, token) : null;
  const companyDownQ = company !== null ? scenarioQuery(db, ["down"], company, { exact: true }) : null;
  const previousQ = company !== null && sha !== null ? envioByFileQuery(db, channel, company, sha) : null;
  const scenarioQ = company !== null && sha !== null ? scenarioQuery(db, ["accept", "reject", "object", "delay"], company) : null;
  const acceptedQs = sha !== null ? acceptedQueries(db, keys) : [];
  const queries = [globalDownQ, tokenQ, companyDownQ, previousQ, scenarioQ, ...acceptedQs].filter((q) => q !== null);
  const results = (await db.batch(queries as [(typeof queries)[number], ...(typeof queries)[number][]])) as unknown[][];
  let at = 0;
  const next = <T,>(q: unknown): T | undefined => (q === null ? undefined : (results[at++]![0] as T | undefined));
  const globalDown = next<ScenarioRow>(globalDownQ);
  const tokenRow = next<TokenRow>(tokenQ);
  const companyDown = next<ScenarioRow>(companyDownQ);
  const previous = next<EnvioRow>(previousQ);
  const scenario = next<ScenarioRow>(scenarioQ);
  const acceptedRows = results.slice(at) as { issuerRut: string; type: number; folio: number }[][];

  if (globalDown) {
    await consumeScenario(db, globalDown);
    throw new SimulatedOutage(globalDown.failure);
  }
  const refused = opts.guard?.(c);
  if (refused) return refused;
  const tok = tokenVerdict(token, tokenRow, channel, now);
  if (!tok.ok) {
    if (opts.restAuth) return c.json({ error: "Unauthorized: token invalido" }, 401);
    return answer(5, [tok.problem === "expired" ? "Token vencido" : "No esta autenticado (TOKEN invalido)"]);
  }
  if (early) return early;
  if (!base || !file || sender === null || company === null) return answer(3, ["Formulario multipart invalido"]);
  if (sender !== tok.rut) return answer(1, [`El usuario autenticado (${tok.rut}) no corresponde a rutSender ${sender}`], base);
  if (companyDown) {
    await consumeScenario(db, companyDown);
    throw new SimulatedOutage(companyDown.failure);
  }
  if (file.length === 0 || file.length > MAX_FILE_BYTES) return answer(2, [`Tamano de archivo invalido (${file.length} bytes)`], base);
  if (!pre || !pre.ok) return answer(7, pre && !pre.ok ? pre.errors : [], base);
  if (previous) return answer(99, [`Archivo ya fue enviado con Trackid ${previous.trackId}`], { ...base, trackId: previous.trackId, duplicate: true });
  if (scenario) await consumeScenario(db, scenario);
  const prefetched = acceptedSet(acceptedRows);
  const prefetchedKeys = new Set(keys.map(documentKeyText));
  const verdict = await validateEnvio(pre.doc, kind, {
    companyRut: company,
    now,
    // The keys validateEnvio asks about are the prefetched ones; anything else is looked up.
    acceptedAmong: async (asked) => (asked.every((k) => prefetchedKeys.has(documentKeyText(k))) ? prefetched : acceptedAmong(db, asked)),
  });
  if (verdict.finalStatus === "EPR" && scenario) {
    for (const d of verdict.documents) {
      if (scenario.mode === "reject") {
        d.status = "RCH";
        d.errors.push("SIM-RECHAZO Rechazo forzado por escenario del simulador");
      } else if (scenario.mode === "object" && d.status === "DOK") {
        d.status = "RLV";
        d.errors.push("SIM-REPARO Aceptado con reparos por escenario del simulador");
      }
    }
  }
  const stats = statsOf(verdict.documents);
  const trackId = await saveEnvio(db, { channel, companyRut: company, senderRut: sender, fileName: base.file, sha256: sha!, size: file.length, now, verdict, stats, scenario });
  return answer(0, [], { ...base, trackId });
}

class SimulatedOutage extends Error {
  constructor(readonly failure: ScenarioRow["failure"]) {
    super("simulated outage");
  }
}

/**
 * The failure of a "down" scenario: http503 = 503 page; error500 = HTTP 200 with an "Error 500" body
 * (what the SII gateway sends); reset = headers arrive, then the body stream errors (a dropped
 * connection, seen by the client while reading).
 */
function outage(c: C, failure: ScenarioRow["failure"]) {
  if (failure === "error500") return c.text("Error 500: Internal Server Error (SII simulator scenario: down)", 200);
  if (failure === "reset") {
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        ctrl.error(new Error("connection reset by peer (SII simulator scenario: down)"));
      },
    });
    return new Response(body, { status: 200, headers: { "Content-Type": "text/xml" } });
  }
  return c.html("<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1><p>SII simulator scenario: down</p></body></html>", 503, { "Retry-After": "5" });
}

// ---- status ----------------------------------------------------------------------------------------

function countsBody(stats: TypeStats[]): [string, string][] {
  const out: [string, string][] = [];
  for (const s of stats) {
    out.push(["TIPO_DOCTO", String(s.type)], ["INFORMADOS", String(s.informed)], ["ACEPTADOS", String(s.accepted)], ["RECHAZADOS", String(s.rejected)], ["REPAROS", String(s.objected)]);
  }
  return out;
}

function tokenEstado(problem: "missing" | "unknown" | "expired"): [string, string] {
  return problem === "expired" ? ["002", "TOKEN VENCIDO"] : ["001", "TOKEN NO EXISTE"];
}

/**
 * QueryEstUp.getEstUp in one round trip: the global "down" scenario, the token and the poll count
 * update (made only when the token is valid and no global "down" is set) go in one batch.
 * `parsed` is the SOAP request, or the fault to answer when it could not be read (after "down").
 */
async function estUp(c: C, db: Db, parsed: { method: string; params: Record<string, string> } | { fault: string }, now: Date): Promise<Response> {
  const p = "params" in parsed && parsed.method === "getEstUp" ? parsed.params : null;
  const token = p?.Token?.trim();
  let company: string | null = null;
  try {
    if (p) company = normalizeRut(`${(p.RutCompania ?? "").trim()}-${(p.DvCompania ?? "").trim()}`);
  } catch {
    company = null;
  }
  const trackId = Number((p?.TrackId ?? "").trim());
  const globalDownQ = scenarioQuery(db, ["down"], null);
  const tokenQ = token ? tokenQuery(db, token) : null;
  const pollQ = token && company !== null && Number.isSafeInteger(trackId) ? pollIfAllowedQuery(db, { trackId, companyRut: company, channel: "soap", token, now }) : null;
  const queries = [globalDownQ, tokenQ, pollQ].filter((q) => q !== null);
  const results = (await db.batch(queries as [(typeof queries)[number], ...(typeof queries)[number][]])) as unknown[][];
  const globalDown = results[0]![0] as ScenarioRow | undefined;
  if (globalDown) {
    await consumeScenario(db, globalDown);
    return outage(c, globalDown.failure);
  }
  if ("fault" in parsed) return xml(c, soapFault(parsed.fault, "soapenv:Client"), 500);
  if (!p) return xml(c, soapFault(`No such operation '${parsed.method}' in QueryEstUp`, "soapenv:Client"), 500);
  const tokenRow = tokenQ ? (results[1]![0] as TokenRow | undefined) : undefined;
  const e = pollQ ? (results[tokenQ ? 2 : 1]![0] as EnvioRow | undefined) : undefined;
  const answer = (body: string) => xml(c, soapResponse(parsed.method, body));
  const tok = tokenVerdict(token, tokenRow, "soap", now);
  if (!tok.ok) {
    const [estado, glosa] = tokenEstado(tok.problem);
    return answer(buildRespuesta([["ESTADO", estado], ["GLOSA", glosa]]));
  }
  if (company === null) return answer(buildRespuesta([["ESTADO", "-10"], ["GLOSA", "ERROR: VALIDA RUT EMPRESA"]]));
  if (!e) {
    return answer(buildRespuesta([["ESTADO", "-11"], ["GLOSA", "ERROR: TRACKID NO EXISTE PARA ESTA EMPRESA"], ["ERR_CODE", "1"], ["TRACKID", (p.TrackId ?? "").trim()]]));
  }
  // The row carries the poll count this call made.
  const state = visibleState(e, e.polls, now);
  const hdr: [string, string][] = [["TRACKID", String(e.trackId)], ["ESTADO", state], ["GLOSA", ENVIO_GLOSA[state] ?? state], ["NUM_ATENCION", numAtencion(now)]];
  if (state !== "EPR") return answer(buildRespuesta(hdr));
  return answer(buildRespuesta(hdr, countsBody(JSON.parse(e.stats) as TypeStats[])));
}

async function estDte(db: Db, p: Record<string, string>, now: Date): Promise<string> {
  const tok = await checkToken(db, p.Token?.trim(), "soap", now);
  if (!tok.ok) {
    const [estado, glosa] = tokenEstado(tok.problem);
    return buildRespuesta([["ESTADO", estado], ["GLOSA_ESTADO", glosa]]);
  }
  let issuer: string, receiver: string;
  try {
    issuer = normalizeRut(`${(p.RutCompania ?? "").trim()}-${(p.DvCompania ?? "").trim()}`);
    receiver = normalizeRut(`${(p.RutReceptor ?? "").trim()}-${(p.DvReceptor ?? "").trim()}`);
    parseRut(`${(p.RutConsultante ?? "").trim()}-${(p.DvConsultante ?? "").trim()}`);
  } catch {
    return buildRespuesta([["ESTADO", "-10"], ["GLOSA_ESTADO", "ERROR: RUT INVALIDO"]]);
  }
  const fecha = /^(\d{2})(\d{2})(\d{4})$/.exec((p.FechaEmisionDte ?? "").trim());
  if (!fecha) return buildRespuesta([["ESTADO", "-12"], ["GLOSA_ESTADO", "ERROR: FECHA DEBE SER DDMMAAAA"]]);
  const type = Number(p.TipoDte);
  const folio = Number(p.FolioDte);
  const hdr = (estado: string, glosa: string, err: string, glosaErr: string): string =>
    buildRespuesta([["ESTADO", estado], ["GLOSA_ESTADO", glosa], ["ERR_CODE", err], ["GLOSA_ERR", glosaErr], ["NUM_ATENCION", numAtencion(now)]]);
  const doc = await registeredDocument(db, issuer, type, folio);
  const envio = doc ? await getEnvio(db, doc.trackId) : undefined;
  if (!doc || !envio || visibleState(envio, envio.polls, now) !== "EPR") return hdr("FAU", "Documento No Recibido por el SII.", "2", "Documento no recibido");
  if (doc.status === "RCH") return hdr("FAU", "Documento No Recibido por el SII.", "2", `Documento rechazado en el envio ${doc.trackId}`);
  const date = `${fecha[3]}-${fecha[2]}-${fecha[1]}`;
  if (doc.receiverRut !== receiver || doc.issueDate !== date || doc.total !== String(p.MontoDte ?? "").trim()) {
    return hdr("DNK", "Documento Recibido por el SII. Datos No Coinciden con los Registrados.", "3", "Receptor, fecha o monto distintos");
  }
  return hdr("DOK", "Documento Recibido por el SII. Datos Coinciden con los Registrados.", "0", doc.status === "RLV" ? "Aceptado con reparos" : "");
}

function boletaStatusJson(e: EnvioRow, state: string, docs: Awaited<ReturnType<typeof envioDocuments>>) {
  const stats = state === "EPR" ? (JSON.parse(e.stats) as TypeStats[]) : [];
  return {
    rut_emisor: e.companyRut,
    rut_envia: e.senderRut,
    trackid: e.trackId,
    fecha_recepcion: e.receivedAt.slice(0, 19).replace("T", " "),
    estado: state,
    estadistica: stats.map((s) => ({ tipo: s.type, informados: s.informed, aceptados: s.accepted, rechazados: s.rejected, reparos: s.objected })),
    detalle_rep_rech:
      state === "EPR"
        ? docs
            .filter((d) => d.status !== "DOK")
            .map((d) => ({ tipo: d.documentType, folio: d.folio, estado: d.status, error: (JSON.parse(d.errors) as string[]).map((x) => ({ descripcion: x })) }))
        : [],
  };
}

// ---- scenario control -------------------------------------------------------------------------------

const scenarioSchema = z
  .object({
    mode: z.enum(["accept", "reject", "object", "delay", "down"]),
    count: z.number().int().min(1).max(10_000).optional(),
    rut: z.string().min(3).max(20).optional(),
    polls: z.number().int().min(1).max(1000).optional(),
    seconds: z.number().int().min(1).max(86_400).optional(),
    failure: z.enum(["http503", "error500", "reset"]).optional(),
  })
  .strict();

function scenarioJson(s: ScenarioRow) {
  return {
    id: s.id,
    mode: s.mode,
    remaining: s.remaining,
    rut: s.rut,
    ...(s.mode === "delay" ? { polls: s.delayPolls, seconds: s.delaySeconds } : {}),
    ...(s.mode === "down" ? { failure: s.failure } : {}),
    created_at: s.createdAt,
  };
}

// ---- the app ---------------------------------------------------------------------------------------

/** Routes carry the full /simulator/sii prefix: the main app forwards /simulator/sii/* here. */
export const SIMULATOR_BASE_PATH = "/simulator/sii";

export const simulatorApp = new Hono<AppEnv>().basePath(SIMULATOR_BASE_PATH);

simulatorApp.notFound((c) => respondError(c, "ROUTE_NOT_FOUND", `No simulated SII operation at ${c.req.method} ${new URL(c.req.url).pathname}.`));

// Only in simulator mode; everywhere else these paths do not exist.
simulatorApp.use("*", async (c, next) => {
  if (c.env.SII_MODE !== "simulator") {
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
  const down = await takeScenario(createDb(c.env.DB), ["down"], null);
  if (down) return outage(c, down.failure);
  await next();
});

simulatorApp.onError((err, c) => {
  if (err instanceof SimulatedOutage) return outage(c, err.failure);
  console.error(JSON.stringify({ level: "error", msg: "SII simulator failure", error: String(err?.message), stack: err?.stack }));
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
simulatorApp.post("/reception/inject", injectEnvio);
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
  const pollQ = token && company !== null && Number.isSafeInteger(trackId) ? pollIfAllowedQuery(db, { trackId, companyRut: company, channel: "rest", token, now }) : null;
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

simulatorApp.get("/scenario", async (c) => c.json({ data: (await listScenarios(createDb(c.env.DB))).map(scenarioJson) }));

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
  const row = await addScenario(createDb(c.env.DB), { ...parsed.data, ...(rut ? { rut } : {}) }, new Date());
  return c.json(scenarioJson(row), 201);
});

simulatorApp.delete("/scenario", async (c) => c.json({ deleted: await clearScenarios(createDb(c.env.DB)) }));

// CAF grants (DECISIONS 18, POST /simulator/sii/caf) live in ./caf-route.ts: the main app mounts
// that documented route before handing the rest of /simulator/sii/* to this sub-app.
