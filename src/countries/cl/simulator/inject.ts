/**
 * POST /simulator/sii/reception/inject (SIMULATOR ONLY): registers a signed EnvioDTE as if its
 * issuer had uploaded it to the SII, so a receiving company finds it in the register.
 * Body: the EnvioDTE bytes (text/xml, ISO-8859-1 or UTF-8 as declared; at most 2 MiB).
 * Query: `received_at` (ISO 8601, optional): the SII reception time to record (deadline tests);
 * `withhold_xml=true`: the register lists the documents but hands out no XML (like the real SII).
 * The envelope goes through exactly the checks DTEUpload makes (schema, signatures of the envelope
 * and each DTE, TED against its CAF, CAF against the key of its IDK as the simulator trusts them,
 * Carátula, repeated folios), except that production CAFs (SII key IDK 300) are trusted too; a refusal answers 422 with the SII's own error lines. The envelope is
 * kept (src/countries/cl/simulator/kept-envios.ts) so the recipient can fetch each registered DTE's XML.
 */
import type { Context } from "hono";
import { createDb } from "../../../storage/db/client";
import { respondError } from "../../../http/errors/handler";
import type { AppEnv } from "../../../http/types";
import { childText, decodeXmlBytes, firstChild, type XElement } from "../xml/xml";
import { isValidRut, normalizeRut } from "../documents/rut";
import { SII_CAF_KEYS } from "../pki/sii-keys";
import { acceptedAmong, saveEnvio } from "./store";
import { keepEnvio } from "./kept-envios";
import { precheckUpload, statsOf, validateEnvio } from "./validate";

const MAX_INJECT_BYTES = 2 * 1024 * 1024;
/** A supplier's real documents carry production CAFs (IDK 300): trusted here besides the simulator's 999 and 100. */
const INJECT_TRUST = { mode: "simulator" as const, extraKeys: { 300: Uint8Array.from(atob(SII_CAF_KEYS[300]!.spki), (ch) => ch.charCodeAt(0)) } };

async function sha256Hex(b: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", b));
  return Array.from(d, (x) => x.toString(16).padStart(2, "0")).join("");
}

export async function injectEnvio(c: Context<AppEnv>): Promise<Response> {
  const receivedAtParam = c.req.query("received_at");
  const withhold = c.req.query("withhold_xml");
  if (withhold !== undefined && withhold !== "true" && withhold !== "false") {
    return respondError(c, "VALIDATION_FAILED", "withhold_xml must be true or false.", [{ field: "withhold_xml", message: "not true or false" }]);
  }
  if (receivedAtParam !== undefined && Number.isNaN(Date.parse(receivedAtParam))) {
    return respondError(c, "VALIDATION_FAILED", "received_at must be an ISO 8601 date-time, e.g. 2026-11-10T09:00:00-03:00.", [{ field: "received_at", message: "not an ISO 8601 date-time" }]);
  }
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_INJECT_BYTES) return respondError(c, "PAYLOAD_TOO_LARGE", `The EnvioDTE is larger than ${MAX_INJECT_BYTES} bytes.`);
  const file = new Uint8Array(await c.req.arrayBuffer());
  if (file.length > MAX_INJECT_BYTES) return respondError(c, "PAYLOAD_TOO_LARGE", `The EnvioDTE is larger than ${MAX_INJECT_BYTES} bytes.`);
  if (file.length === 0) return respondError(c, "VALIDATION_FAILED", "The body is empty: send the signed EnvioDTE as text/xml.");
  let text: string;
  try {
    text = decodeXmlBytes(file);
  } catch (e) {
    return respondError(c, "VALIDATION_FAILED", `The body is not readable XML: ${(e as Error).message}`);
  }
  const pre = precheckUpload(text, "EnvioDTE");
  if (!pre.ok) return respondError(c, "VALIDATION_FAILED", `The body is not an EnvioDTE the SII would take: ${pre.errors.join("; ")}`);
  const car = firstChild(firstChild(pre.doc.documentElement as XElement, "SetDTE") ?? (pre.doc.documentElement as XElement), "Caratula");
  const emisor = car ? (childText(car, "RutEmisor") ?? "") : "";
  const envia = car ? (childText(car, "RutEnvia") ?? "") : "";
  const db = createDb(c.env.DB);
  const now = receivedAtParam ? new Date(receivedAtParam) : new Date();
  const companyRut = isValidRut(emisor) ? normalizeRut(emisor) : emisor;
  const verdict = await validateEnvio(pre.doc, "EnvioDTE", { companyRut, now, latestIssueDay: new Date(), acceptedAmong: (keys) => acceptedAmong(db, keys), cafTrust: INJECT_TRUST });
  if (verdict.finalStatus !== "EPR") {
    return respondError(c, "VALIDATION_FAILED", `The SII would refuse this envelope (${verdict.finalStatus}: ${verdict.glosa}): ${verdict.errors.join("; ")}`);
  }
  const stats = statsOf(verdict.documents);
  const trackId = await saveEnvio(db, { channel: "soap", companyRut, senderRut: isValidRut(envia) ? normalizeRut(envia) : envia, fileName: "inject.xml", sha256: await sha256Hex(file), size: file.length, now, verdict, stats, scenario: undefined });
  if (withhold !== "true" && verdict.documents.some((d) => d.status !== "RCH")) await keepEnvio(c.env.FILES, trackId, file);
  return c.json(
    {
      track_id: trackId,
      received_at: now.toISOString(),
      documents: verdict.documents.map((d) => ({ issuer_rut: d.issuerRut, document_type: d.type, folio: d.folio, receiver_rut: d.receiverRut, issue_date: d.issueDate, total: d.total, registered: d.status !== "RCH", status: d.status, errors: d.errors })),
    },
    201,
  );
}
