/**
 * Reading the SII's answers into the client's results: seeds and tokens, upload receipts (DTEUpload
 * and the boleta REST upload), and envelope and document states (QueryEstUp, QueryEstDte and the
 * boleta REST status). An answer that refuses the token throws TokenRejected; a refusal or an
 * unreadable answer throws a SiiError.
 */
import { badResponse, httpError, statusError, TokenRejected } from "./transport";
import { envioOutcome, explainSiiStatus, type EnvioOutcome, type EnvioTypeCounts, type SiiOutcome } from "./status";
import { bodyValue, type Respuesta } from "./wire";

export interface UploadResult {
  trackId: string;
  /** 0 (received) or 99 (the same file was already received: the original track id). */
  status: number;
  duplicate: boolean;
  /** RECEPCIONDTE TIMESTAMP or REST fecha_recepcion. */
  receivedAt?: string;
  /** REST: estado of the reception ("REC"). */
  estado?: string;
  es: string;
  en: string;
}

export interface EnvioStatus {
  trackId: string;
  /** REC, SOK, CRT, FOK, PRD, EPR, RSC, RFR, RCT, ... */
  estado: string;
  glosa?: string;
  numAtencion?: string;
  counts: EnvioTypeCounts[];
  /** REST only: rejected or objected documents with their reasons. */
  details: { type: number; folio: number; estado: string; outcome: SiiOutcome; errors: string[] }[];
  outcome: EnvioOutcome;
  es: string;
  en: string;
}

export interface DteStatus {
  /** DOK, DNK, FAU, FNA, FAN, EMP, TMD, TMC, MMD, MMC, AND, ANC. */
  estado: string;
  glosa?: string;
  errCode?: string;
  glosaErr?: string;
  numAtencion?: string;
  outcome: SiiOutcome;
  es: string;
  en: string;
}

export function readSeed(operation: string, r: Respuesta): string {
  const estado = r.hdr.ESTADO ?? "";
  if (estado !== "00") throw statusError("SEED_FAILED", "auth", estado || "(none)", operation, r.hdr.GLOSA);
  const seed = bodyValue(r, "SEMILLA");
  if (!seed || !/^\d+$/.test(seed)) throw badResponse(operation, new Error("ESTADO 00 without a numeric SEMILLA"));
  return seed;
}

export function readToken(operation: string, r: Respuesta): string {
  const estado = r.hdr.ESTADO ?? "";
  if (estado !== "00") throw statusError("TOKEN_REFUSED", "auth", estado || "(none)", operation, r.hdr.GLOSA);
  const token = bodyValue(r, "TOKEN");
  if (!token) throw badResponse(operation, new Error("ESTADO 00 without a TOKEN"));
  return token;
}

/** An upload's STATUS: 0 -> track id; 99 (already received) -> the original track id; 5 -> token refused. */
export function uploadOutcome(operation: string, status: number, trackId: string | undefined, errors: string[], receivedAt?: string, estado?: string): UploadResult {
  if (status === 5) throw new TokenRejected(operation, "5");
  const info = explainSiiStatus("upload", status);
  if (status === 0 || status === 99) {
    const id = trackId ?? (status === 99 ? /track\s*id\s*[:=]?\s*(\d+)/i.exec(errors.join(" "))?.[1] : undefined);
    if (!id || !/^\d+$/.test(id.trim())) throw badResponse(operation, new Error(`STATUS ${status} without a TRACKID`));
    return {
      trackId: id.trim().replace(/^0+(?=\d)/, ""),
      status,
      duplicate: status === 99,
      ...(receivedAt ? { receivedAt } : {}),
      ...(estado ? { estado } : {}),
      es: info.es,
      en: info.en,
    };
  }
  throw statusError("UPLOAD_REFUSED", "upload", String(status), operation, errors.join("; ") || undefined);
}

/** The boleta REST upload's JSON answer (HTTP `status`, body `text`). */
export function boletaUploadOutcome(operation: string, status: number, text: string): UploadResult {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    if (status >= 400) throw httpError(operation, status, text);
    throw badResponse(operation, e);
  }
  if (status >= 400 || j.trackid === undefined) {
    const st = typeof j.status === "number" ? j.status : Number(j.status);
    if (Number.isFinite(st)) return uploadOutcome(operation, st, undefined, Array.isArray(j.errors) ? j.errors.map(String) : []);
    throw httpError(operation, status, text);
  }
  return uploadOutcome(operation, j.duplicado === true ? 99 : 0, String(j.trackid), [], typeof j.fecha_recepcion === "string" ? j.fecha_recepcion : undefined, typeof j.estado === "string" ? j.estado : undefined);
}

