/**
 * The one intake of received documents, for every channel (upload, e-mail, SII register). A file (an
 * EnvioDTE or a single DTE) is stored once in R2 under a key built from the company and the file's
 * SHA-256 (never from a file or attachment name); each DTE becomes a row keyed by company, issuer,
 * type and folio with its checks. Idempotent: the same bytes again change nothing; a different DTE
 * with a known key is stored and flagged as a duplicate (EstadoRecepDTE 4). A failed verification
 * never blocks intake.
 */
import { envForMode } from "../config";
import { and, eq, inArray } from "drizzle-orm";
import { isValidRut, normalizeRut, receptionCafTrust, verifyInbound, type InboundReport } from "../countries/cl";
import { createDb } from "../db/client";
import { eventOutbox, receivedDocuments, type ResponseState } from "../db/schema";
import type { CompanyRow } from "../domain/companies/repository";
import { sha256Hex } from "../lib/crypto";
import { newId } from "../lib/ids";
import { judge } from "./checks";
import { readSummary } from "./summary";
import { ACTIONABLE_TYPES, deadlineOf } from "./deadlines";
import { receivedView, type ReceivedRow } from "./view";

/** Limits of one received file (DECISIONS-style, documented in the README). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_DTES_PER_FILE = 2000;

export type Channel = "UPLOAD" | "EMAIL" | "SII";

export interface IntakeResult {
  /** Null when the file is not an EnvioDTE/DTE at all (nothing stored). */
  problem: string | null;
  kind: InboundReport["kind"];
  fileSha256: string;
  documents: { id: string; issuer_rut: string; document_type: number; folio: number; reception_status: number; outcome: "NEW" | "ALREADY_RECEIVED" | "DUPLICATE" }[];
}

export function fileKey(companyId: string, sha: string): string {
  return `reception/${companyId}/${sha}/received.xml`;
}

/** Byte ranges of each <DTE> element (ASCII tags: the same offsets in ISO-8859-1 and UTF-8). */
export function dteRanges(bytes: Uint8Array): [number, number][] {
  const text = new TextDecoder("latin1").decode(bytes);
  const out: [number, number][] = [];
  const open = /<DTE[\s>]/g;
  let m: RegExpExecArray | null;
  while ((m = open.exec(text))) {
    const end = text.indexOf("</DTE>", m.index);
    if (end < 0) break;
    out.push([m.index, end + 6]);
    open.lastIndex = end + 6;
  }
  return out;
}

type Row = typeof receivedDocuments.$inferInsert;

