/**
 * The SII's register of credit transfers (RPETC) behind the port's CessionAuthority (cesion.md §3):
 *
 * - upload  -> POST /cgi_rtc/RTC/RTCAnotEnvio.cgi, multipart emailNotif, rutCompany, dvCompany,
 *              archivo (no rutSender: the SII knows the sender from the token); STATUS 0 -> TRACKID;
 *              5 re-authenticates once; other codes are refusals (9 and 10 retry).
 * - poll    -> wsRPETCConsulta.getEstEnvio(Token, TrackId): ESTADO_ENVIO, EOK registered, R.. rejected.
 * - current -> wsRPETCConsulta.getEstCesionRelac(Token, RutEmisor, DVEmisor, TipoDoc, FolioDoc,
 *              RutEmpresa, DVEmpresa): ESTADO 0 with RUT_TENEDOR, FECHA_ULT_ANOT (Chile time); 2 = no
 *              cession. The answer has no amount: `amount` is null.
 * A TOKEN refusal (ESTADO 3, 4) re-authenticates once; an unreadable or error answer is retryable.
 */
import { AuthorityError, type CessionAuthority, type CessionVerdict, type RegisteredCession } from "../../port";
import { normalizeRut, parseRut } from "../documents/rut";
import { ownCredentials } from "../pki/certificate";
import type { SiiClient } from "../sii/client";
import { SiiError } from "../sii/errors";
import { chileLocalToIso } from "../sii/reception";
import { badResponse, httpError, TokenRejected } from "../sii/transport";
import { bodyValue, buildMultipart, parseRespuesta, parseSoapResponse, soapRequest, type Respuesta } from "../sii/wire";
import { ENVIO_AEC_STATUS, parseRecepcionAec, RPETC_QUERY_PATH, RPETC_UPLOAD_PATH, UPLOAD_STATUS } from "./rpetc-wire";

function rpetcHost(client: SiiClient): string {
  return client.endpoints.soapBase;
}

function asAuthorityError(e: unknown): unknown {
  if (e instanceof SiiError) return new AuthorityError(`${e.message}${e.es ? ` — ${e.es}` : ""}`, e.retryable, e.siiCode);
  return e;
}

/** One wsRPETCConsulta operation; the token goes in as its first parameter. */
async function query(client: SiiClient, p: { cert: ReturnType<typeof ownCredentials>; companyRut: string }, method: string, params: (token: string) => [string, string][]): Promise<Respuesta> {
  const operation = `wsRPETCConsulta.${method}`;
  return client.withSession(
    { cert: p.cert, companyRut: p.companyRut, operation },
    (token) =>
      new Request(`${rpetcHost(client)}${RPETC_QUERY_PATH}`, {
        method: "POST",
        headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: '""', Accept: "text/xml", "User-Agent": "Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)" },
        body: soapRequest(method, params(token)),
      }),
    ({ status, text }) => {
      let r: Respuesta;
      try {
        const parsed = parseSoapResponse(text);
        if (parsed.kind === "fault") throw new SiiError("SOAP_FAULT", `${operation}: SOAP fault ${parsed.faultCode}: ${parsed.faultString}`, { retryable: true, operation, siiCode: parsed.faultCode });
        r = parseRespuesta(parsed.value);
      } catch (e) {
        if (e instanceof SiiError) throw e;
        if (status >= 400) throw httpError(operation, status, text);
        throw badResponse(operation, e);
      }
      const estado = r.hdr.ESTADO ?? "";
      if (estado === "3" || estado === "4") throw new TokenRejected(operation, estado);
      if (/^(5|6|7|8|9)$/.test(estado)) throw new SiiError("QUERY_FAILED", `${operation} answered ESTADO ${estado}: ${r.hdr.GLOSA ?? ""}`, { retryable: true, operation, siiCode: estado });
      return r;
    },
  );
}

async function upload(client: SiiClient, p: Parameters<CessionAuthority["upload"]>[0]): Promise<{ trackId: string }> {
  const operation = "RTCAnotEnvio";
  const company = parseRut(p.companyRut);
  if (p.xml.length === 0) throw new SiiError("INVALID_ARGUMENT", `${operation}: the file is empty`, { retryable: false, operation });
  return client.withSession(
    { cert: ownCredentials(p.signer), companyRut: p.companyRut, operation },
    (token) => {
      const mp = buildMultipart([
        { name: "emailNotif", value: p.notifyEmail },
        { name: "rutCompany", value: company.body },
        { name: "dvCompany", value: company.dv },
        { name: "archivo", filename: p.fileName, contentType: "text/xml", data: p.xml },
      ]);
      return new Request(`${rpetcHost(client)}${RPETC_UPLOAD_PATH}`, {
        method: "POST",
        headers: { "Content-Type": mp.contentType, "Content-Length": String(mp.body.length), Cookie: `TOKEN=${token}`, "User-Agent": "Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)", Accept: "*/*" },
        body: mp.body,
      });
    },
    ({ status, text }) => {
      let r;
      try {
        r = parseRecepcionAec(text);
      } catch (e) {
        if (status >= 400) throw httpError(operation, status, text);
        throw badResponse(operation, e);
      }
      if (r.status === 5) throw new TokenRejected(operation, "5");
      const info = UPLOAD_STATUS[r.status];
      if (r.status === 0 && r.trackId && /^\d{1,15}$/.test(r.trackId)) return { trackId: String(Number(r.trackId)) };
      if (r.status === 0) throw badResponse(operation, new Error("STATUS 0 without a numeric TRACKID"));
      throw new SiiError("UPLOAD_REFUSED", `${operation} answered STATUS ${r.status}: ${info?.en ?? "unknown status"}`, { retryable: info?.retryable ?? true, operation, siiCode: `STATUS ${r.status}`, ...(info ? { es: info.es, en: info.en } : {}) });
    },
  );
}

