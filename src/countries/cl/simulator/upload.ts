/** DTEUpload and the boleta REST upload: the SII's checks in its order, with the fewest D1 round trips. */
import { sha256Hex } from "../../../lib/crypto";
import { type Db } from "../../../storage/db/client";
import { normalizeRut } from "../documents/rut";
import { parseMultipart, WireError, type ParsedPart } from "../sii/wire";
import { keepEnvio } from "./kept-envios";
import { saveEnvio, scenarioQuery, consumeScenario, tokenQuery, tokenVerdict, envioByFileQuery, acceptedQueries, acceptedSet, acceptedAmong, type TokenRow, type Channel, type EnvioRow, type ScenarioRow, type ScenarioOwner } from "./store";
import { documentKeyText, envelopeDocumentKeys, precheckFile, statsOf, validateEnvio, type DocumentKey, type EnvelopeKind } from "./validate";
import { C, MAX_FILE_BYTES, cookieToken } from "./common";
import { simulatorOwner } from "./gate";

// ---- upload ----------------------------------------------------------------------------------------

interface UploadAnswer {
  status: number;
  trackId?: number;
  errors: string[];
  rutSender?: string;
  rutCompany?: string;
  file?: string;
  timestamp: string;
  duplicate?: boolean;
}

function fieldsInOrder(parts: ParsedPart[]): Record<string, ParsedPart> | string {
  const want = ["rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"];
  const names = parts.map((p) => p.name);
  if (names.length !== want.length || names.some((n, i) => n !== want[i])) return `Campos del formulario deben ser ${want.join(", ")} en ese orden (recibidos: ${names.join(", ") || "ninguno"})`;
  return Object.fromEntries(parts.map((p) => [p.name, p]));
}

type UploadGuard = (c: C) => Response | null;

/** What an upload carries once read and checked in memory; `early` is its first failure, kept for its turn. */
interface ReadUpload {
  early: UploadAnswer | null;
  company: string | null;
  sender: string | null;
  base: { rutSender: string; rutCompany: string; file: string } | null;
  file: Uint8Array | null;
  pre: ReturnType<typeof precheckFile> | null;
  sha: string | null;
  keys: DocumentKey[];
}

type Answer = (status: number, errors: string[], extra?: Partial<UploadAnswer>) => UploadAnswer;

/** The in-memory checks of an upload: transfer, form, RUTs, file, XML precheck, hash and the documents' keys. */
async function readUpload(c: C, kind: EnvelopeKind, answer: Answer): Promise<ReadUpload> {
  const r: ReadUpload = { early: null, company: null, sender: null, base: null, file: null, pre: null, sha: null, keys: [] };
  const declared = c.req.header("content-length");
  const body = new Uint8Array(await c.req.arrayBuffer());
  if (/chunked/i.test(c.req.header("transfer-encoding") ?? "")) r.early = answer(3, ["LPX-00007: unexpected end-of-file (el envio debe llevar Content-Length, no chunked)"]);
  else if (declared === undefined || !/^\d+$/.test(declared)) r.early = answer(3, ["Falta Content-Length"]);
  else if (Number(declared) !== body.length) r.early = answer(3, [`Archivo cortado: Content-Length ${declared}, recibidos ${body.length} bytes`]);
  else await readForm(c, body, kind, answer, r);
  return r;
}

