/**
 * Reception's side of the SII (sii-formats.md §5): the legal accept/claim web service
 * RegistroReclamoDteService (document/literal SOAP, the token as the TOKEN cookie) behind the
 * ReceptionAuthority port (src/countries/port.ts).
 *
 * - recordAction  -> ingresarAceptacionReclamoDoc: codResp/descResp returned as they come (0 = OK);
 *                    -1 (internal error) throws a retryable AuthorityError like network failures.
 * - listEvents    -> listarEventosHistDoc (codResp 15 = events listed; anything else = none).
 * - receptionTime -> consultarFechaRecepcionSii ("DD-MM-YYYY HH:MM:SS", Chile time) as ISO 8601 with
 *                    the America/Santiago offset of that moment.
 * - listReceived  -> the real SII has NO official listing API (§5, RCV: only the undocumented JSON of
 *                    the RCV web app, behind a captcha), so against it this answers
 *                    { supported: false, documents: [] }. The simulator offers a register listing at
 *                    GET /simulator/sii/reception/register (simulator-only, no SII counterpart).
 * - receivedXml   -> the real SII keeps every DTE it receives but hands the XML to no one (not the
 *                    RCV, not any web service; only documents issued on its own free MIPYME portal
 *                    can be seen there, by hand): the XML reaches the recipient only by the issuer's
 *                    e-mail to the exchange mailbox it publishes (§5), so against it this is null.
 *                    The simulator hands out the signed DTE of a registered document to its
 *                    recipient at GET /simulator/sii/reception/document (simulator-only).
 * - documentStatus -> QueryEstDte.getEstDte with the document's own data: RutConsultante the
 *                    certificate's holder, RutCompania the issuer, RutReceptor the document's
 *                    receiver (§4.4); DOK and the codes of a document later modified or cancelled by
 *                    a note mean the data match, DNK that the SII holds other data, FNA/FAN/EMP that
 *                    the folio or issuer is not valid, FAU that it is not received (yet).
 */
import { normalizeRut, parseRut } from "../documents/rut";
import { base64ToBytes } from "../../../lib/base64";
import { parseXml, type XElement } from "../xml/xml";
import type { AuthorityEvent, Credentials, ReceptionAuthority, RegisteredDocument, RegisteredStatus } from "../../port";
import type { SiiClient } from "./client";
import { SiiError } from "./errors";
import { escText } from "./wire";
import { ownCredentials } from "../pki/certificate";

/** Namespace of the WS (AO WS v1.2). */
export const RECLAMO_NS = "http://ws.registroreclamodte.diii.sdi.des.sii.cl";
/** Simulator-only header naming the company the session acts for (the real SII derives it from the person's authorisations). */
export const SIM_COMPANY_HEADER = "X-Simulator-Company-Rut";

export function reclamoUrl(client: SiiClient): string {
  if (client.mode === "production") return "https://ws1.sii.cl/WSREGISTRORECLAMODTE/registroreclamodteservice";
  if (client.mode === "certification") return "https://ws2.sii.cl/WSREGISTRORECLAMODTE/registroreclamodteservice";
  return `${client.endpoints.soapBase}/WSREGISTRORECLAMODTE/registroreclamodteservice`;
}

