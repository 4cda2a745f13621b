/**
 * SII wire formats shared by the client and the simulator (sii-formats.md §4):
 * - rpc/encoded SOAP 1.1 envelopes of the DTEWS services (CrSeed, GetTokenFromSeed, QueryEstUp,
 *   QueryEstDte), whose operations all return one XML string: <SII:RESPUESTA> with RESP_HDR/RESP_BODY;
 * - the DTEUpload answer <RECEPCIONDTE>;
 * - multipart/form-data built by hand as bytes (fixed Content-Length, never chunked, fields in the
 *   SII's order, the file kept as ISO-8859-1 bytes) and its parser.
 * Pure functions, no I/O.
 */
import { childElements, decodeLatin1, encodeLatin1, escAttr, escText, parseXml, type XElement } from "../xml/xml";

export const NS_SOAPENV = "http://schemas.xmlsoap.org/soap/envelope/";
export const NS_SOAPENC = "http://schemas.xmlsoap.org/soap/encoding/";
export const NS_SII_SCHEMA = "http://www.sii.cl/XMLSchema";

/** The User-Agent the SII documents in its examples; the boleta REST gateway refuses non-Mozilla agents. */
export const SII_USER_AGENT = "Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)";

export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WireError";
  }
}

// ---- SOAP -----------------------------------------------------------------------------------------

/** Body of an rpc/encoded SOAP request: `<ns1:method>` with string parameters, in order. */
export function soapRequest(method: string, params: [string, string][] = []): string {
  const args = params.map(([k, v]) => `<${k} xsi:type="xsd:string">${escText(v)}</${k}>`).join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<soapenv:Envelope xmlns:soapenv="${NS_SOAPENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `<soapenv:Body><ns1:${method} soapenv:encodingStyle="${NS_SOAPENC}" xmlns:ns1="http://DefaultNamespace">${args}</ns1:${method}></soapenv:Body></soapenv:Envelope>`
  );
}

/** A SOAP response carrying the operation's string result (`<methodReturn>`), as Axis 1 writes it. */
export function soapResponse(method: string, returnXml: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<soapenv:Envelope xmlns:soapenv="${NS_SOAPENV}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `<soapenv:Body><ns1:${method}Response soapenv:encodingStyle="${NS_SOAPENC}" xmlns:ns1="http://DefaultNamespace">` +
    `<ns1:${method}Return xsi:type="xsd:string">${escText(returnXml)}</ns1:${method}Return>` +
    `</ns1:${method}Response></soapenv:Body></soapenv:Envelope>`
  );
}

export function soapFault(faultString: string, faultCode = "soapenv:Server.userException"): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<soapenv:Envelope xmlns:soapenv="${NS_SOAPENV}"><soapenv:Body><soapenv:Fault>` +
    `<faultcode>${escText(faultCode)}</faultcode><faultstring>${escText(faultString)}</faultstring>` +
    `</soapenv:Fault></soapenv:Body></soapenv:Envelope>`
  );
}

export interface ParsedSoapRequest {
  method: string;
  params: Record<string, string>;
}

function soapBody(xml: string, what: string): XElement {
  let root: XElement;
  try {
    root = parseXml(xml, what).documentElement as XElement;
  } catch (e) {
    throw new WireError((e as Error).message);
  }
  if (root.localName !== "Envelope") throw new WireError(`${what} is not a SOAP envelope (root <${root.localName}>)`);
  const body = childElements(root, "Body")[0];
  if (!body) throw new WireError(`${what} has no SOAP Body`);
  return body;
}

/** Reads an rpc SOAP request: the operation (first Body child) and its parameters by local name. */
export function parseSoapRequest(xml: string): ParsedSoapRequest {
  const body = soapBody(xml, "The SOAP request");
  const op = childElements(body)[0];
  if (!op) throw new WireError("The SOAP Body names no operation");
  const params: Record<string, string> = {};
  for (const p of childElements(op)) params[p.localName ?? p.nodeName] = p.textContent ?? "";
  return { method: op.localName ?? op.nodeName, params };
}

export type ParsedSoapResponse = { kind: "return"; value: string } | { kind: "fault"; faultCode: string; faultString: string };

/** Reads a SOAP response: the `...Return` string or a Fault. Throws WireError when it is neither. */
export function parseSoapResponse(xml: string): ParsedSoapResponse {
  const body = soapBody(xml, "The SOAP response");
  const first = childElements(body)[0];
  if (!first) throw new WireError("The SOAP response Body is empty");
  if (first.localName === "Fault") {
    return { kind: "fault", faultCode: (childElements(first, "faultcode")[0]?.textContent ?? "").trim(), faultString: (childElements(first, "faultstring")[0]?.textContent ?? "").trim() };
  }
  const ret = childElements(first)[0];
  if (!ret) throw new WireError(`The SOAP response <${first.localName}> carries no return value`);
  return { kind: "return", value: ret.textContent ?? "" };
}

// ---- SII:RESPUESTA --------------------------------------------------------------------------------

export interface Respuesta {
  /** RESP_HDR children by local name (ESTADO, GLOSA, TRACKID, NUM_ATENCION, ERR_CODE, ...). */
  hdr: Record<string, string>;
  /** RESP_BODY children in document order (QueryEstUp repeats TIPO_DOCTO..REPAROS per type). */
  body: [string, string][];
}

/** Builds `<SII:RESPUESTA>` the way the DTEWS services answer (child elements unprefixed). */
export function buildRespuesta(hdr: [string, string][], body: [string, string][] = []): string {
  const f = (xs: [string, string][]) => xs.map(([k, v]) => `<${k}>${escText(v)}</${k}>`).join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<SII:RESPUESTA xmlns:SII="${NS_SII_SCHEMA}">` +
    (body.length ? `<SII:RESP_BODY>${f(body)}</SII:RESP_BODY>` : "") +
    `<SII:RESP_HDR>${f(hdr)}</SII:RESP_HDR></SII:RESPUESTA>`
  );
}