/** QueryEstUp's RESPUESTA: the envelope's state and, after EPR, per-type counts. */
export function estUpStatus(operation: string, r: Respuesta, trackId: string): EnvioStatus {
  const estado = r.hdr.ESTADO ?? "";
  if (/^00[1-3]$/.test(estado)) throw new TokenRejected(operation, estado);
  const info = explainSiiStatus("envio", estado);
  if (info.outcome === "RETRYABLE_ERROR" || info.outcome === "TERMINAL_ERROR" || /^-\d+$/.test(estado)) throw statusError("QUERY_FAILED", "envio", estado || "(none)", operation, r.hdr.GLOSA);
  const counts: EnvioTypeCounts[] = [];
  let cur: EnvioTypeCounts | undefined;
  for (const [k, v] of r.body) {
    if (k === "TIPO_DOCTO") {
      cur = { type: Number(v), informed: 0, accepted: 0, rejected: 0, objected: 0 };
      counts.push(cur);
    } else if (cur && k === "INFORMADOS") cur.informed = Number(v) || 0;
    else if (cur && k === "ACEPTADOS") cur.accepted = Number(v) || 0;
    else if (cur && k === "RECHAZADOS") cur.rejected = Number(v) || 0;
    else if (cur && k === "REPAROS") cur.objected = Number(v) || 0;
  }
  return {
    trackId: r.hdr.TRACKID ?? trackId,
    estado,
    ...(r.hdr.GLOSA ? { glosa: r.hdr.GLOSA } : {}),
    ...(r.hdr.NUM_ATENCION ? { numAtencion: r.hdr.NUM_ATENCION } : {}),
    counts,
    details: [],
    outcome: envioOutcome(estado, counts),
    es: info.es,
    en: info.en,
  };
}

/** QueryEstDte's RESPUESTA: one document as registered at the SII (EMP is an answer, not a failure). */
export function estDteStatus(operation: string, r: Respuesta): DteStatus {
  const estado = r.hdr.ESTADO ?? "";
  if (/^00[1-3]$/.test(estado)) throw new TokenRejected(operation, estado);
  const info = explainSiiStatus("dte", estado);
  if (info.outcome === "RETRYABLE_ERROR" || /^-\d+$/.test(estado) || (info.outcome === "TERMINAL_ERROR" && estado !== "EMP")) {
    throw statusError("QUERY_FAILED", "dte", estado || "(none)", operation, r.hdr.GLOSA_ESTADO ?? r.hdr.GLOSA);
  }
  return {
    estado,
    ...(r.hdr.GLOSA_ESTADO ? { glosa: r.hdr.GLOSA_ESTADO } : {}),
    ...(r.hdr.ERR_CODE ? { errCode: r.hdr.ERR_CODE } : {}),
    ...(r.hdr.GLOSA_ERR ? { glosaErr: r.hdr.GLOSA_ERR } : {}),
    ...(r.hdr.NUM_ATENCION ? { numAtencion: r.hdr.NUM_ATENCION } : {}),
    outcome: info.outcome,
    es: info.es,
    en: info.en,
  };
}

/** The boleta REST envelope status (HTTP `status`, JSON `text`): state, per-type statistics and rejected/objected details. */
export function boletaEnvioStatus(operation: string, status: number, text: string, trackId: string): EnvioStatus {
  if (status >= 400) throw httpError(operation, status, text);
  let j: {
    estado?: string;
    trackid?: number | string;
    estadistica?: { tipo: number; informados: number; aceptados: number; rechazados: number; reparos: number }[];
    detalle_rep_rech?: { tipo: number; folio: number; estado: string; error?: unknown[] }[];
  };
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw badResponse(operation, e);
  }
  const estado = String(j.estado ?? "");
  const info = explainSiiStatus("envio", estado);
  if (info.outcome === "RETRYABLE_ERROR" || info.outcome === "TERMINAL_ERROR") throw statusError("QUERY_FAILED", "envio", estado || "(none)", operation);
  const counts = (j.estadistica ?? []).map((e) => ({ type: Number(e.tipo), informed: Number(e.informados) || 0, accepted: Number(e.aceptados) || 0, rejected: Number(e.rechazados) || 0, objected: Number(e.reparos) || 0 }));
  const details = (j.detalle_rep_rech ?? []).map((d) => ({
    type: Number(d.tipo),
    folio: Number(d.folio),
    estado: String(d.estado),
    outcome: explainSiiStatus("document", String(d.estado)).outcome,
    errors: (d.error ?? []).map((x) => (typeof x === "string" ? x : JSON.stringify(x))),
  }));
  return { trackId: String(j.trackid ?? trackId), estado, counts, details, outcome: envioOutcome(estado, counts), es: info.es, en: info.en };
}