export function reclamoRequest(method: string, params: [string, string][]): string {
  const args = params.map(([k, v]) => `<${k}>${escText(v)}</${k}>`).join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ws="${RECLAMO_NS}"><soapenv:Body><ws:${method}>${args}</ws:${method}></soapenv:Body></soapenv:Envelope>`;
}

const elements = (el: XElement, name: string): XElement[] => {
  const out: XElement[] = [];
  const walk = (e: XElement) => {
    for (let n = e.firstChild; n; n = n.nextSibling) {
      if (n.nodeType !== 1) continue;
      if ((n as XElement).localName === name) out.push(n as XElement);
      walk(n as XElement);
    }
  };
  walk(el);
  return out;
};
const textOf = (el: XElement, name: string): string => (elements(el, name)[0]?.textContent ?? "").trim();

/** The <return> of a reclamo WS answer; a SOAP fault or an unreadable answer is a retryable error. */
function readReturn(text: string, operation: string): XElement {
  let root: XElement;
  try {
    root = parseXml(text, "The SOAP response").documentElement as XElement;
  } catch (e) {
    throw new SiiError("BAD_RESPONSE", `${operation}: unreadable answer: ${(e as Error).message}`, { retryable: true, operation });
  }
  const fault = elements(root, "Fault")[0];
  if (fault) throw new SiiError("SOAP_FAULT", `${operation}: SOAP fault: ${textOf(fault, "faultstring")}`, { retryable: true, operation });
  const ret = elements(root, "return")[0];
  if (!ret) throw new SiiError("BAD_RESPONSE", `${operation}: the answer carries no <return>`, { retryable: true, operation });
  const code = textOf(ret, "codResp");
  if (code === "-1") throw new SiiError("SERVICE_ERROR", `${operation}: the SII reported an internal error (-1): ${textOf(ret, "descResp")}`, { retryable: true, operation, siiCode: "-1" });
  return ret;
}

/** Offset of America/Santiago at an instant, as "+HH:MM"/"-HH:MM". */
function chileOffset(at: Date): string {
  const name = new Intl.DateTimeFormat("en-US", { timeZone: "America/Santiago", timeZoneName: "longOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "GMT-03:00";
  const m = /GMT([+-]\d{2}):?(\d{2})?/.exec(name);
  return m ? `${m[1]}:${m[2] ?? "00"}` : "+00:00";
}

/** "DD-MM-YYYY HH:MM:SS" in Chile time -> ISO 8601 with the offset of that moment. */
export function chileLocalToIso(s: string): string | null {
  const m = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(s.trim());
  if (!m) return null;
  const local = `${m[3]}-${m[2]}-${m[1]}T${m[4]}:${m[5]}:${m[6]}`;
  let offset = chileOffset(new Date(`${local}-03:00`));
  offset = chileOffset(new Date(`${local}${offset}`));
  return `${local}${offset}`;
}

/** An instant as "DD-MM-YYYY HH:MM:SS" Chile time (what consultarFechaRecepcionSii answers). */
export function isoToChileLocal(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone: "America/Santiago", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.day}-${parts.month}-${parts.year} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** QueryEstDte codes that are a verdict on the document other than "data match" (every other ACCEPTED code). */
const STATUS_VERDICTS: Record<string, RegisteredStatus["state"]> = { DNK: "MISMATCH", FNA: "INVALID", FAN: "INVALID", EMP: "INVALID", FAU: "NOT_REGISTERED" };

/**
 * A company's responses to a supplier's document at the SII (Ley 19.983): ACD accepts the content,
 * ERM acknowledges the goods or services received, RCD claims against the content, RFP and RFT claim
 * a partial or total lack of the goods.
 */
export type ReceptionAction = "ACD" | "ERM" | "RCD" | "RFP" | "RFT";

type DocRef = { companyRut: string; signer: Credentials; issuerRut: string; documentType: number; folio: number };

/** The SII's reception side as the port. `makeError` turns SiiErrors into the caller's error type. */
export function siiReceptionAuthority(client: SiiClient, makeError: (message: string, retryable: boolean, code?: string) => Error): ReceptionAuthority {
  const headers = (companyRut: string) => (client.mode === "simulator" ? { [SIM_COMPANY_HEADER]: normalizeRut(companyRut) } : undefined);
  const call = async (p: DocRef, method: string, extra: [string, string][] = []): Promise<XElement> => {
    const issuer = parseRut(p.issuerRut);
    const params: [string, string][] = [["rutEmisor", issuer.body], ["dvEmisor", issuer.dv], ["tipoDoc", String(p.documentType)], ["folio", String(p.folio)], ...extra];
    try {
      const extraHeaders = headers(p.companyRut);
      const text = await client.soapWithToken({ url: reclamoUrl(client), body: reclamoRequest(method, params), cert: ownCredentials(p.signer), companyRut: p.companyRut, operation: method, ...(extraHeaders ? { extraHeaders } : {}) });
      return readReturn(text, method);
    } catch (e) {
      if (e instanceof SiiError) throw makeError(`${e.message}${e.es ? ` — ${e.es}` : ""}`, e.retryable, e.siiCode);
      throw e;
    }
  };
  return {
    async recordAction(p) {
      const ret = await call(p, "ingresarAceptacionReclamoDoc", [["accionDoc", p.action]]);
      return { code: Number(textOf(ret, "codResp")), message: textOf(ret, "descResp") };
    },
    async listEvents(p) {
      const ret = await call(p, "listarEventosHistDoc");
      if (textOf(ret, "codResp") !== "15") return [];
      return elements(ret, "listaEventosDoc").map((e): AuthorityEvent => ({
        action: textOf(e, "codEvento"),
        description: textOf(e, "descEvento"),
        responsibleRut: `${textOf(e, "rutResponsable")}-${textOf(e, "dvResponsable")}`,
        at: chileLocalToIso(textOf(e, "fechaEvento")) ?? textOf(e, "fechaEvento"),
      }));
    },
    async receptionTime(p) {
      const ret = await call(p, "consultarFechaRecepcionSii");
      const value = textOf(ret, "codResp") === "0" ? textOf(ret, "descResp") : "";
      return value ? chileLocalToIso(value) : null;
    },
    async listReceived(p) {
      // No official listing API at the real SII (reference §5, RCV): say so, list nothing.
      if (client.mode !== "simulator") return { supported: false, documents: [] };
      const url = `${client.endpoints.soapBase}/reception/register?${new URLSearchParams({ rut: normalizeRut(p.companyRut), ...(p.since ? { since: p.since } : {}) })}`;
      try {
        const body = (await client.getJsonWithToken({ url, cert: ownCredentials(p.signer), companyRut: p.companyRut, operation: "reception/register", extraHeaders: headers(p.companyRut)! })) as { documents?: RegisteredDocument[] };
        return { supported: true, documents: body.documents ?? [] };
      } catch (e) {
        if (e instanceof SiiError) throw makeError(e.message, e.retryable, e.siiCode);
        throw e;
      }
    },
    async receivedXml(p) {
      // The real SII hands out no XML of received documents (see the header).
      if (client.mode !== "simulator") return null;
      const q = { rut: normalizeRut(p.companyRut), issuer: normalizeRut(p.issuerRut), type: String(p.documentType), folio: String(p.folio) };
      const url = `${client.endpoints.soapBase}/reception/document?${new URLSearchParams(q)}`;
      try {
        const body = (await client.getJsonWithToken({ url, cert: ownCredentials(p.signer), companyRut: p.companyRut, operation: "reception/document", extraHeaders: headers(p.companyRut)! })) as { xml_base64?: unknown };
        return typeof body.xml_base64 === "string" ? base64ToBytes(body.xml_base64) : null;
      } catch (e) {
        if (e instanceof SiiError && e.httpStatus === 404) return null;
        if (e instanceof SiiError) throw makeError(e.message, e.retryable, e.siiCode);
        throw e;
      }
    },
    async documentStatus(p) {
      try {
        const st = await client.queryEstDte({ cert: ownCredentials(p.signer), companyRut: p.issuerRut, askingCompanyRut: p.companyRut, receiverRut: p.receiverRut, documentType: p.documentType, folio: p.folio, issueDate: p.issueDate, total: p.total });
        const state = STATUS_VERDICTS[st.estado] ?? (st.outcome === "ACCEPTED" ? "MATCH" : "NOT_REGISTERED");
        const words = `${st.glosa ?? st.es}${st.glosaErr ? ` (${st.glosaErr})` : ""}`;
        return { state, code: st.estado, message: `${words} / ${st.en}` };
      } catch (e) {
        if (e instanceof SiiError) throw makeError(`${e.message}${e.es ? ` — ${e.es}` : ""}`, e.retryable, e.siiCode);
        throw e;
      }
    },
  };
}
