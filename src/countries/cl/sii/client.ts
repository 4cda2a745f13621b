/**
 * The SII client: the real wire protocol over `fetch` (sii-formats.md §4), with an injectable
 * fetcher and hosts chosen by mode (./endpoints.ts). Its HTTP layer is ./transport.ts, the reading of
 * the SII's answers ./answers.ts; this class holds the sessions (tokens) and the operations.
 *
 * Operations: getSeed, requestToken (signed seed), token caching per company+certificate with a TTL
 * and re-authentication when the SII refuses a token, uploadEnvio (DTEUpload multipart), queryEstUp,
 * queryEstDte, and the boleta REST service (seed, token, envio upload, envio status).
 * Failures are SiiError with `retryable`. The client does not retry transport errors itself (the
 * issuance queue does); it only re-authenticates once when a token is refused.
 */
import { buildTokenRequest, type XmlSigner } from "../xml/xmldsig";
import { SiiError } from "./errors";
import { explainSiiStatus } from "./status";
import { boletaEnvioStatus, boletaUploadOutcome, estDteStatus, estUpStatus, readSeed, readToken, uploadOutcome, type DteStatus, type EnvioStatus, type UploadResult } from "./answers";
import { siiEndpoints, type SiiEndpoints, type SiiMode } from "./endpoints";
import { badResponse, httpError, SiiTransport, splitRut, TokenRejected, type SiiFetcher } from "./transport";
import { buildMultipart, parseRecepcionDte, parseRespuesta, SII_USER_AGENT, WireError, type RecepcionDte, type Respuesta } from "./wire";

export { SII_SIMULATOR_BASE_URL, siiEndpoints, type SiiEndpoints, type SiiMode } from "./endpoints";
export type { DteStatus, EnvioStatus, UploadResult } from "./answers";
export type { SiiFetcher } from "./transport";

/** The company certificate as the client needs it; SigningCredentials (certificate.ts) satisfies it. */
export interface SiiCertificate extends XmlSigner {
  /** Holder's RUT (SAN); the SII authenticates this person. */
  rut: string | null;
  fingerprintSha1: string;
}

export interface SiiClientOptions {
  mode?: SiiMode;
  /** Overrides of the mode's hosts. */
  endpoints?: Partial<SiiEndpoints>;
  /** Base of the simulator (mode simulator). */
  simulatorBaseUrl?: string;
  /** Defaults to global fetch. */
  fetcher?: SiiFetcher;
  /** Token lifetime in the cache (the SII does not publish one). Default 10 minutes. */
  tokenTtlMs?: number;
  userAgent?: string;
  now?: () => number;
}

export type SiiChannel = "soap" | "rest";

export interface UploadParams {
  cert: SiiCertificate;
  /** Issuer RUT (rutCompany). */
  companyRut: string;
  /** The signed envelope, ISO-8859-1 bytes (SignedEnvelope.xml). */
  file: Uint8Array;
  fileName?: string;
}

export interface QueryEstDteParams {
  cert: SiiCertificate;
  companyRut: string;
  receiverRut: string;
  documentType: number;
  folio: number;
  /** FchEmis, YYYY-MM-DD (sent as DDMMYYYY). */
  issueDate: string;
  /** MntTotal as an integer (string or bigint accepted). */
  total: string | number | bigint;
  /** RutConsultante; defaults to the certificate holder. */
  consultantRut?: string;
  /** The company whose session (cached token) asks, when not the issuer (a recipient asking about a supplier's document). */
  askingCompanyRut?: string;
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

/** Process-wide token cache: company + certificate + channel + host -> token. */
const TOKEN_CACHE = new Map<string, CachedToken>();

export function clearSiiTokenCache(): void {
  TOKEN_CACHE.clear();
}

export class SiiClient {
  readonly mode: SiiMode;
  readonly endpoints: SiiEndpoints;
  private readonly fetcher: SiiFetcher;
  private readonly tokenTtlMs: number;
  private readonly userAgent: string;
  private readonly now: () => number;
  private readonly transport: SiiTransport;

