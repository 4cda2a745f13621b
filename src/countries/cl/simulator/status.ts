/** Status queries: QueryEstUp, QueryEstDte and the boleta REST status. */
import { type Db } from "../../../storage/db/client";
import { normalizeRut, parseRut } from "../documents/rut";
import { buildRespuesta, soapFault, soapResponse } from "../sii/wire";
import { checkToken, envioDocuments, getEnvio, registeredDocument, visibleState, scenarioQuery, consumeScenario, tokenQuery, tokenVerdict, pollIfAllowedQuery, type TokenRow, type EnvioRow, type ScenarioRow } from "./store";
import { ENVIO_GLOSA, type TypeStats } from "./validate";
import { C, numAtencion, xml } from "./common";
import { outage } from "./upload";
import { simulatorOwner } from "./gate";

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
export async function estUp(c: C, db: Db, parsed: { method: string; params: Record<string, string> } | { fault: string }, now: Date): Promise<Response> {
  const p = "params" in parsed && parsed.method === "getEstUp" ? parsed.params : null;
  const token = p?.Token?.trim();
  let company: string | null = null;
  try {
    if (p) company = normalizeRut(`${(p.RutCompania ?? "").trim()}-${(p.DvCompania ?? "").trim()}`);
  } catch {
    company = null;
  }
  const trackId = Number((p?.TrackId ?? "").trim());
  const owner = simulatorOwner(c);
  const globalDownQ = scenarioQuery(db, owner, ["down"], null);
  const tokenQ = token ? tokenQuery(db, token) : null;
  const pollQ = token && company !== null && Number.isSafeInteger(trackId) ? pollIfAllowedQuery(db, { trackId, companyRut: company, channel: "soap", token, now, owner }) : null;
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

export async function estDte(db: Db, p: Record<string, string>, now: Date): Promise<string> {
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
  // The SII's own QueryEstDte says only "not received"; the simulator adds the reasons its result
  // e-mail would carry, so a rejected document says why (docs/simulator-fidelity.md).
  if (doc.status === "RCH") return hdr("FAU", "Documento No Recibido por el SII.", "2", `Documento rechazado en el envio ${doc.trackId}: ${(JSON.parse(doc.errors) as string[]).join("; ")}`.slice(0, 2000));
  const date = `${fecha[3]}-${fecha[2]}-${fecha[1]}`;
  if (doc.receiverRut !== receiver || doc.issueDate !== date || doc.total !== String(p.MontoDte ?? "").trim()) {
    return hdr("DNK", "Documento Recibido por el SII. Datos No Coinciden con los Registrados.", "3", "Receptor, fecha o monto distintos");
  }
  return hdr("DOK", "Documento Recibido por el SII. Datos Coinciden con los Registrados.", "0", doc.status === "RLV" ? "Aceptado con reparos" : "");
}

export function boletaStatusJson(e: EnvioRow, state: string, docs: Awaited<ReturnType<typeof envioDocuments>>) {
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