export function parseRespuesta(xml: string): Respuesta {
  let root: XElement;
  try {
    root = parseXml(xml.trim(), "The SII answer").documentElement as XElement;
  } catch (e) {
    throw new WireError((e as Error).message);
  }
  if (root.localName !== "RESPUESTA") throw new WireError(`The SII answer is <${root.localName}>, not <SII:RESPUESTA>`);
  const hdrEl = childElements(root, "RESP_HDR")[0];
  if (!hdrEl) throw new WireError("The SII answer has no RESP_HDR");
  const hdr: Record<string, string> = {};
  for (const c of childElements(hdrEl)) hdr[c.localName ?? c.nodeName] = (c.textContent ?? "").trim();
  const bodyEl = childElements(root, "RESP_BODY")[0];
  const body: [string, string][] = bodyEl ? childElements(bodyEl).map((c) => [c.localName ?? c.nodeName, (c.textContent ?? "").trim()]) : [];
  return { hdr, body };
}

export function bodyValue(r: Respuesta, name: string): string | undefined {
  return r.body.find(([k]) => k === name)?.[1];
}

// ---- DTEUpload answer -----------------------------------------------------------------------------

export interface RecepcionDte {
  rutSender?: string;
  rutCompany?: string;
  file?: string;
  timestamp?: string;
  status: number;
  trackId?: string;
  /** DETAIL/ERROR lines. */
  errors: string[];
}

export function buildRecepcionDte(r: RecepcionDte): string {
  const opt = (k: string, v: string | undefined) => (v === undefined ? "" : `<${k}>${escText(v)}</${k}>\n`);
  return (
    `<?xml version="1.0"?>\n<RECEPCIONDTE>\n` +
    opt("RUTSENDER", r.rutSender) +
    opt("RUTCOMPANY", r.rutCompany) +
    opt("FILE", r.file) +
    opt("TIMESTAMP", r.timestamp) +
    `<STATUS>${r.status}</STATUS>\n` +
    opt("TRACKID", r.trackId) +
    (r.errors.length ? `<DETAIL>\n${r.errors.map((e) => `<ERROR>${escText(e)}</ERROR>\n`).join("")}</DETAIL>\n` : "") +
    `</RECEPCIONDTE>\n`
  );
}