  constructor(opts: SiiClientOptions = {}) {
    this.mode = opts.mode ?? "simulator";
    this.endpoints = { ...siiEndpoints(this.mode, opts.simulatorBaseUrl), ...(opts.endpoints ?? {}) };
    this.fetcher = opts.fetcher ?? ((req) => fetch(req));
    this.tokenTtlMs = opts.tokenTtlMs ?? 10 * 60_000;
    this.userAgent = opts.userAgent ?? SII_USER_AGENT;
    this.now = opts.now ?? (() => Date.now());
    this.transport = new SiiTransport(this.fetcher, this.userAgent);
  }

  /** Sends a request through the transport (see SiiTransport.send). */
  private send(operation: string, req: Request, opts: { tokenAware?: boolean } = {}): Promise<{ status: number; text: string; headers: Headers }> {
    return this.transport.send(operation, req, opts);
  }

  /** Calls an rpc/encoded DTEWS operation on this client's SOAP host. */
  private soap(service: string, method: string, params: [string, string][], opts: { tokenAware?: boolean } = {}): Promise<Respuesta> {
    return this.transport.soap(this.endpoints.soapBase, service, method, params, opts);
  }

  // ---- authentication ---------------------------------------------------------------------------

  private holderRut(cert: SiiCertificate, operation: string): { body: string; dv: string } {
    if (!cert.rut) throw new SiiError("CERTIFICATE_NO_RUT", `${operation}: the certificate carries no holder RUT (SAN 1.3.6.1.4.1.8321.1)`, { retryable: false, operation });
    return splitRut(cert.rut, "certificate RUT", operation);
  }

  /** CrSeed.getSeed: a fresh seed (valid 2 minutes at the SII). */
  async getSeed(): Promise<string> {
    return readSeed("CrSeed.getSeed", await this.soap("CrSeed", "getSeed", []));
  }

  /** Seed + signed token request (GetTokenFromSeed.getToken). Not cached. */
  async requestToken(cert: SiiCertificate): Promise<string> {
    const seed = await this.getSeed();
    const signed = await buildTokenRequest(seed, cert);
    return readToken("GetTokenFromSeed.getToken", await this.soap("GetTokenFromSeed", "getToken", [["pszXml", signed]]));
  }

  /** Boleta REST: GET boleta.electronica.semilla. */
  async getBoletaSeed(): Promise<string> {
    const operation = "boleta.electronica.semilla";
    const { status, text } = await this.send(operation, new Request(`${this.endpoints.restBase}/boleta.electronica.semilla`, { headers: { Accept: "application/xml", "User-Agent": this.userAgent } }));
    if (status >= 400) throw httpError(operation, status, text);
    let r: Respuesta;
    try {
      r = parseRespuesta(text);
    } catch (e) {
      throw badResponse(operation, e);
    }
    return readSeed(operation, r);
  }

  /** Boleta REST: seed + POST boleta.electronica.token with the signed seed. Not cached. */
  async requestBoletaToken(cert: SiiCertificate): Promise<string> {
    const operation = "boleta.electronica.token";
    const seed = await this.getBoletaSeed();
    const signed = await buildTokenRequest(seed, cert);
    const { status, text } = await this.send(
      operation,
      new Request(`${this.endpoints.restBase}/boleta.electronica.token`, { method: "POST", headers: { "Content-Type": "application/xml", Accept: "application/xml", "User-Agent": this.userAgent }, body: signed }),
    );
    if (status >= 400 && !text.trim().startsWith("<")) throw httpError(operation, status, text);
    let r: Respuesta;
    try {
      r = parseRespuesta(text);
    } catch (e) {
      throw badResponse(operation, e);
    }
    return readToken(operation, r);
  }

  private cacheKey(channel: SiiChannel, companyRut: string, cert: SiiCertificate): string {
    const host = channel === "soap" ? this.endpoints.soapBase : this.endpoints.restBase;
    return `${channel}|${host}|${companyRut}|${cert.fingerprintSha1}`;
  }

