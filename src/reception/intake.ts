/**
 * The one intake of received documents, for every channel (upload, e-mail, SII register). A file (an
 * EnvioDTE or a single DTE) is parsed once, by the verification; everything stored derives from
 * that parse. The file as received is kept in R2 under a key built from the company and its SHA-256
 * (never from a file or attachment name), as evidence; each DTE becomes a row keyed by company,
 * issuer, type and folio with its checks, and its own XML object: the verified element's canonical
 * form (what is served, printed and listed). Idempotent: the same DTE again changes nothing, nor
 * does a copy of it in another form; a copy that verifies supersedes one that did not (supersede.ts);
 * a different DTE with a known key is stored and flagged as a duplicate (EstadoRecepDTE 4). A failed
 * verification never blocks intake.
 */
import { envForMode } from "../config";
import { and, eq, isNull } from "drizzle-orm";
import { issuingCountry } from "../countries";
import type { Db } from "../storage/db/client";
import { openStore, ordinalOfId, partitionedId } from "../storage/db/document-store";
import { receivedDocuments, type ResponseState } from "../storage/db/schema";
import type { CompanyRow } from "../accounts/companies/repository";
import { sha256Hex } from "../lib/crypto";
import { chunked } from "../lib/chunked";
import { acknowledgeFile, type Acknowledgment } from "./acknowledge";
import { displayText } from "./messages";
import { claimKeys, repointKey } from "./keys";
import { copyVerdict, supersedingFile, type SupersededCopy } from "./supersede";
import { registerInSimulator } from "./test-register";
import { receivedByIds, receptionEvent, writeIn, type ReceptionEvent } from "./stores";
import type { IssuerResolution, ReceivedDocumentReading, ReceivedFileReading, ReceivedVerdict } from "../countries/port";
import { queueSiiStatusChecks } from "./sii-status";
import type { ReceivedRow } from "./view";

/**
 * Limits of one received file (documented in the README). The size bounds the parsed tree, which
 * takes some 5 times the file's size in memory, beside the file's text, the kept forms and the
 * request (a Worker has 128 MB): 3 MiB holds an envelope of some 600 DTEs; the SII itself takes
 * envelopes of up to about 2 MB.
 */
export const MAX_FILE_BYTES = 3 * 1024 * 1024;
export const MAX_DTES_PER_FILE = 2000;

export type Channel = "UPLOAD" | "EMAIL" | "SII";

export interface IntakeResult {
  /** Null when the file is not an EnvioDTE/DTE at all (nothing stored). */
  problem: string | null;
  kind: string;
  /** The root element's name of a well-formed file that is none of the kinds (a buyer's RespuestaDTE, …). */
  root?: string;
  fileSha256: string;
  /** The message id the rows carry (set once the file is taken). */
  messageId?: string | null;
  documents: { id: string; issuer_rut: string; document_type: number; folio: number; reception_status: number; outcome: "NEW" | "ALREADY_RECEIVED" | "DUPLICATE" | "SUPERSEDED" }[];
  /** The file's RecepcionEnvio when one was built (acknowledge.ts). */
  acknowledgment?: Acknowledgment | null;
}

export function fileKey(companyId: string, sha: string): string {
  return `reception/${companyId}/${sha}/received.xml`;
}

/** Where a received DTE's own XML (its verified canonical form, xmlDocumentBytes) is kept: by company and its SHA-256. */
export function dteKey(companyId: string, sha: string): string {
  return `reception/${companyId}/dte/${sha}.xml`;
}

type Row = typeof receivedDocuments.$inferInsert;

/** Where a file came from. */
export interface FileSource {
  channel: Channel;
  /**
   * The id of the inbound message that brought the file, or a maker of it from the open partition's
   * ordinal (an upload records its message in the open store only when the file is taken).
   */
  message: string | null | ((ordinal: number) => string);
  /** The file's name as sent (attachment, zip entry, upload); display only, never a storage key. */
  fileName?: string | null;
  /** The e-mail's sender (the RecepcionEnvio goes there when the taxpayer directory has no address for the issuer). */
  sender?: string | null;
  /** New documents go to the partition open at `now`. */
  now?: Date;
}

