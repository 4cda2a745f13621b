/**
 * The simulated RPETC upload, POST /cgi_rtc/RTC/RTCAnotEnvio.cgi (cesion.md §3.1): multipart
 * emailNotif, rutCompany, dvCompany, archivo with the TOKEN cookie, answered <RECEPCIONAEC>. The
 * answer's STATUS, in the register's order: 5 no valid token; 4 a field missing or a RUT malformed;
 * 2 an empty or too large file; 6 a company that never sent the SII a DTE; else 0 with a TRACKID,
 * the file's verdict (./rpetc-check.ts) decided now and revealed by getEstEnvio over polls or time.
 * Scenarios of the company: reject (the register refuses the cession, RCS with SIM-RECHAZO) and
 * delay (the upload stays RCP for the scenario's polls or seconds); down fails every call (./app.ts).
 */
import { createDb } from "../../../storage/db/client";
import { normalizeRut } from "../documents/rut";
import { decodeXmlBytes } from "../xml/xml";
import { buildRecepcionAec } from "../cession/rpetc-wire";
import { parseMultipart, type ParsedPart } from "../sii/wire";
import { sha256Hex } from "../../../lib/crypto";
import { C, MAX_FILE_BYTES, cookieToken } from "./common";
import { simulatorOwner } from "./gate";
import { checkAec } from "./rpetc-check";
import { isIssuer, registerView, saveAecEnvio } from "./rpetc-store";
import { checkToken, consumeScenario, scenarioQuery } from "./store";

const answer = (c: C, status: number, extra: { rutSender?: string; rutCompany?: string; file?: string; trackId?: number } = {}) => {
  const timestamp = new Date().toISOString().slice(0, 19).replace(/^(\d{4})-(\d{2})-(\d{2})T/, "$3-$2-$1 ");
  const { trackId, ...rest } = extra;
  const body = buildRecepcionAec({ ...rest, timestamp, status, ...(trackId !== undefined ? { trackId: String(trackId).padStart(10, "0") } : {}) });
  return c.body(body, 200, { "Content-Type": "text/xml; charset=ISO-8859-1" });
};

function fields(parts: ParsedPart[]): Record<string, ParsedPart> | null {
  const byName = Object.fromEntries(parts.map((p) => [p.name, p]));
  return ["emailNotif", "rutCompany", "dvCompany", "archivo"].every((n) => byName[n]) ? byName : null;
}

export async function rpetcUpload(c: C): Promise<Response> {
  const db = createDb(c.env.DB);
  const now = new Date();
  const token = await checkToken(db, cookieToken(c), "soap", now);
  if (!token.ok) return answer(c, 5);
  const body = new Uint8Array(await c.req.arrayBuffer());
  let parts: ParsedPart[];
  try {
    parts = parseMultipart(body, c.req.header("content-type") ?? "");
  } catch {
    return answer(c, 4, { rutSender: token.rut });
  }
  const f = fields(parts);
  if (!f) return answer(c, 4, { rutSender: token.rut });
  let company: string;
  try {
    company = normalizeRut(`${f.rutCompany!.text.trim()}-${f.dvCompany!.text.trim()}`);
  } catch {
    return answer(c, 4, { rutSender: token.rut });
  }
  const base = { rutSender: token.rut, rutCompany: company, file: f.archivo!.filename ?? "archivo" };
  const file = f.archivo!.data;
  if (file.length === 0 || file.length > MAX_FILE_BYTES) return answer(c, 2, base);
  if (!(await isIssuer(db, company))) return answer(c, 6, base);
  const scenario = await scenarioQuery(db, simulatorOwner(c), ["accept", "reject", "delay"], company).get();
  if (scenario) await consumeScenario(db, scenario);
  let verdict;
  try {
    verdict = await checkAec(decodeXmlBytes(file), company, now, registerView(db));
  } catch (e) {
    verdict = { status: "RSC" as const, errors: [`Archivo ilegible: ${(e as Error).message}`] };
  }
  if (verdict.status === "EOK" && scenario?.mode === "reject") verdict = { status: "RCS" as const, errors: ["SIM-RECHAZO Rechazo forzado por escenario del simulador"] };
  const trackId = await saveAecEnvio(db, { companyRut: company, senderRut: token.rut, sha256: await sha256Hex(file), size: file.length, now, status: verdict.status, errors: verdict.errors, cession: verdict.status === "EOK" ? verdict.cession : null, scenario });
  return answer(c, 0, { ...base, trackId });
}
