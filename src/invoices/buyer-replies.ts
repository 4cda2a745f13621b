/**
 * A buyer's own replies to documents the company issued (RespuestaDTE, EnvioRecibos), mailed to the
 * company's reception address or uploaded, read onto those documents: each entry whose RUTEmisor is
 * the company is matched by type and folio to its document and added to its `buyer_replies`, with
 * the verdict of the signature that covers it and where its copy of the document differs; the file
 * is kept in R2 for download; a new entry is an `invoice.buyer_reply` event. Idempotent: an entry's
 * id is made from the file's SHA-256 and its place in the file, so the same file again adds nothing.
 * The legal acceptance or claim stays the SII's register (./buyer-response.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import { issuingCountry } from "../countries";
import type { BuyerReply, ReplyEntry } from "../countries/port";
import type { Db } from "../storage/db/client";
import { invoices } from "../storage/db/schema";
import { sha256Hex } from "../lib/crypto";
import { invoiceOfBuyerEnvelope } from "./buyer-delivery";
import { findInvoiceById, findInvoicesByFolio, type FoundInvoice } from "./queries";
import { documentEvent, type InvoiceRow } from "./state";
import type { BuyerReplyRecord } from "./view";

/** A document keeps its newest replies up to this many (a buyer answers a document a few times at most). */
export const MAX_REPLIES_PER_DOCUMENT = 20;

export type ReplyOutcome = "RECORDED" | "ALREADY_RECORDED" | "NOT_OURS" | "UNKNOWN_DOCUMENT";

export interface ReplyIntake {
  /** The kind of reply, as its country names it. */
  root: BuyerReply["kind"];
  file_sha256: string;
  /** The reply's own signature (over its Resultado or SetRecibos). */
  signature_valid: boolean;
  entries: { reply_id: string; kind: ReplyEntry["kind"]; status: BuyerReplyRecord["status"]; envelope_id: string | null; document_type: number | null; folio: number | null; invoice_id: string | null; outcome: ReplyOutcome }[];
  /** RecepcionEnvio without per-document entries (the buyer's verdict on a whole envelope) that names no envelope the company mailed its buyer. */
  envelopes: { envelope_id: string | null; code: number | null; text: string | null }[];
}

export function replyFileKey(companyId: string, sha: string): string {
  return `replies/${companyId}/${sha}.xml`;
}

/** Where the reply's copy of the document differs from ours (a verdict on the envelope: only who answered, and the recipient it names, if any). */
function discrepancies(reply: BuyerReply, e: ReplyEntry, row: InvoiceRow): BuyerReplyRecord["discrepancies"] {
  const out: BuyerReplyRecord["discrepancies"] = [];
  const ours = issuingCountry().taxId.normalize(row.recipientRut);
  const onEnvelope = e.envelopeId !== null;
  if (e.receiverTaxId !== ours && !(onEnvelope && e.receiverTaxId === null)) out.push({ field: "recipient_tax_id", reply: e.receiverTaxId, document: ours });
  if (reply.responderTaxId !== ours) out.push({ field: "responder_tax_id", reply: reply.responderTaxId, document: ours });
  if (onEnvelope) return out;
  if (e.total === null || Number(e.total) !== Number(row.total)) out.push({ field: "total", reply: e.total, document: row.total });
  if (e.issueDate !== row.issueDate) out.push({ field: "issue_date", reply: e.issueDate, document: row.issueDate });
  return out;
}

function recordOf(reply: BuyerReply, e: ReplyEntry, id: string, row: InvoiceRow, from: { channel: "EMAIL" | "UPLOAD"; messageId: string | null; sha: string; at: string }): BuyerReplyRecord {
  return {
    id, kind: e.kind, status: e.status, envelope_id: e.envelopeId, code: e.code, code_text: e.codeText, message: e.text, rejection_code: e.rejectionCode, from_tax_id: reply.responderTaxId,
    signature: { valid: e.signature.ok, message: e.signature.message, signer_tax_id: e.signature.signerTaxId, signer_name: e.signature.signerName },
    discrepancies: discrepancies(reply, e, row),
    receipt: e.kind === "RECEIPT" ? { place: e.receipt.place, signer_tax_id: e.receipt.signerTaxId, signed_at: e.receipt.signedAt } : null,
    replied_at: e.kind === "RECEIPT" ? (e.receipt.signedAt ?? reply.timestamp) : reply.timestamp,
    received_at: from.at, channel: from.channel, message_id: from.messageId, file_sha256: from.sha,
  };
}

