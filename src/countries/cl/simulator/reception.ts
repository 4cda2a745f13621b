/**
 * Simulated reception side of the SII (sii-formats.md §5):
 *   POST /WSREGISTRORECLAMODTE/registroreclamodteservice  -> ingresarAceptacionReclamoDoc,
 *        listarEventosHistDoc, consultarFechaRecepcionSii (document/literal SOAP, TOKEN cookie)
 *   GET  /reception/register?rut=&since=                   -> SIMULATOR ONLY: the documents the
 *        simulated SII holds for a recipient RUT (the real SII has no such API; see ../reception.ts)
 *   GET  /reception/document?rut=&issuer=&type=&folio=      -> SIMULATOR ONLY: the signed DTE of one
 *        registered document, for its recipient only ({ xml_base64 }; the real SII hands out none)
 *
 * The register is every DTE the simulator accepted (DOK/RLV) on DTEUpload, with the envelope's
 * reception time. Boletas (EnvioBOLETA) are not registered: they carry no recipient worth it and
 * take no accept/claim actions. The company the session acts for is the X-Simulator-Company-Rut
 * header (the real SII derives it from the person's authorisations), else the token holder. A
 * document's events and reception time are told to its issuer and its recipient only; anyone else
 * is answered as for a document the SII does not hold (18), so that its existence does not leak.
 */
import { and, desc, eq, gt, inArray, ne } from "drizzle-orm";
import type { Context } from "hono";
import { createDb, type Db } from "../../../storage/db/client";
import { simDocuments, simEnvios, simReceptionEvents } from "../../../storage/db/schema/simulator";
import type { AppEnv } from "../../../http/types";
import { isValidRut, normalizeRut, parseRut } from "../documents/rut";
import { isoToChileLocal, RECLAMO_NS, SIM_COMPANY_HEADER } from "../sii/reception";
import { escText, parseSoapRequest, soapFault } from "../sii/wire";
import { checkToken } from "./store";
import { dteOfEnvelope, keptEnvioKey } from "./kept-envios";
import { bytesToBase64 } from "../../../lib/base64";

type C = Context<AppEnv>;
const DAY_MS = 86_400_000;
const ACTIONS = ["ACD", "ERM", "RCD", "RFP", "RFT"] as const;
const CLAIMS = new Set(["RCD", "RFP", "RFT"]);

const DESC: Record<number, string> = {
  0: "Acción Completada OK", 1: "Error en RUT", 2: "Error en folio", 3: "Tipo de documento no válido", 4: "Acción no válida",
  5: "Documento con reclamo al contenido previo, no se puede aceptar", 6: "Documento con reclamo de mercaderías previo, no se puede aceptar",
  7: "Acción ya registrada anteriormente", 8: "Pasados 8 días desde la recepción no es posible registrar reclamos o eventos",
  11: "Documento aceptado previamente, no se puede reclamar", 12: "Documento con reclamo previo", 13: "Documento con acuse de recibo previo, no se puede reclamar",
  14: "Acción sólo puede ser realizada por el receptor del documento", 15: "Listado de eventos del documento", 16: "Documento sin eventos registrados",
  18: "Documento no recibido por el SII", 19: "Ya existe un reclamo por falta de mercaderías",
};
const EVENT_DESC: Record<string, string> = { ACD: "Acepta Contenido del Documento", ERM: "Otorga Recibo de Mercaderías o Servicios", RCD: "Reclamo al Contenido del Documento", RFP: "Reclamo por Falta Parcial de Mercaderías", RFT: "Reclamo por Falta Total de Mercaderías" };