export async function intakeFile(env: Env, company: Pick<CompanyRow, "id" | "taxId" | "livemode">, bytes: Uint8Array, channel: Channel, messageId: string | null): Promise<IntakeResult> {
  const fileSha = await sha256Hex(bytes);
  if (bytes.length > MAX_FILE_BYTES) return { problem: `The file is larger than ${MAX_FILE_BYTES} bytes.`, kind: "unknown", fileSha256: fileSha, documents: [] };
  // A test-mode company also trusts CAFs of the simulated SII (its suppliers issue in test mode too).
  const report = await verifyInbound(bytes, receptionCafTrust(envForMode(env, company.livemode).SII_MODE));
  if (report.kind === "unknown") return { problem: report.message ?? "Not an EnvioDTE or DTE.", kind: report.kind, fileSha256: fileSha, documents: [] };
  if (report.kind === "EnvioBOLETA") return { problem: "An EnvioBOLETA holds boletas, which are not sent to their buyers as DTEs to acknowledge.", kind: report.kind, fileSha256: fileSha, documents: [] };
  const ranges = dteRanges(bytes);
  if (report.documents.length === 0) return { problem: report.message ?? "The envelope holds no DTE.", kind: report.kind, fileSha256: fileSha, documents: [] };
  if (report.documents.length > MAX_DTES_PER_FILE) return { problem: `The envelope holds more than ${MAX_DTES_PER_FILE} DTEs.`, kind: report.kind, fileSha256: fileSha, documents: [] };
  if (ranges.length !== report.documents.length) return { problem: "The DTE elements cannot be told apart in the file.", kind: report.kind, fileSha256: fileSha, documents: [] };
  const db = createDb(env.DB);
  const key = fileKey(company.id, fileSha);
  const keyed = report.documents.map((d, i) => ({ d, range: ranges[i]!, issuerRut: d.issuerRut && isValidRut(d.issuerRut) ? normalizeRut(d.issuerRut) : (d.issuerRut ?? "?") }));
  const usable = keyed.filter((k) => k.d.documentType !== null && k.d.folio !== null);
  const folios = [...new Set(usable.map((k) => k.d.folio!))];
  const existing = folios.length
    ? await db.select({ id: receivedDocuments.id, issuerRut: receivedDocuments.issuerRut, documentType: receivedDocuments.documentType, folio: receivedDocuments.folio, xmlSha256: receivedDocuments.xmlSha256, siiReceivedAt: receivedDocuments.siiReceivedAt })
        .from(receivedDocuments).where(and(eq(receivedDocuments.companyId, company.id), inArray(receivedDocuments.folio, folios.slice(0, 90))))
    : [];
  if (folios.length > 90) {
    for (let i = 90; i < folios.length; i += 90) {
      existing.push(...(await db.select({ id: receivedDocuments.id, issuerRut: receivedDocuments.issuerRut, documentType: receivedDocuments.documentType, folio: receivedDocuments.folio, xmlSha256: receivedDocuments.xmlSha256, siiReceivedAt: receivedDocuments.siiReceivedAt })
        .from(receivedDocuments).where(and(eq(receivedDocuments.companyId, company.id), inArray(receivedDocuments.folio, folios.slice(i, i + 90))))));
    }
  }
  const result: IntakeResult = { problem: null, kind: report.kind, fileSha256: fileSha, documents: [] };
  const writes: any[] = [];
  const seen = new Set<string>();
  const keysInFile = new Set<string>();
  let stored = false;
  for (const k of usable) {
    const slice = bytes.subarray(k.range[0], k.range[1]);
    const sha = await sha256Hex(slice);
    const same = existing.filter((e) => e.issuerRut === k.issuerRut && e.documentType === k.d.documentType && e.folio === k.d.folio);
    const dedupe = `${k.issuerRut}/${k.d.documentType}/${k.d.folio}/${sha}`;
    const base = { issuer_rut: k.issuerRut, document_type: k.d.documentType!, folio: k.d.folio! };
    const identical = same.find((e) => e.xmlSha256 === sha);
    if (seen.has(dedupe)) continue;
    if (identical) {
      result.documents.push({ id: identical.id, ...base, reception_status: 0, outcome: "ALREADY_RECEIVED" });
      continue;
    }
    seen.add(dedupe);
    const placeholder = same.find((e) => e.xmlSha256 === null);
    const docKey = `${k.issuerRut}/${k.d.documentType}/${k.d.folio}`;
    const duplicate = same.some((e) => e.xmlSha256 !== null) || keysInFile.has(docKey);
    keysInFile.add(docKey);
    const verdict = judge(report, k.d, company.taxId, duplicate);
    const siiReceivedAt = placeholder?.siiReceivedAt ?? null;
    const row: Row = {
      id: placeholder?.id ?? newId("rcv"),
      companyId: company.id,
      ...{ issuerRut: k.issuerRut, documentType: k.d.documentType!, folio: k.d.folio! },
      issueDate: k.d.issueDate,
      total: k.d.total,
      recipientRut: k.d.receiverRut,
      channel,
      messageId,
      xmlKey: key,
      xmlStart: k.range[0],
      xmlEnd: k.range[1],
      xmlSha256: sha,
      receptionStatus: verdict.status,
      checks: JSON.stringify(verdict.checks),
      summary: JSON.stringify(readSummary(slice)),
      duplicate,
      siiReceivedAt,
      responseDeadline: ACTIONABLE_TYPES.has(k.d.documentType!) && siiReceivedAt ? deadlineOf(siiReceivedAt) : null,
      responseState: (ACTIONABLE_TYPES.has(k.d.documentType!) ? "PENDING" : "NOT_APPLICABLE") as ResponseState,
      updatedAt: new Date().toISOString(),
    };
    writes.push(placeholder ? db.update(receivedDocuments).set({ ...row, channel: undefined, id: undefined, responseState: undefined }).where(and(eq(receivedDocuments.companyId, company.id), eq(receivedDocuments.id, placeholder.id))) : db.insert(receivedDocuments).values(row));
    const type = verdict.status === 0 ? "received_document.received" : "received_document.verification_failed";
    const view = receivedView({ createdAt: row.updatedAt!, responses: "[]", ...row, ...(placeholder ? { channel: "SII" as const } : {}) } as ReceivedRow);
    writes.push(db.insert(eventOutbox).values({ id: newId("evt"), companyId: company.id, type, dedupeKey: `${type}:${row.id}:${sha}`, payload: JSON.stringify(view) }).onConflictDoNothing());
    result.documents.push({ id: row.id!, ...base, reception_status: verdict.status, outcome: duplicate ? "DUPLICATE" : "NEW" });
    stored = true;
  }
  if (stored) await env.FILES.put(key, bytes, { httpMetadata: { contentType: "application/xml" } });
  for (let i = 0; i < writes.length; i += 100) await db.batch(writes.slice(i, i + 100) as [any, ...any[]]);
  return result;
}