const ENVELOPES_LOOKED_UP = 20;

/**
 * The company's documents the entries name, by type and folio (one pass over the company's
 * partitions) or, for a verdict on a whole envelope, by the envelope mailed to the buyer
 * (buyer-delivery.ts buyerEnvelopeSetId): a lookup of each entry's document.
 */
async function documentsNamed(env: Env, companyId: string, entries: ReplyEntry[]): Promise<(e: ReplyEntry) => FoundInvoice | undefined> {
  const wanted = entries.flatMap((e) => (e.documentType !== null && e.folio !== null ? [{ type: e.documentType, folio: e.folio }] : []));
  const byFolio = await findInvoicesByFolio(env, companyId, wanted);
  const byEnvelope = new Map<string, FoundInvoice>();
  // A reply answers one envelope or a few: past ENVELOPES_LOOKED_UP distinct ones, none is looked for.
  for (const id of [...new Set(entries.map((e) => invoiceOfBuyerEnvelope(e.envelopeId)))].slice(0, ENVELOPES_LOOKED_UP)) {
    const found = id === null ? null : await findInvoiceById(env, companyId, id);
    if (found) byEnvelope.set(id!, found);
  }
  return (e) => (e.envelopeId !== null ? byEnvelope.get(invoiceOfBuyerEnvelope(e.envelopeId) ?? "") : byFolio.get(`${e.documentType}:${e.folio}`));
}

/**
 * Reads `bytes` as a buyer's reply and records its entries on the company's documents. A file that
 * is not a reply: `{ problem }`, nothing stored. Throws what an unavailable store throws.
 */
export async function recordBuyerReply(env: Env, company: { id: string; taxId: string }, bytes: Uint8Array, from: { channel: "EMAIL" | "UPLOAD"; messageId: string | null }, now = new Date()): Promise<ReplyIntake | { problem: string }> {
  const country = issuingCountry();
  const reply = await country.documents.buyerReplies.read(bytes);
  if ("problem" in reply) return reply;
  const sha = await sha256Hex(bytes);
  const at = now.toISOString();
  const ours = country.taxId.normalize(company.taxId);
  const result: ReplyIntake = { root: reply.kind, file_sha256: sha, signature_valid: reply.signature.ok, entries: [], envelopes: [] };
  const byInvoice = new Map<string, { found: FoundInvoice; records: BuyerReplyRecord[]; at: number[] }>();
  // A verdict on a whole envelope may leave out RutEmisor; the envelope it names is then looked for among ours.
  const isOurs = (e: ReplyEntry) => e.issuerTaxId === ours || (e.envelopeId !== null && e.issuerTaxId === null);
  const documentOf = await documentsNamed(env, company.id, reply.entries.filter(isOurs));
  for (const [i, e] of reply.entries.entries()) {
    const replyId = `rpl_${(await sha256Hex(`${sha}:${i}`)).slice(0, 26)}`;
    const base = { reply_id: replyId, kind: e.kind, status: e.status, envelope_id: e.envelopeId, document_type: e.documentType, folio: e.folio, invoice_id: null as string | null };
    if (!isOurs(e)) {
      result.entries.push({ ...base, outcome: "NOT_OURS" });
      continue;
    }
    const found = documentOf(e);
    if (!found) {
      result.entries.push({ ...base, outcome: "UNKNOWN_DOCUMENT" });
      continue;
    }
    const group = byInvoice.get(found.row.id) ?? { found, records: [], at: [] };
    byInvoice.set(found.row.id, group);
    group.records.push(recordOf(reply, e, replyId, found.row, { ...from, sha, at }));
    group.at.push(result.entries.length);
    result.entries.push({ ...base, invoice_id: found.row.id, outcome: "RECORDED" });
  }
  result.envelopes = reply.entries.flatMap((e, k) => (e.envelopeId !== null && !result.entries[k]!.invoice_id ? [{ envelope_id: e.envelopeId, code: e.code, text: e.text }] : []));
  if (byInvoice.size === 0) return result;
  const kept = reply.kept();
  await env.FILES.put(replyFileKey(company.id, sha), kept.bytes, { httpMetadata: { contentType: kept.contentType } });
  for (const { found, records, at: places } of byInvoice.values()) {
    const added = await appendReplies(found.db, found.row, records, at);
    for (const [k, place] of places.entries()) if (!added.has(records[k]!.id)) result.entries[place]!.outcome = "ALREADY_RECORDED";
  }
  return result;
}