  /** A token for the company+certificate from the cache, or a fresh one. */
  async token(cert: SiiCertificate, companyRut: string, channel: SiiChannel = "soap", opts: { force?: boolean } = {}): Promise<string> {
    const key = this.cacheKey(channel, companyRut, cert);
    const hit = TOKEN_CACHE.get(key);
    if (hit && !opts.force && hit.expiresAt > this.now()) return hit.token;
    const token = channel === "soap" ? await this.requestToken(cert) : await this.requestBoletaToken(cert);
    TOKEN_CACHE.set(key, { token, expiresAt: this.now() + this.tokenTtlMs });
    return token;
  }

  invalidateToken(cert: SiiCertificate, companyRut: string, channel: SiiChannel = "soap"): void {
    TOKEN_CACHE.delete(this.cacheKey(channel, companyRut, cert));
  }

  /** Runs fn with a token; when the SII refuses it, re-authenticates once and runs fn again. */
  private async withToken<T>(cert: SiiCertificate, companyRut: string, channel: SiiChannel, fn: (token: string) => Promise<T>): Promise<T> {
    const first = await this.token(cert, companyRut, channel);
    try {
      return await fn(first);
    } catch (e) {
      if (!(e instanceof TokenRejected)) throw e;
      this.invalidateToken(cert, companyRut, channel);
    }
    const fresh = await this.token(cert, companyRut, channel, { force: true });
    try {
      return await fn(fresh);
    } catch (e) {
      if (!(e instanceof TokenRejected)) throw e;
      this.invalidateToken(cert, companyRut, channel);
      const info = explainSiiStatus(e.siiCode === "5" ? "upload" : "envio", e.siiCode);
      throw new SiiError("TOKEN_INVALID", `${e.operation}: the SII refused a freshly issued token (${e.siiCode})`, { retryable: true, operation: e.operation, siiCode: e.siiCode, es: info.es, en: info.en });
    }
  }

  /**
   * A document/literal SOAP call to a token-authenticated WS (token as the TOKEN cookie; reception's
   * RegistroReclamoDteService). Returns the response text; a fault naming the token or HTTP 401
   * re-authenticates once. `extraHeaders` go on the request as they are.
   */
  async soapWithToken(p: { url: string; body: string; cert: SiiCertificate; companyRut: string; operation: string; extraHeaders?: Record<string, string> }): Promise<string> {
    return this.withToken(p.cert, p.companyRut, "soap", async (token) => {
      const req = new Request(p.url, {
        method: "POST",
        headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: '""', "User-Agent": this.userAgent, Accept: "text/xml", Cookie: `TOKEN=${token}`, ...(p.extraHeaders ?? {}) },
        body: p.body,
      });
      const { status, text } = await this.send(p.operation, req, { tokenAware: true });
      if (status >= 400 && /token/i.test(text)) throw new TokenRejected(p.operation, String(status));
      if (status >= 400 && !text.includes("Envelope")) throw httpError(p.operation, status, text);
      return text;
    });
  }

  /**
   * A request of a token-authenticated service this class does not wrap (the RPETC's): `build` makes
   * it with the token, `read` reads the answer (throwing TokenRejected re-authenticates once).
   */
  async withSession<T>(p: { cert: SiiCertificate; companyRut: string; operation: string }, build: (token: string) => Request, read: (answer: { status: number; text: string }) => T): Promise<T> {
    return this.withToken(p.cert, p.companyRut, "soap", async (token) => read(await this.send(p.operation, build(token), { tokenAware: true })));
  }

  /** A token-authenticated JSON GET (the simulator's reception register). */
  async getJsonWithToken(p: { url: string; cert: SiiCertificate; companyRut: string; operation: string; extraHeaders?: Record<string, string> }): Promise<unknown> {
    return this.withToken(p.cert, p.companyRut, "soap", async (token) => {
      const req = new Request(p.url, { headers: { Accept: "application/json", "User-Agent": this.userAgent, Cookie: `TOKEN=${token}`, ...(p.extraHeaders ?? {}) } });
      const { status, text } = await this.send(p.operation, req, { tokenAware: true });
      if (status >= 400) throw httpError(p.operation, status, text);
      try {
        return JSON.parse(text) as unknown;
      } catch (e) {
        throw badResponse(p.operation, e);
      }
    });
  }

  // ---- DTEUpload ----------------------------------------------------------------------------------