export async function intakeFile(env: Env, company: Pick<CompanyRow, "id" | "taxId" | "livemode">, bytes: Uint8Array, source: FileSource): Promise<IntakeResult> {
  const { channel, message, now = new Date() } = source;
  const fileSha = await sha256Hex(bytes);
  if (bytes.length > MAX_FILE_BYTES) return { problem: `The file is larger than ${MAX_FILE_BYTES} bytes.`, kind: "unknown", fileSha256: fileSha, documents: [] };
  // A test-mode company also trusts CAFs of the simulated SII (its suppliers issue in test mode too).
  const reading = await issuingCountry().inbound.read(bytes, { simulated: envForMode(env, company.livemode).SII_MODE === "simulator" });
  if (reading.problem !== null) return { problem: reading.problem, kind: reading.kind, ...(reading.root ? { root: reading.root } : {}), fileSha256: fileSha, documents: [] };
  if (reading.documents.length > MAX_DTES_PER_FILE) return { problem: `The envelope holds more than ${MAX_DTES_PER_FILE} DTEs.`, kind: reading.kind, fileSha256: fileSha, documents: [] };
  const key = fileKey(company.id, fileSha);
  const items = await distinctDtes(reading.documents.filter((d) => d.documentType !== null && d.folio !== null).map((d) => ({ d, issuerRut: d.issuerRut })));
  const store = await openStore(env, company.id, now);
  const messageId = typeof message === "function" ? message(store.ordinal) : message;
  const claims = await claimKeys(env, company.id, items.map((k) => ({ issuerRut: k.issuerRut, documentType: k.d.documentType!, folio: k.d.folio!, sha: k.sha })), items.map(() => partitionedId("rcv", store.ordinal)));
  const holders = await receivedByIds(env, company.id, [...claims.filter((c) => c.kind !== "NEW").map((c) => c.documentId), ...claims.flatMap((c) => c.earlier)]);
  const result: IntakeResult = { problem: null, kind: reading.kind, fileSha256: fileSha, documents: [], messageId };
  const writes: Write[] = [];
  const receivedFile = receivedFileOf(reading, source.fileName ?? null, now);
  for (const [i, k] of items.entries()) {
    const claim = claims[i]!;
    const held = holders.get(claim.documentId);
    const base = { id: claim.documentId, issuer_rut: k.issuerRut, document_type: k.d.documentType!, folio: k.d.folio! };
    if (held?.xmlSha256 === k.sha) {
      result.documents.push({ ...base, reception_status: 0, outcome: "ALREADY_RECEIVED" });
      continue;
    }
    // Another XML of its key came first: a copy of that document (which it may supersede), or another document.
    const alone = claim.duplicate ? k.d.judge(company.taxId, false) : null;
    const copy = alone ? copyVerdict(claim.earlier.flatMap((id) => holders.get(id) ?? []), k.d, alone.status === 0) : null;
    if (copy && copy.kind !== "DUPLICATE") {
      await repointKey(env, company.id, { issuerRut: k.issuerRut, documentType: k.d.documentType!, folio: k.d.folio!, sha: k.sha }, copy.prior.id);
      const prior = copy.prior;
      if (copy.kind === "COPY") {
        result.documents.push({ ...base, id: prior.id, reception_status: prior.receptionStatus ?? 0, outcome: "ALREADY_RECEIVED" });
        continue;
      }
      const row = rowOf(company.id, prior.id, k, alone!, false, prior, { channel, messageId, xmlKey: key, receivedFile: supersedingFile(receivedFile, prior, now) });
      writes.push({ row, placeholder: prior, verdict: alone!.status, supersedes: prior.xmlSha256! });
      result.documents.push({ ...base, id: prior.id, reception_status: alone!.status, outcome: "SUPERSEDED" });
      continue;
    }
    const verdict = k.d.judge(company.taxId, claim.duplicate);
    const row = rowOf(company.id, claim.documentId, k, verdict, claim.duplicate, held ?? null, { channel, messageId, xmlKey: key, receivedFile });
    writes.push({ row, placeholder: held ?? null, verdict: verdict.status });
    result.documents.push({ ...base, reception_status: verdict.status, outcome: claim.duplicate ? "DUPLICATE" : "NEW" });
  }
  // Test mode: the simulated SII's register learns of what verified, so accepting and claiming work offline.
  if (channel !== "SII" && envForMode(env, company.livemode).SII_MODE === "simulator") await registerInSimulator(env, writes.map((w) => w.row), now, { name: source.fileName ?? null, sha256: fileSha, size: bytes.length });
  const written = new Set(writes.map((w) => w.row.xmlSha256));
  if (writes.length) await storeFiles(env, company.id, key, bytes, items.filter((k) => written.has(k.sha)));
  const lost = await storeWrites(env, company.id, writes);
  for (const d of result.documents) if (lost.has(d.id)) d.outcome = "ALREADY_RECEIVED";
  // The supplier's envelope is answered (not a file the SII's register handed out).
  const stored = writes.filter((w) => !lost.has(w.row.id!)).map(readBack);
  if (channel !== "SII") result.acknowledgment = await acknowledgeFile(env, company, key, stored, source.sender ?? null);
  // The SII's own status of each document stored, asked through the queue (never waited for here).
  await queueSiiStatusChecks(env, company.id, stored);
  return result;
}