async function readForm(c: C, body: Uint8Array, kind: EnvelopeKind, answer: Answer, r: ReadUpload): Promise<void> {
  let parts: ParsedPart[] | null = null;
  try {
    parts = parseMultipart(body, c.req.header("content-type") ?? "");
  } catch (e) {
    r.early = answer(3, [`Formulario multipart invalido: ${(e as WireError).message}`]);
  }
  const f = parts && fieldsInOrder(parts);
  if (typeof f === "string") r.early = answer(7, [f]);
  if (!f || typeof f === "string") return;
  try {
    r.sender = normalizeRut(`${f.rutSender!.text.trim()}-${f.dvSender!.text.trim()}`);
  } catch {
    r.early = answer(1, ["rutSender/dvSender no es un RUT valido"]);
    return;
  }
  try {
    r.company = normalizeRut(`${f.rutCompany!.text.trim()}-${f.dvCompany!.text.trim()}`);
  } catch {
    r.early = answer(6, ["rutCompany/dvCompany no es un RUT valido"], { rutSender: r.sender });
    return;
  }
  r.base = { rutSender: r.sender, rutCompany: r.company, file: f.archivo!.filename ?? "archivo" };
  r.file = f.archivo!.data;
  if (r.file.length > 0 && r.file.length <= MAX_FILE_BYTES) {
    r.pre = precheckFile(r.file, kind);
    if (r.pre.ok) {
      r.sha = await sha256Hex(r.file);
      r.keys = envelopeDocumentKeys(r.pre.doc);
    }
  }
}

/** ONE batch reads everything the answer may depend on. */
async function readUploadContext(db: Db, owner: ScenarioOwner, channel: Channel, token: string | undefined, r: ReadUpload) {
  const { company, sha } = r;
  const globalDownQ = scenarioQuery(db, owner, ["down"], null);
  const tokenQ = token ? tokenQuery(db, token) : null;
  const companyDownQ = company !== null ? scenarioQuery(db, owner, ["down"], company, { exact: true }) : null;
  const previousQ = company !== null && sha !== null ? envioByFileQuery(db, channel, company, sha) : null;
  const scenarioQ = company !== null && sha !== null ? scenarioQuery(db, owner, ["accept", "reject", "object", "delay"], company) : null;
  const acceptedQs = sha !== null ? acceptedQueries(db, r.keys) : [];
  const queries = [globalDownQ, tokenQ, companyDownQ, previousQ, scenarioQ, ...acceptedQs].filter((q) => q !== null);
  const results = (await db.batch(queries as [(typeof queries)[number], ...(typeof queries)[number][]])) as unknown[][];
  let at = 0;
  const next = <T,>(q: unknown): T | undefined => (q === null ? undefined : (results[at++]![0] as T | undefined));
  return {
    globalDown: next<ScenarioRow>(globalDownQ),
    tokenRow: next<TokenRow>(tokenQ),
    companyDown: next<ScenarioRow>(companyDownQ),
    previous: next<EnvioRow>(previousQ),
    scenario: next<ScenarioRow>(scenarioQ),
    acceptedRows: results.slice(at) as { issuerRut: string; type: number; folio: number }[][],
  };
}

/** Scenario "reject" or "object" applied to an envelope the checks accepted. */
function applyScenario(verdict: Awaited<ReturnType<typeof validateEnvio>>, scenario: ScenarioRow | undefined): void {
  if (verdict.finalStatus !== "EPR" || !scenario) return;
  for (const d of verdict.documents) {
    if (scenario.mode === "reject") {
      d.status = "RCH";
      d.errors.push("SIM-RECHAZO Rechazo forzado por escenario del simulador");
    } else if (scenario.mode === "object" && d.status === "DOK") {
      d.status = "RLV";
      d.errors.push("SIM-REPARO Aceptado con reparos por escenario del simulador");
    }
  }
}

/**
 * An upload, with as few D1 round trips as its checks allow: the request is read and checked in
 * memory first (form, RUTs, file, XML precheck, hash, the documents' keys), then ONE batch reads
 * everything the answer may depend on (global and company "down" scenarios, token, same file
 * uploaded before, accept/reject/object/delay scenario, accepted folios among the envelope's), then
 * ONE batch records the envelope and its documents. The checks are answered in the SII's order as
 * before: a global "down" first, then `guard` (boleta REST: User-Agent), the token, the form, a
 * company "down", the file, the duplicate file, the scenario, the validation. A scenario with a count
 * is consumed when it applies (one more round trip then).
 */