function answer(c: C, method: string, code: number, inner = "", desc = DESC[code] ?? "") {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:${method}Response xmlns:ns2="${RECLAMO_NS}"><return><codResp>${code}</codResp><descResp>${escText(desc)}</descResp>${inner}</return></ns2:${method}Response></S:Body></S:Envelope>`;
  return c.body(body, 200, { "Content-Type": "text/xml; charset=utf-8" });
}

/** The accepted document registered for issuer+type+folio, with its SII reception time. */
async function registered(db: Db, issuerRut: string, type: number, folio: number) {
  return db
    .select({ receiverRut: simDocuments.receiverRut, receivedAt: simEnvios.receivedAt, trackId: simEnvios.trackId })
    .from(simDocuments)
    .innerJoin(simEnvios, eq(simEnvios.trackId, simDocuments.trackId))
    .where(and(eq(simDocuments.issuerRut, issuerRut), eq(simDocuments.documentType, type), eq(simDocuments.folio, folio), ne(simDocuments.status, "RCH"), eq(simEnvios.kind, "EnvioDTE")))
    .orderBy(desc(simDocuments.id))
    .get();
}

/** The code ingresarAceptacionReclamoDoc answers for an action on a document with `done` events. */
export function actionCode(action: string, done: Set<string>): number {
  if (done.has(action)) return 7;
  if (!CLAIMS.has(action)) return done.has("RCD") ? 5 : done.has("RFP") || done.has("RFT") ? 6 : 0;
  if (done.has("ACD")) return 11;
  if (done.has("ERM")) return 13;
  if (action !== "RCD" && (done.has("RFP") || done.has("RFT"))) return 19;
  return done.size > 0 ? 12 : 0;
}

async function ingresar(c: C, db: Db, p: Record<string, string>, company: string, person: string, issuer: string, type: number, folio: number) {
  const m = "ingresarAceptacionReclamoDoc";
  const action = (p.accionDoc ?? "").trim();
  if (!(ACTIONS as readonly string[]).includes(action)) return answer(c, m, 4);
  const doc = await registered(db, issuer, type, folio);
  if (!doc) return answer(c, m, 18);
  if (normalizeRut(doc.receiverRut) !== company) return answer(c, m, 14);
  if (Date.now() - Date.parse(doc.receivedAt) > 8 * DAY_MS) return answer(c, m, 8);
  const rows = await db.select({ action: simReceptionEvents.action }).from(simReceptionEvents).where(and(eq(simReceptionEvents.issuerRut, issuer), eq(simReceptionEvents.documentType, type), eq(simReceptionEvents.folio, folio))).all();
  const code = actionCode(action, new Set(rows.map((r) => r.action)));
  if (code === 0) await db.insert(simReceptionEvents).values({ issuerRut: issuer, documentType: type, folio, action, responsibleRut: person });
  return answer(c, m, code);
}

/** Whether `company` may read the document's events and reception time: its issuer or its recipient. */
const party = (company: string, issuer: string, doc: { receiverRut: string }) => company === issuer || company === normalizeRut(doc.receiverRut);

async function eventos(c: C, db: Db, company: string, issuer: string, type: number, folio: number) {
  const m = "listarEventosHistDoc";
  const doc = await registered(db, issuer, type, folio);
  if (!doc || !party(company, issuer, doc)) return answer(c, m, 18);
  const rows = await db.select().from(simReceptionEvents).where(and(eq(simReceptionEvents.issuerRut, issuer), eq(simReceptionEvents.documentType, type), eq(simReceptionEvents.folio, folio))).orderBy(simReceptionEvents.id).all();
  if (rows.length === 0) return answer(c, m, 16);
  const list = rows
    .map((r) => {
      const rut = parseRut(r.responsibleRut);
      return `<listaEventosDoc><codEvento>${r.action}</codEvento><descEvento>${escText(EVENT_DESC[r.action] ?? r.action)}</descEvento><rutResponsable>${rut.body}</rutResponsable><dvResponsable>${rut.dv}</dvResponsable><fechaEvento>${isoToChileLocal(r.createdAt)}</fechaEvento></listaEventosDoc>`;
    })
    .join("");
  return answer(c, m, 15, list);
}

/** POST /WSREGISTRORECLAMODTE/registroreclamodteservice */
export async function reclamoService(c: C): Promise<Response> {
  let req;
  try {
    req = parseSoapRequest(await c.req.text());
  } catch (e) {
    return c.body(soapFault(`RegistroReclamoDteService: ${(e as Error).message}`, "S:Client"), 500, { "Content-Type": "text/xml; charset=utf-8" });
  }
  const db = createDb(c.env.DB);
  const token = /(?:^|;\s*)TOKEN=([^;]+)/.exec(c.req.header("cookie") ?? "")?.[1];
  const t = await checkToken(db, token, "soap", new Date());
  if (!t.ok) return c.body(soapFault(`Token ${t.problem === "missing" ? "no informado" : "no válido"} (${t.problem})`), 500, { "Content-Type": "text/xml; charset=utf-8" });
  const p = req.params;
  const m = req.method;
  if (!["ingresarAceptacionReclamoDoc", "listarEventosHistDoc", "consultarFechaRecepcionSii"].includes(m)) return c.body(soapFault(`No such operation '${m}'`, "S:Client"), 500, { "Content-Type": "text/xml; charset=utf-8" });
  const issuerText = `${(p.rutEmisor ?? "").trim()}-${(p.dvEmisor ?? "").trim()}`;
  if (!isValidRut(issuerText)) return answer(c, m, 1);
  const type = Number(p.tipoDoc);
  if (![33, 34, 43].includes(type)) return answer(c, m, 3);
  const folio = Number(p.folio);
  if (!Number.isSafeInteger(folio) || folio <= 0) return answer(c, m, 2);
  const issuer = normalizeRut(issuerText);
  const hdr = c.req.header(SIM_COMPANY_HEADER);
  const company = hdr && isValidRut(hdr) ? normalizeRut(hdr) : t.rut;
  if (m === "ingresarAceptacionReclamoDoc") return ingresar(c, db, p, company, t.rut, issuer, type, folio);
  if (m === "listarEventosHistDoc") return eventos(c, db, company, issuer, type, folio);
  const doc = await registered(db, issuer, type, folio);
  return doc && party(company, issuer, doc) ? answer(c, m, 0, "", isoToChileLocal(doc.receivedAt)) : answer(c, m, 18);
}

/** GET /reception/register?rut=&since= (simulator only): accepted DTEs addressed to `rut`. */
export async function receptionRegister(c: C): Promise<Response> {
  const db = createDb(c.env.DB);
  const token = /(?:^|;\s*)TOKEN=([^;]+)/.exec(c.req.header("cookie") ?? "")?.[1];
  const t = await checkToken(db, token, "soap", new Date());
  if (!t.ok) return c.json({ error: `token ${t.problem}` }, 401);
  const rut = c.req.query("rut") ?? "";
  if (!isValidRut(rut)) return c.json({ error: "rut: a valid RUT is required" }, 400);
  const since = c.req.query("since");
  if (since !== undefined && Number.isNaN(Date.parse(since))) return c.json({ error: "since: an ISO 8601 time is required" }, 400);
  const conds = [eq(simDocuments.receiverRut, normalizeRut(rut)), inArray(simDocuments.status, ["DOK", "RLV"]), eq(simEnvios.kind, "EnvioDTE")];
  if (since) conds.push(gt(simEnvios.receivedAt, new Date(since).toISOString()));
  const rows = await db
    .select({ issuerRut: simDocuments.issuerRut, documentType: simDocuments.documentType, folio: simDocuments.folio, issueDate: simDocuments.issueDate, total: simDocuments.total, receivedAt: simEnvios.receivedAt })
    .from(simDocuments)
    .innerJoin(simEnvios, eq(simEnvios.trackId, simDocuments.trackId))
    .where(and(...conds))
    .orderBy(simDocuments.id)
    .limit(1000)
    .all();
  return c.json({ documents: rows });
}

/**
 * GET /reception/document?rut=&issuer=&type=&folio= (simulator only): the signed DTE of a registered
 * document, as `{ xml_base64 }` (bytes exactly as the issuer signed them), to its recipient `rut`
 * only; 404 when the simulator holds no such document for that recipient or did not keep its XML.
 */
export async function receptionDocument(c: C): Promise<Response> {
  const db = createDb(c.env.DB);
  const token = /(?:^|;\s*)TOKEN=([^;]+)/.exec(c.req.header("cookie") ?? "")?.[1];
  const t = await checkToken(db, token, "soap", new Date());
  if (!t.ok) return c.json({ error: `token ${t.problem}` }, 401);
  const q = c.req.query();
  const type = Number(q.type);
  const folio = Number(q.folio);
  if (!isValidRut(q.rut ?? "") || !isValidRut(q.issuer ?? "") || !Number.isSafeInteger(type) || !Number.isSafeInteger(folio) || folio <= 0) {
    return c.json({ error: "rut, issuer (valid RUTs), type and folio (positive integers) are required" }, 400);
  }
  const doc = await registered(db, normalizeRut(q.issuer!), type, folio);
  if (!doc || normalizeRut(doc.receiverRut) !== normalizeRut(q.rut!)) return c.json({ error: "no such document for this recipient" }, 404);
  const kept = await c.env.FILES.get(keptEnvioKey(doc.trackId));
  const dte = kept ? await dteOfEnvelope(new Uint8Array(await kept.arrayBuffer()), type, folio) : null;
  if (!dte) return c.json({ error: "the simulator did not keep this document's XML" }, 404);
  return c.json({ xml_base64: bytesToBase64(dte) });
}