type Keyed = { d: ReceivedDocumentReading; issuerRut: string };
type Item = Keyed & { xml: ReceivedDocumentReading["file"]; sha: string };
/** `placeholder`: the row written over (a register-only one, or the copy `supersedes` names by its XML's SHA-256). */
type Write = { row: Row; placeholder: ReceivedRow | null; verdict: number; supersedes?: string };

/** Each DTE with its stored XML and that XML's SHA-256; a DTE repeated in the same file is taken once. */
async function distinctDtes(usable: Keyed[]): Promise<Item[]> {
  const seen = new Set<string>();
  const out: Item[] = [];
  for (const k of usable) {
    const xml = k.d.file;
    const sha = await sha256Hex(xml.bytes);
    const dedupe = `${k.issuerRut}/${k.d.documentType}/${k.d.folio}/${sha}`;
    if (seen.has(dedupe)) continue;
    seen.add(dedupe);
    out.push({ ...k, xml, sha });
  }
  return out;
}

/** The file as received (evidence, and what its RecepcionEnvio answers), then each new DTE's own XML, a few at a time. */
async function storeFiles(env: Env, companyId: string, key: string, bytes: Uint8Array, items: Item[]): Promise<void> {
  await env.FILES.put(key, bytes, { httpMetadata: { contentType: "application/xml" } });
  for (const chunk of chunked(items, 16)) {
    await Promise.all(chunk.map((k) => env.FILES.put(dteKey(companyId, k.sha), k.xml.bytes, { httpMetadata: { contentType: `application/xml; charset=${k.xml.charset}` } })));
  }
}

/**
 * What the file that brought a document says about itself, kept on the document for the
 * RecepcionEnvio that answers it (sii-formats.md §5): its name, the SetDTE ID and the DigestValue of
 * the envelope's signature when it verified, and the Caratula's RUTs. Names are cleaned of control
 * characters and bounded, like the message log's.
 */
export interface ReceivedFile {
  name: string | null;
  /** When the file was taken in (the RecepcionEnvio's FchRecep): later than the document's own time when the SII's register listed it first. Absent on records from before it was kept. */
  received_at?: string;
  envelope_id: string | null;
  digest: string | null;
  caratula_issuer: string | null;
  caratula_recipient: string | null;
  /** The issuer's SII resolution as the Caratula states it (printed on the document when the Caratula is the issuer's). */
  resolution?: IssuerResolution | null;
  /** The file's RecepcionEnvio, once built and mailed (acknowledge.ts). */
  acknowledgment?: Acknowledgment;
  /** Earlier copies of the document that did not verify, which this one took the place of (supersede.ts). */
  superseded?: SupersededCopy[];
}