export function parseRecepcionDte(xml: string): RecepcionDte {
  let root: XElement;
  try {
    root = parseXml(xml.trim(), "The DTEUpload answer").documentElement as XElement;
  } catch (e) {
    throw new WireError((e as Error).message);
  }
  if (root.localName !== "RECEPCIONDTE") throw new WireError(`The DTEUpload answer is <${root.localName}>, not <RECEPCIONDTE>`);
  const t = (n: string) => {
    const el = childElements(root, n)[0];
    return el ? (el.textContent ?? "").trim() : undefined;
  };
  const statusText = t("STATUS");
  if (statusText === undefined || !/^-?\d+$/.test(statusText)) throw new WireError("The DTEUpload answer has no numeric STATUS");
  const detail = childElements(root, "DETAIL")[0];
  const errors = detail ? childElements(detail, "ERROR").map((e) => (e.textContent ?? "").trim()) : [];
  const out: RecepcionDte = { status: Number(statusText), errors };
  const set = (k: keyof RecepcionDte, v: string | undefined) => {
    if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  };
  set("rutSender", t("RUTSENDER"));
  set("rutCompany", t("RUTCOMPANY"));
  set("file", t("FILE"));
  set("timestamp", t("TIMESTAMP"));
  set("trackId", t("TRACKID"));
  return out;
}

// ---- multipart/form-data ----------------------------------------------------------------------------

export type MultipartField = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Uint8Array };

export interface MultipartBody {
  /** The complete body; its length is the Content-Length. */
  body: Uint8Array<ArrayBuffer>;
  boundary: string;
  contentType: string;
}

function randomBoundary(): string {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return "----SIIFormBoundary" + [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * Builds a multipart/form-data body as bytes, parts in the given order. Text values and headers are
 * written as ISO-8859-1; file parts are copied byte for byte (the SII wants the XML in ISO-8859-1).
 */
export function buildMultipart(fields: MultipartField[], boundary = randomBoundary()): MultipartBody {
  const chunks: Uint8Array[] = [];
  for (const f of fields) {
    if (/["\r\n]/.test(f.name)) throw new WireError(`Invalid multipart field name ${JSON.stringify(f.name)}`);
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"`;
    if ("data" in f) {
      if (/["\r\n]/.test(f.filename)) throw new WireError(`Invalid file name ${JSON.stringify(f.filename)}`);
      head += `; filename="${f.filename}"\r\nContent-Type: ${f.contentType}\r\n\r\n`;
      chunks.push(encodeLatin1(head, "multipart header"), f.data, encodeLatin1("\r\n"));
    } else {
      chunks.push(encodeLatin1(head + "\r\n\r\n" + f.value + "\r\n", f.name));
    }
  }
  chunks.push(encodeLatin1(`--${boundary}--\r\n`));
  let n = 0;
  for (const c of chunks) n += c.length;
  const body = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return { body, boundary, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface ParsedPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Uint8Array;
  /** data as ISO-8859-1 text. */
  text: string;
}

function indexOf(hay: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0]!;
  const last = hay.length - needle.length;
  // The native search finds each candidate first byte; only those are compared further.
  for (let i = hay.indexOf(first, from); i >= 0 && i <= last; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

/** Parses a multipart/form-data body into parts, in order. Throws WireError on a malformed body. */
export function parseMultipart(body: Uint8Array, contentType: string): ParsedPart[] {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!/^multipart\/form-data/i.test(contentType) || !boundary) throw new WireError("The request is not multipart/form-data with a boundary");
  const delim = encodeLatin1(`--${boundary}`);
  const parts: ParsedPart[] = [];
  let pos = indexOf(body, delim, 0);
  if (pos < 0) throw new WireError("The multipart body does not start with its boundary");
  for (;;) {
    pos += delim.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts; // closing --
    if (body[pos] === 0x0d && body[pos + 1] === 0x0a) pos += 2;
    const headEnd = indexOf(body, encodeLatin1("\r\n\r\n"), pos);
    if (headEnd < 0) throw new WireError("A multipart part has no header end");
    const head = decodeLatin1(body.subarray(pos, headEnd));
    const next = indexOf(body, encodeLatin1(`\r\n--${boundary}`), headEnd + 4);
    if (next < 0) throw new WireError("The multipart body is truncated (no closing boundary)");
    const data = body.slice(headEnd + 4, next);
    const disp = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(head)?.[1] ?? "";
    const name = /\bname="([^"]*)"/i.exec(disp)?.[1];
    if (name === undefined) throw new WireError("A multipart part has no name");
    const filename = /\bfilename="([^"]*)"/i.exec(disp)?.[1];
    const ct = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
    parts.push({ name, ...(filename !== undefined ? { filename } : {}), ...(ct ? { contentType: ct } : {}), data, text: decodeLatin1(data) });
    pos = next + 2;
  }
}

/** XML attribute escaping re-exported for the simulator's small answers. */
export { escAttr, escText };