  private uploadRequest(url: string, p: UploadParams, token: string, accept: string, operation: string): Request {
    const sender = this.holderRut(p.cert, operation);
    const company = splitRut(p.companyRut, "companyRut", operation);
    if (p.file.length === 0) throw new SiiError("INVALID_ARGUMENT", `${operation}: the file is empty`, { retryable: false, operation });
    const mp = buildMultipart([
      { name: "rutSender", value: sender.body },
      { name: "dvSender", value: sender.dv },
      { name: "rutCompany", value: company.body },
      { name: "dvCompany", value: company.dv },
      { name: "archivo", filename: p.fileName ?? "envio.xml", contentType: "text/xml", data: p.file },
    ]);
    return new Request(url, {
      method: "POST",
      headers: {
        "Content-Type": mp.contentType,
        "Content-Length": String(mp.body.length),
        Cookie: `TOKEN=${token}`,
        "User-Agent": this.userAgent,
        Accept: accept,
      },
      body: mp.body,
    });
  }

  /** DTEUpload: sends a signed EnvioDTE. STATUS 0 -> track id; 99 (already received) -> the original track id. */
  async uploadEnvio(p: UploadParams): Promise<UploadResult> {
    const operation = "DTEUpload";
    return this.withToken(p.cert, p.companyRut, "soap", async (token) => {
      const req = this.uploadRequest(`${this.endpoints.soapBase}/cgi_dte/UPL/DTEUpload`, p, token, "*/*", operation);
      const { status, text } = await this.send(operation, req);
      let r: RecepcionDte;
      try {
        r = parseRecepcionDte(text);
      } catch (e) {
        if (status >= 400) throw httpError(operation, status, text);
        throw badResponse(operation, e);
      }
      return uploadOutcome(operation, r.status, r.trackId, r.errors, r.timestamp);
    });
  }

  // ---- status queries -----------------------------------------------------------------------------

  /** QueryEstUp.getEstUp: the envelope's state and, after EPR, per-type counts. */
  async queryEstUp(p: { cert: SiiCertificate; companyRut: string; trackId: string | number }): Promise<EnvioStatus> {
    const operation = "QueryEstUp.getEstUp";
    const company = splitRut(p.companyRut, "companyRut", operation);
    const trackId = String(p.trackId).trim();
    if (!/^\d{1,15}$/.test(trackId)) throw new SiiError("INVALID_ARGUMENT", `${operation}: trackId must be digits`, { retryable: false, operation });
    return this.withToken(p.cert, p.companyRut, "soap", async (token) => {
      const r = await this.soap(
        "QueryEstUp",
        "getEstUp",
        [
          ["RutCompania", company.body],
          ["DvCompania", company.dv],
          ["TrackId", trackId],
          ["Token", token],
        ],
        { tokenAware: true },
      );
      return estUpStatus(operation, r, trackId);
    });
  }

  /** QueryEstDte.getEstDte: one document as registered at the SII. */
  async queryEstDte(p: QueryEstDteParams): Promise<DteStatus> {
    const operation = "QueryEstDte.getEstDte";
    const company = splitRut(p.companyRut, "companyRut", operation);
    const receiver = splitRut(p.receiverRut, "receiverRut", operation);
    const consultant = p.consultantRut ? splitRut(p.consultantRut, "consultantRut", operation) : this.holderRut(p.cert, operation);
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(p.issueDate);
    if (!m) throw new SiiError("INVALID_ARGUMENT", `${operation}: issueDate must be YYYY-MM-DD`, { retryable: false, operation });
    const total = String(p.total);
    if (!/^-?\d+$/.test(total)) throw new SiiError("INVALID_ARGUMENT", `${operation}: total must be an integer amount`, { retryable: false, operation });
    return this.withToken(p.cert, p.askingCompanyRut ?? p.companyRut, "soap", async (token) => {
      const r = await this.soap(
        "QueryEstDte",
        "getEstDte",
        [
          ["RutConsultante", consultant.body],
          ["DvConsultante", consultant.dv],
          ["RutCompania", company.body],
          ["DvCompania", company.dv],
          ["RutReceptor", receiver.body],
          ["DvReceptor", receiver.dv],
          ["TipoDte", String(p.documentType)],
          ["FolioDte", String(p.folio)],
          ["FechaEmisionDte", `${m[3]}${m[2]}${m[1]}`],
          ["MontoDte", total],
          ["Token", token],
        ],
        { tokenAware: true },
      );
      return estDteStatus(operation, r);
    });
  }