/**
 * Adds the records the document does not hold yet, with their event, in one batch guarded by the
 * list as it was read (a concurrent reply to the same document: read again and retry). Returns the
 * ids added.
 */
async function appendReplies(db: Db, first: InvoiceRow, records: BuyerReplyRecord[], at: string): Promise<Set<string>> {
  let row: InvoiceRow | undefined = first;
  for (let attempt = 0; attempt < 5 && row; attempt++) {
    const held: BuyerReplyRecord[] = row.buyerReplies ? JSON.parse(row.buyerReplies) : [];
    const known = new Set(held.map((r) => r.id));
    const fresh = records.filter((r) => !known.has(r.id));
    if (fresh.length === 0) return new Set();
    const next = JSON.stringify([...held, ...fresh].slice(-MAX_REPLIES_PER_DOCUMENT));
    const mine = and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id));
    const unchanged = row.buyerReplies === null ? sql`${invoices.buyerReplies} IS NULL` : eq(invoices.buyerReplies, row.buyerReplies);
    await db.batch([
      db.update(invoices).set({ buyerReplies: next, updatedAt: at }).where(and(mine, unchanged)),
      documentEvent(db, row.companyId, row.id, "invoice.buyer_reply", `reply:${row.id}:${fresh.map((r) => r.id).join(",")}`, at, eq(invoices.buyerReplies, next)),
    ]);
    [row] = await db.select().from(invoices).where(mine).limit(1);
    if (row?.buyerReplies === next) return new Set(fresh.map((r) => r.id));
  }
  throw new Error(`The replies of ${first.id} kept changing while they were written`);
}

/** One line for an inbound message's `detail`: how many entries were read onto which documents, and what was not. */
export function describeReplyIntake(r: ReplyIntake): string {
  const recorded = r.entries.filter((e) => e.outcome === "RECORDED" || e.outcome === "ALREADY_RECORDED");
  const docs = [...new Set(recorded.map((e) => (e.envelope_id !== null ? `the document of envelope ${e.envelope_id}` : `${e.document_type} N° ${e.folio}`)))];
  const names = issuingCountry().documents.buyerReplies.names;
  const kinds = [...new Set(r.entries.map((e) => names.entries[e.kind]))].join(", ");
  const parts = [`${/^[AEIOU]/i.test(r.root) ? "An" : "A"} ${r.root}${kinds ? ` (${kinds})` : ""}${r.signature_valid ? "" : " whose signature does not verify"}: ${recorded.length} of ${r.entries.length} entries read onto ${docs.length ? docs.slice(0, 10).join(", ") + (docs.length > 10 ? ", …" : "") : "no document"}`];
  const notOurs = r.entries.filter((e) => e.outcome === "NOT_OURS").length;
  const unknown = r.entries.filter((e) => e.outcome === "UNKNOWN_DOCUMENT").length;
  if (notOurs) parts.push(`${notOurs} about documents another company issued`);
  if (unknown) parts.push(`${unknown} about documents this company has not issued`);
  if (r.envelopes.length) parts.push(`the buyer's verdict on ${r.envelopes.length} whole envelope(s) (${names.envelopeCode} ${r.envelopes.map((e) => e.code ?? "?").join(", ")}), which names no document`);
  return parts.join("; ") + ".";
}
