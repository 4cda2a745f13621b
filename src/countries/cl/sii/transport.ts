/**
 * The SII client's HTTP layer: sending a request through the injectable fetcher, calling an
 * rpc/encoded DTEWS operation, and turning transport failures, error pages and refusals into
 * SiiErrors (`retryable` for what a later attempt may fix). A refused token is signalled with
 * TokenRejected so the client can re-authenticate once.
 */
import { parseRut } from "../documents/rut";
import { SiiError } from "./errors";
import { explainSiiStatus, type SiiStatusKind } from "./status";
import { parseRespuesta, parseSoapResponse, soapRequest, type Respuesta } from "./wire";

export type SiiFetcher = (req: Request) => Promise<Response>;

/** Signals that the SII refused the token: the caller re-authenticates once. */
export class TokenRejected extends Error {
  constructor(
    readonly operation: string,
    readonly siiCode: string,
  ) {
    super(`${operation}: token refused (${siiCode})`);
  }
}

export function splitRut(rut: string, field: string, operation: string): { body: string; dv: string } {
  try {
    return parseRut(rut);
  } catch (e) {
    throw new SiiError("INVALID_ARGUMENT", `${field}: ${(e as Error).message}`, { retryable: false, operation });
  }
}

function isErrorPage(text: string): boolean {
  return /^\s*Error 500\b/i.test(text) || /<title>[^<]*(Error 500|Internal Server Error|Service Unavailable)/i.test(text);
}

export function statusError(code: "SEED_FAILED" | "TOKEN_REFUSED" | "UPLOAD_REFUSED" | "QUERY_FAILED", kind: SiiStatusKind, siiCode: string, operation: string, glosa?: string): SiiError {
  const info = explainSiiStatus(kind, siiCode);
  return new SiiError(code, `${operation} answered ${siiCode}${glosa ? ` (${glosa})` : ""}: ${info.en}`, {
    retryable: info.outcome === "RETRYABLE_ERROR",
    operation,
    siiCode,
    siiKind: kind,
    es: info.es,
    en: info.en,
  });
}

export function httpError(operation: string, status: number, text: string): SiiError {
  return new SiiError("HTTP_ERROR", `${operation}: the SII answered HTTP ${status}: ${text.slice(0, 200)}`, { retryable: false, operation, httpStatus: status, siiCode: String(status) });
}

export function badResponse(operation: string, e: unknown): SiiError {
  return new SiiError("BAD_RESPONSE", `${operation}: unreadable answer: ${(e as Error).message}`, { retryable: true, operation, cause: e });
}

export class SiiTransport {
  constructor(
    private readonly fetcher: SiiFetcher,
    readonly userAgent: string,
  ) {}

  /** Sends a request; transport failures and 5xx become retryable SiiErrors. Returns status + text. */
  async send(operation: string, req: Request, opts: { tokenAware?: boolean } = {}): Promise<{ status: number; text: string; headers: Headers }> {
    let res: Response;
    try {
      res = await this.fetcher(req);
    } catch (e) {
      throw new SiiError("NETWORK", `${operation}: the SII could not be reached: ${(e as Error).message}`, { retryable: true, operation, cause: e });
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw new SiiError("NETWORK", `${operation}: the connection broke while reading the answer: ${(e as Error).message}`, { retryable: true, operation, cause: e });
    }
    if (opts.tokenAware && res.status === 401) throw new TokenRejected(operation, "401");
    if (res.status >= 500 || res.status === 429 || res.status === 408) {
      throw new SiiError("HTTP_ERROR", `${operation}: the SII answered HTTP ${res.status}`, { retryable: true, operation, httpStatus: res.status, siiCode: String(res.status) });
    }
    if (isErrorPage(text)) throw new SiiError("SERVICE_ERROR", `${operation}: the SII answered an error page ("Error 500")`, { retryable: true, operation, httpStatus: res.status });
    return { status: res.status, text, headers: res.headers };
  }

  /** Calls an rpc/encoded DTEWS operation at `soapBase` and returns its SII:RESPUESTA. */
  async soap(soapBase: string, service: string, method: string, params: [string, string][], opts: { tokenAware?: boolean } = {}): Promise<Respuesta> {
    const operation = `${service}.${method}`;
    const req = new Request(`${soapBase}/DTEWS/${service}.jws`, {
      method: "POST",
      headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: '""', "User-Agent": this.userAgent, Accept: "text/xml" },
      body: soapRequest(method, params),
    });
    const { status, text } = await this.send(operation, req);
    let parsed;
    try {
      parsed = parseSoapResponse(text);
    } catch (e) {
      if (status >= 400) throw httpError(operation, status, text);
      throw badResponse(operation, e);
    }
    if (parsed.kind === "fault") {
      if (opts.tokenAware && /token/i.test(parsed.faultString)) throw new TokenRejected(operation, parsed.faultString);
      throw new SiiError("SOAP_FAULT", `${operation}: SOAP fault ${parsed.faultCode}: ${parsed.faultString}`, { retryable: true, operation, siiCode: parsed.faultCode });
    }
    try {
      return parseRespuesta(parsed.value);
    } catch (e) {
      throw badResponse(operation, e);
    }
  }
}