export async function handleUpload(c: C, db: Db, channel: Channel, kind: EnvelopeKind, now: Date, opts: { guard?: UploadGuard; restAuth?: boolean } = {}): Promise<UploadAnswer | Response> {
  const timestamp = now.toISOString().slice(0, 19).replace("T", " ");
  const answer: Answer = (status, errors, extra = {}) => ({ status, errors, timestamp, ...extra });
  const token = cookieToken(c);
  const r = await readUpload(c, kind, answer);
  const ctx = await readUploadContext(db, simulatorOwner(c), channel, token, r);

  if (ctx.globalDown) {
    await consumeScenario(db, ctx.globalDown);
    throw new SimulatedOutage(ctx.globalDown.failure);
  }
  const refused = opts.guard?.(c);
  if (refused) return refused;
  const tok = tokenVerdict(token, ctx.tokenRow, channel, now);
  if (!tok.ok) {
    if (opts.restAuth) return c.json({ error: "Unauthorized: token invalido" }, 401);
    return answer(5, [tok.problem === "expired" ? "Token vencido" : "No esta autenticado (TOKEN invalido)"]);
  }
  if (r.early) return r.early;
  const { base, file, sender, company, pre, keys } = r;
  if (!base || !file || sender === null || company === null) return answer(3, ["Formulario multipart invalido"]);
  if (sender !== tok.rut) return answer(1, [`El usuario autenticado (${tok.rut}) no corresponde a rutSender ${sender}`], base);
  if (ctx.companyDown) {
    await consumeScenario(db, ctx.companyDown);
    throw new SimulatedOutage(ctx.companyDown.failure);
  }
  if (file.length === 0 || file.length > MAX_FILE_BYTES) return answer(2, [`Tamano de archivo invalido (${file.length} bytes)`], base);
  if (!pre || !pre.ok) return answer(7, pre && !pre.ok ? pre.errors : [], base);
  if (ctx.previous) return answer(99, [`Archivo ya fue enviado con Trackid ${ctx.previous.trackId}`], { ...base, trackId: ctx.previous.trackId, duplicate: true });
  const { scenario } = ctx;
  if (scenario) await consumeScenario(db, scenario);
  const prefetched = acceptedSet(ctx.acceptedRows);
  const prefetchedKeys = new Set(keys.map(documentKeyText));
  const verdict = await validateEnvio(pre.doc, kind, {
    companyRut: company,
    now,
    // The keys validateEnvio asks about are the prefetched ones; anything else is looked up.
    acceptedAmong: async (asked) => (asked.every((k) => prefetchedKeys.has(documentKeyText(k))) ? prefetched : acceptedAmong(db, asked)),
  });
  applyScenario(verdict, scenario);
  const stats = statsOf(verdict.documents);
  const trackId = await saveEnvio(db, { channel, companyRut: company, senderRut: sender, fileName: base.file, sha256: r.sha!, size: file.length, now, verdict, stats, scenario });
  if (kind === "EnvioDTE" && verdict.documents.some((d) => d.status !== "RCH")) await keepEnvio(c.env.FILES, trackId, file);
  return answer(0, [], { ...base, trackId });
}

export class SimulatedOutage extends Error {
  constructor(readonly failure: ScenarioRow["failure"]) {
    super("simulated outage");
  }
}

/**
 * The failure of a "down" scenario: http503 = 503 page; error500 = HTTP 200 with an "Error 500" body
 * (what the SII gateway sends); reset = headers arrive, then the body stream errors (a dropped
 * connection, seen by the client while reading).
 */
export function outage(c: C, failure: ScenarioRow["failure"]) {
  if (failure === "error500") return c.text("Error 500: Internal Server Error (SII simulator scenario: down)", 200);
  if (failure === "reset") {
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        ctrl.error(new Error("connection reset by peer (SII simulator scenario: down)"));
      },
    });
    return new Response(body, { status: 200, headers: { "Content-Type": "text/xml" } });
  }
  return c.html("<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1><p>SII simulator scenario: down</p></body></html>", 503, { "Retry-After": "5" });
}