  // ---- boleta REST --------------------------------------------------------------------------------

  /**
   * A CAF file from the authority's folio portal. Only the simulator offers it as a service
   * (`POST /caf`): the real SII hands CAFs out only in its web portal behind a mutual-TLS session
   * with the taxpayer's certificate, so in certification and production this is refused
   * (`INVALID_ARGUMENT`, not retryable). A 409 from the simulator (overlapping range) is not retryable.
   */
  async requestCaf(p: CafRequest): Promise<Uint8Array> {
    if (this.mode !== "simulator") {
      throw new SiiError("INVALID_ARGUMENT", "The SII hands out CAF files only in its certificate-authenticated web portal", { retryable: false, operation: "CAF" });
    }
    const body = { rut: p.rut, document_type: p.documentType, from: p.from, to: p.to, quantity: p.quantity, legal_name: p.legalName };
    const req = new Request(`${this.endpoints.soapBase}/caf`, { method: "POST", headers: { "Content-Type": "application/json", "User-Agent": this.userAgent }, body: JSON.stringify(body) });
    let res: Response;
    try {
      res = await this.fetcher(req);
    } catch (e) {
      throw new SiiError("NETWORK", `CAF: the SII could not be reached: ${(e as Error).message}`, { retryable: true, operation: "CAF", cause: e });
    }
    if (res.status >= 500) throw new SiiError("HTTP_ERROR", `CAF: the SII answered HTTP ${res.status}`, { retryable: true, operation: "CAF", httpStatus: res.status, siiCode: String(res.status) });
    if (res.status !== 200) throw httpError("CAF", res.status, await res.text());
    return new Uint8Array(await res.arrayBuffer());
  }

  /** POST {restUpload}/boleta.electronica.envio: sends a signed EnvioBOLETA (39/41). */
  async uploadBoleta(p: UploadParams): Promise<UploadResult> {
    const operation = "boleta.electronica.envio";
    return this.withToken(p.cert, p.companyRut, "rest", async (token) => {
      const req = this.uploadRequest(`${this.endpoints.restUploadBase}/boleta.electronica.envio`, p, token, "application/json", operation);
      const { status, text } = await this.send(operation, req, { tokenAware: true });
      return boletaUploadOutcome(operation, status, text);
    });
  }

  /** GET {rest}/boleta.electronica.envio/{rut}-{dv}-{trackid}: state, per-type statistics and rejected/objected details. */
  async queryBoletaEnvio(p: { cert: SiiCertificate; companyRut: string; trackId: string | number }): Promise<EnvioStatus> {
    const operation = "boleta.electronica.envio (status)";
    const company = splitRut(p.companyRut, "companyRut", operation);
    const trackId = String(p.trackId).trim();
    if (!/^\d{1,15}$/.test(trackId)) throw new SiiError("INVALID_ARGUMENT", `${operation}: trackId must be digits`, { retryable: false, operation });
    return this.withToken(p.cert, p.companyRut, "rest", async (token) => {
      const req = new Request(`${this.endpoints.restBase}/boleta.electronica.envio/${company.body}-${company.dv}-${trackId}`, {
        headers: { Cookie: `TOKEN=${token}`, Accept: "application/json", "User-Agent": this.userAgent },
      });
      const { status, text } = await this.send(operation, req, { tokenAware: true });
      return boletaEnvioStatus(operation, status, text, trackId);
    });
  }
}

/** A CAF request (§4.7 refetch): the range, or the next `quantity` folios when `from`/`to` are absent. */
export interface CafRequest {
  rut: string;
  documentType: number;
  from?: number;
  to?: number;
  quantity?: number;
  legalName?: string;
}

export function createSiiClient(opts: SiiClientOptions = {}): SiiClient {
  return new SiiClient(opts);
}

export { WireError };
