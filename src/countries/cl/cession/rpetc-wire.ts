/**
 * The wire formats of the SII's register of credit transfers (RPETC, cesion.md §3), shared by the
 * client and the simulator: the upload's answer <RECEPCIONAEC>, the meaning of its STATUS, and the
 * ESTADO_ENVIO codes of getEstEnvio with the outcome each one means. Pure functions, no I/O.
 */
import { childElements, escText, parseXml, type XElement } from "../xml/xml";
import { WireError } from "../sii/wire";

/** Upload path (same on maullin and palena). */
export const RPETC_UPLOAD_PATH = "/cgi_rtc/RTC/RTCAnotEnvio.cgi";
/** The status and query web service (rpc/encoded, namespace http://DefaultNamespace). */
export const RPETC_QUERY_PATH = "/DTEWS/services/wsRPETCConsulta";

export interface RecepcionAec {
  rutSender?: string;
  rutCompany?: string;
  file?: string;
  timestamp?: string;
  status: number;
  trackId?: string;
}

export function buildRecepcionAec(r: RecepcionAec): string {
  const opt = (k: string, v: string | undefined) => (v === undefined ? "" : `<${k}>${escText(v)}</${k}>\n`);
  return `<?xml version="1.0"?>\n<RECEPCIONAEC>\n${opt("RUTSENDER", r.rutSender)}${opt("RUTCOMPANY", r.rutCompany)}${opt("FILE", r.file)}${opt("TIMESTAMP", r.timestamp)}<STATUS>${r.status}</STATUS>\n${opt("TRACKID", r.trackId)}</RECEPCIONAEC>\n`;
}

export function parseRecepcionAec(xml: string): RecepcionAec {
  let root: XElement;
  try {
    root = parseXml(xml.trim(), "The RPETC upload answer").documentElement as XElement;
  } catch (e) {
    throw new WireError((e as Error).message);
  }
  if (root.localName !== "RECEPCIONAEC") throw new WireError(`The RPETC upload answer is <${root.localName}>, not <RECEPCIONAEC>`);
  const t = (n: string) => {
    const el = childElements(root, n)[0];
    return el ? (el.textContent ?? "").trim() : undefined;
  };
  const status = t("STATUS");
  if (status === undefined || !/^-?\d+$/.test(status)) throw new WireError("The RPETC upload answer has no numeric STATUS");
  const out: RecepcionAec = { status: Number(status) };
  const set = (k: "rutSender" | "rutCompany" | "file" | "timestamp" | "trackId", v: string | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("rutSender", t("RUTSENDER"));
  set("rutCompany", t("RUTCOMPANY"));
  set("file", t("FILE"));
  set("timestamp", t("TIMESTAMP"));
  set("trackId", t("TRACKID"));
  return out;
}

/** Upload STATUS (UPL 3.2): meaning and whether sending again may succeed. */
export const UPLOAD_STATUS: Record<number, { es: string; en: string; retryable: boolean }> = {
  0: { es: "Envío recibido OK", en: "Received: a track id is issued", retryable: false },
  1: { es: "El usuario autenticado no tiene permiso para enviar por la empresa cedente", en: "The authenticated person may not send for the assignor company", retryable: false },
  2: { es: "Error en el tamaño del archivo", en: "The file's size is wrong (empty or too large)", retryable: false },
  4: { es: "Faltan parámetros", en: "A form field is missing", retryable: false },
  5: { es: "Token inválido, no informado o vencido", en: "The token is invalid, missing or expired", retryable: true },
  6: { es: "La empresa no es emisora de documentos electrónicos", en: "The company is not an electronic document issuer (or the wrong SII environment)", retryable: false },
  9: { es: "Error interno", en: "Internal error of the SII", retryable: true },
  10: { es: "Error interno", en: "Internal error of the SII", retryable: true },
};

export type AecOutcome = "PENDING" | "REGISTERED" | "REJECTED";

/** ESTADO_ENVIO of getEstEnvio (WSC; outcomes as cesion.md §3.2). */
export const ENVIO_AEC_STATUS: Record<string, { es: string; en: string; outcome: AecOutcome }> = {
  UPL: { es: "Envío en proceso de carga", en: "Upload in progress", outcome: "PENDING" },
  RCP: { es: "Envío recibido", en: "Received", outcome: "PENDING" },
  SOK: { es: "Schema validado", en: "Schema validated", outcome: "PENDING" },
  FSO: { es: "Firma de sobre validada", en: "The file's signature verified", outcome: "PENDING" },
  COK: { es: "Carátula validada", en: "Cover (carátula) validated", outcome: "PENDING" },
  VDC: { es: "Validando documento", en: "Validating the document", outcome: "PENDING" },
  VCS: { es: "Validando cesiones", en: "Validating the cessions", outcome: "PENDING" },
  EOK: { es: "Envío aceptado: cesión anotada en el registro", en: "Accepted: the cession is registered", outcome: "REGISTERED" },
  RSC: { es: "Rechazado por error en schema", en: "Rejected: the file does not follow the schema", outcome: "REJECTED" },
  RFS: { es: "Rechazado por firma de sobre", en: "Rejected: the file's (AEC) signature does not verify", outcome: "REJECTED" },
  RCR: { es: "Rechazado por error en carátula", en: "Rejected: the cover (carátula) is wrong", outcome: "REJECTED" },
  RDC: { es: "Rechazado: documento inválido", en: "Rejected: the ceded document is not valid at the SII (not registered, not accepted, claimed, or its data or signatures differ)", outcome: "REJECTED" },
  RCS: { es: "Rechazado: cesión inválida", en: "Rejected: the cession is not valid (assignor, amount, dates, signer or earlier cessions)", outcome: "REJECTED" },
  EAN: { es: "Envío anulado", en: "The upload was annulled", outcome: "REJECTED" },
};

/** WSC ESTADO codes of getEstCesion / getEstCesionRelac. */
export const CESSION_QUERY_STATUS: Record<string, string> = {
  "0": "OK",
  "1": "Error de datos",
  "2": "No se encontró información",
  "3": "Token inactivo",
  "4": "Token no existe",
  "5": "Error de autenticación",
  "9": "No se pudieron obtener permisos",
  "10": "Usuario sin permiso en la empresa",
  "-15": "La empresa relacionada no está vinculada al documento",
};