async function poll(client: SiiClient, p: Parameters<CessionAuthority["poll"]>[0]): Promise<CessionVerdict> {
  const trackId = p.trackId.trim();
  if (!/^\d{1,15}$/.test(trackId)) throw new SiiError("INVALID_ARGUMENT", "getEstEnvio: trackId must be digits", { retryable: false, operation: "wsRPETCConsulta.getEstEnvio" });
  const r = await query(client, { cert: ownCredentials(p.signer), companyRut: p.companyRut }, "getEstEnvio", (token) => [["Token", token], ["TrackId", trackId]]);
  const estado = (bodyValue(r, "ESTADO_ENVIO") ?? "").trim();
  const desc = bodyValue(r, "DESC_ESTADO") ?? "";
  if ((r.hdr.ESTADO ?? "") !== "0" || !estado) throw new SiiError("QUERY_FAILED", `getEstEnvio answered ESTADO ${r.hdr.ESTADO ?? "(none)"}: ${r.hdr.GLOSA ?? ""}`, { retryable: true, operation: "wsRPETCConsulta.getEstEnvio", siiCode: r.hdr.ESTADO ?? "" });
  const info = ENVIO_AEC_STATUS[estado];
  const message = `${estado}: ${info?.es ?? "estado desconocido"} / ${info?.en ?? "unknown state"}${desc && desc !== info?.es ? ` (${desc})` : ""}`;
  // A code we cannot read is no verdict: it stays pending.
  if (!info || info.outcome === "PENDING") return { final: false, fiscalStatus: estado, message };
  return { final: true, registered: info.outcome === "REGISTERED", fiscalStatus: estado, message };
}

async function current(client: SiiClient, p: Parameters<CessionAuthority["current"]>[0]): Promise<RegisteredCession | null> {
  const issuer = parseRut(p.issuerRut);
  const company = parseRut(p.companyRut);
  const params = (token: string): [string, string][] => [["Token", token], ["RutEmisor", issuer.body], ["DVEmisor", issuer.dv], ["TipoDoc", String(p.documentType)], ["FolioDoc", String(p.folio)], ["RutEmpresa", company.body], ["DVEmpresa", company.dv]];
  const r = await query(client, { cert: ownCredentials(p.signer), companyRut: p.companyRut }, "getEstCesionRelac", params);
  const estado = r.hdr.ESTADO ?? "";
  if (estado !== "0") return null;
  const holder = bodyValue(r, "RUT_TENEDOR") ?? "";
  const at = chileLocalToIso((bodyValue(r, "FECHA_ULT_ANOT") ?? "").replace(/^(\d{4})-(\d{2})-(\d{2})/, "$3-$2-$1"));
  let holderTaxId: string;
  try {
    holderTaxId = normalizeRut(holder);
  } catch {
    throw new SiiError("BAD_RESPONSE", `getEstCesionRelac: RUT_TENEDOR ${JSON.stringify(holder.slice(0, 20))} is not a RUT`, { retryable: true, operation: "wsRPETCConsulta.getEstCesionRelac" });
  }
  if (!at) throw new SiiError("BAD_RESPONSE", "getEstCesionRelac: FECHA_ULT_ANOT is not a date and time", { retryable: true, operation: "wsRPETCConsulta.getEstCesionRelac" });
  const collection = bodyValue(r, "RUT_COBRANZA");
  return { holderTaxId, annotatedAt: at, collectionTaxId: collection ? collection : null, amount: null };
}

/** The register over a SiiClient, its SiiErrors as the port's AuthorityErrors. */
export function rpetcAuthority(client: SiiClient): CessionAuthority {
  const guard = <T,>(fn: () => Promise<T>) => fn().catch((e: unknown) => Promise.reject(asAuthorityError(e)));
  return {
    upload: (p) => guard(() => upload(client, p)),
    poll: (p) => guard(() => poll(client, p)),
    current: (p) => guard(() => current(client, p)),
  };
}
