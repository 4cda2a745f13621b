/**
 * The simulated wsRPETCConsulta, POST /DTEWS/services/wsRPETCConsulta (rpc/encoded SOAP, the token as
 * the first parameter; cesion.md §3.2, §3.3), each answer an <SII:RESPUESTA>:
 *
 *   getEstEnvio(Token, TrackId)          ESTADO 0 with TRACKID, ESTADO_ENVIO (RCP … EOK or the
 *                                        rejection) and DESC_ESTADO; 2 for an upload the token's
 *                                        person did not send
 *   getEstCesion(Token, RutEmisor, DVEmisor, TipoDoc, FolioDoc[, IdCesion])
 *                                        ESTADO 0 "Documento Cedido" or 2
 *   getEstCesionRelac(Token, RutEmisor, DVEmisor, TipoDoc, FolioDoc, RutEmpresa, DVEmpresa)
 *                                        to a company linked to the document (issuer, receiver, a party
 *                                        to a cession): ESTADO 0 with RUT_TENEDOR, FECHA_ULT_ANOT, DEC_JURADA;
 *                                        2 not ceded; -15 not linked
 * Token states: 4 unknown, 3 expired. A cession counts once its upload shows EOK.
 */
import { and, eq } from "drizzle-orm";
import { createDb, type Db } from "../../../storage/db/client";
import { simAecEnvios } from "../../../storage/db/schema/simulator";
import { isValidRut, normalizeRut } from "../documents/rut";
import { isoToChileLocal } from "../sii/reception";
import { ENVIO_AEC_STATUS } from "../cession/rpetc-wire";
import { buildRespuesta, parseSoapRequest, soapFault, soapResponse } from "../sii/wire";
import { C, xml } from "./common";
import { cessionsOf, pollAecEnvio, visibleAecState } from "./rpetc-store";
import { registeredDocument, tokenQuery, tokenVerdict } from "./store";

const hdr = (estado: string, glosa: string, body: [string, string][] = []) => buildRespuesta([["ESTADO", estado], ["GLOSA", glosa]], body);

async function estEnvio(db: Db, p: Record<string, string>, person: string, now: Date): Promise<string> {
  const trackId = Number((p.TrackId ?? "").trim());
  if (!Number.isSafeInteger(trackId) || trackId <= 0) return hdr("1", "Error de datos: TrackId");
  const e = await pollAecEnvio(db, trackId, person);
  if (!e) return hdr("2", "No se encontro informacion del envio");
  const state = visibleAecState(e, e.polls, now);
  const errors = state === e.finalStatus ? (JSON.parse(e.errors) as string[]) : [];
  const desc = [ENVIO_AEC_STATUS[state]?.es ?? state, ...errors].join(" - ");
  return hdr("0", "OK", [["TRACKID", String(trackId)], ["ESTADO_ENVIO", state], ["DESC_ESTADO", desc]]);
}

/** The document's cessions whose upload already shows EOK. */
async function visibleCessions(db: Db, issuer: string, type: number, folio: number, now: Date) {
  const all = await cessionsOf(db, issuer, type, folio);
  const out = [];
  for (const c of all) {
    const e = await db.select().from(simAecEnvios).where(and(eq(simAecEnvios.trackId, c.trackId))).get();
    if (e && visibleAecState(e, e.polls, now) === "EOK") out.push(c);
  }
  return out;
}

async function estCesion(db: Db, method: string, p: Record<string, string>, now: Date): Promise<string> {
  const issuerText = `${(p.RutEmisor ?? "").trim()}-${(p.DVEmisor ?? "").trim().toUpperCase()}`;
  const type = Number(p.TipoDoc);
  const folio = Number(p.FolioDoc);
  if (!isValidRut(issuerText) || !Number.isSafeInteger(type) || !Number.isSafeInteger(folio) || folio <= 0) return hdr("1", "Error de datos");
  const issuer = normalizeRut(issuerText);
  const chain = await visibleCessions(db, issuer, type, folio, now);
  if (method === "getEstCesion") return chain.length ? hdr("0", "Documento Cedido") : hdr("2", "Documento no cedido");
  const companyText = `${(p.RutEmpresa ?? "").trim()}-${(p.DVEmpresa ?? "").trim().toUpperCase()}`;
  if (!isValidRut(companyText)) return hdr("1", "Error de datos: RutEmpresa");
  const company = normalizeRut(companyText);
  const doc = await registeredDocument(db, issuer, type, folio);
  const linked = company === issuer || (doc && normalizeRut(doc.receiverRut) === company) || chain.some((c) => c.cedentRut === company || c.assigneeRut === company);
  if (!linked) return hdr("-15", "La empresa relacionada no esta vinculada al documento");
  const last = chain[chain.length - 1];
  if (!last) return hdr("2", "Documento no cedido");
  const at = isoToChileLocal(last.annotatedAt).replace(/^(\d{2})-(\d{2})-(\d{4})/, "$3-$2-$1");
  return hdr("0", "OK", [["RUT_TENEDOR", last.assigneeRut], ["FECHA_ULT_ANOT", at], ...(chain.some((c) => c.declaration) ? ([["DEC_JURADA", "EXISTE"]] as [string, string][]) : [])]);
}

export async function rpetcConsulta(c: C): Promise<Response> {
  let req;
  try {
    req = parseSoapRequest(await c.req.text());
  } catch (e) {
    return xml(c, soapFault(`wsRPETCConsulta: ${(e as Error).message}`, "soapenv:Client"), 500);
  }
  const { method, params } = req;
  if (!["getEstEnvio", "getEstCesion", "getEstCesionRelac"].includes(method)) return xml(c, soapFault(`No such operation '${method}' in wsRPETCConsulta`, "soapenv:Client"), 500);
  const db = createDb(c.env.DB);
  const now = new Date();
  const token = (params.Token ?? "").trim();
  const t = tokenVerdict(token, token ? await tokenQuery(db, token).get() : undefined, "soap", now);
  if (!t.ok) return xml(c, soapResponse(method, t.problem === "expired" ? hdr("3", "Token inactivo") : hdr("4", "Token no existe")));
  const out = method === "getEstEnvio" ? await estEnvio(db, params, t.rut, now) : await estCesion(db, method, params, now);
  return xml(c, soapResponse(method, out));
}