function receivedFileOf(reading: ReceivedFileReading, name: string | null, at: Date): string {
  const e = reading.envelope;
  const file: ReceivedFile = {
    name: displayText(name, 255),
    received_at: at.toISOString(),
    envelope_id: displayText(e.id, 80),
    digest: e.digest,
    caratula_issuer: displayText(e.issuerRut, 12),
    caratula_recipient: displayText(e.recipientRut, 12),
    resolution: e.resolution,
  };
  return JSON.stringify(file);
}

function rowOf(companyId: string, id: string, k: Item, verdict: ReceivedVerdict, duplicate: boolean, placeholder: ReceivedRow | null, from: { channel: Channel; messageId: string | null; xmlKey: string; receivedFile: string }): Row {
  const siiReceivedAt = placeholder?.siiReceivedAt ?? null;
  const window = issuingCountry().responseWindow;
  const actionable = window.types.has(k.d.documentType!);
  return {
    id,
    companyId,
    issuerRut: k.issuerRut,
    documentType: k.d.documentType!,
    folio: k.d.folio!,
    issueDate: k.d.issueDate,
    total: k.d.total,
    recipientRut: k.d.receiverRut,
    ...from,
    xmlSha256: k.sha,
    receptionStatus: verdict.status,
    checks: JSON.stringify(verdict.checks),
    summary: JSON.stringify(k.d.content),
    duplicate,
    siiReceivedAt,
    responseDeadline: actionable && siiReceivedAt ? window.deadlineOf(siiReceivedAt) : null,
    responseState: (actionable ? "PENDING" : "NOT_APPLICABLE") as ResponseState,
    updatedAt: new Date().toISOString(),
  };
}

/**
 * Writes the rows into the stores their ids name (a new one: the open partition; a placeholder: its
 * own), each with its event in the same batch, one batch per store. A row another intake of the same
 * XML wrote first changes nothing (nor does its event: same dedupe key); its id is returned (that
 * intake reports it as new).
 */
async function storeWrites(env: Env, companyId: string, writes: Write[]): Promise<Set<string>> {
  const lost = new Set<string>();
  const byStore = new Map<number, Write[]>();
  for (const w of writes) {
    const ordinal = ordinalOfId(w.row.id!)!;
    byStore.set(ordinal, [...(byStore.get(ordinal) ?? []), w]);
  }
  for (const [ordinal, group] of byStore) {
    for (const chunk of chunked(group, 50)) {
      const results = await writeIn(env, companyId, ordinal, async (db) => {
        const statements = chunk.flatMap((w) => [writeOf(db, w), receptionEvent(db, eventOf(w))]);
        return (await db.batch(statements as [(typeof statements)[number], ...typeof statements])) as unknown[][];
      });
      chunk.forEach((w, i) => results[i * 2]!.length === 0 && lost.add(w.row.id!));
    }
  }
  return lost;
}

function eventOf(w: Write): ReceptionEvent {
  const type = w.verdict === 0 ? "received_document.received" : "received_document.verification_failed";
  return { row: readBack(w), type, key: `${type}:${w.row.id}:${w.row.xmlSha256}` };
}

/** The row as stored: a placeholder keeps its channel (SII), reception time and response state (accepted by law while its XML was awaited); a superseded copy's row too. */
function readBack(w: Write): ReceivedRow {
  const p = w.placeholder;
  return { createdAt: w.row.updatedAt!, responses: "[]", ...w.row, ...(p ? { channel: p.channel, createdAt: p.createdAt, responseState: p.responseState, responses: p.responses } : {}) } as ReceivedRow;
}

/** A new row (nothing if it exists), or the placeholder filled in (only while it still has no XML, or the superseded copy's). */
function writeOf(db: Db, w: Write) {
  const { row } = w;
  if (!w.placeholder) return db.insert(receivedDocuments).values(row).onConflictDoNothing().returning({ id: receivedDocuments.id });
  // The placeholder keeps its id, channel (SII) and response state.
  const { id, channel, responseState, ...fill } = row;
  void channel, void responseState;
  return db
    .update(receivedDocuments)
    .set(fill)
    .where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, id!), w.supersedes ? eq(receivedDocuments.xmlSha256, w.supersedes) : isNull(receivedDocuments.xmlSha256)))
    .returning({ id: receivedDocuments.id });
}
