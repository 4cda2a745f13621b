import { issuingCountry } from "../countries";
/** A received document as the API shows it (GET, list items, event `data`). */
import type { receivedDocuments } from "../storage/db/schema";
import { verificationStatus, type Check } from "./checks";
import { secondsLeft } from "../lib/time";
import type { Summary } from "./summary";
import type { ReceivedFile } from "./intake";
import type { ReplyMail } from "./reply-mail";
import type { ReceivedCession } from "./cessions-view";

export type ReceivedRow = typeof receivedDocuments.$inferSelect;

export interface ResponseEntry {
  action: "ACD" | "ERM" | "RCD" | "RFP" | "RFT" | "ACCEPTED_BY_LAW";
  reason: string | null;
  at: string;
  sii_code: number | null;
  sii_message: string | null;
  /** Names of the exchange files produced for it (download types). */
  files: string[];
  /** Where its replies were mailed (absent in entries written before replies were mailed for every channel). */
  reply_to?: ReplyRecipient | null;
  /** Its mailing to reply_to (absent in entries written before mails were tracked). */
  mail?: ReplyMail | null;
}

/** The issuer's address the replies go to, and where it was found. */
export interface ReplyRecipient {
  email: string;
  /** Where it was found: the SII's taxpayer directory, the sender of the e-mail, or given on request (POST …/reply_mail). */
  source: "TAXPAYER_DIRECTORY" | "EMAIL_SENDER" | "REQUEST";
}

/** The words of a reception code, as the country states them in its acknowledgment. */
export const receptionStatusText = (code: number | null) => (code === null ? null : issuingCountry().inbound.statusText(code));

export function receivedView(row: ReceivedRow, now = Date.now()) {
  const summary = row.summary ? (JSON.parse(row.summary) as Summary) : null;
  const checks = row.checks ? (JSON.parse(row.checks) as Check[]) : [];
  const responses = JSON.parse(row.responses) as ResponseEntry[];
  const files = ["xml", ...(row.xmlKey ? ["pdf", "recepcion_envio"] : []), ...new Set(responses.flatMap((r) => r.files))];
  return {
    id: row.id,
    id_company: row.companyId,
    issuer: { tax_id: row.issuerRut, legal_name: summary?.issuer_name ?? null, activity: summary?.issuer_activity ?? null },
    recipient: { tax_id: row.recipientRut, legal_name: summary?.recipient_name ?? null },
    document_type: String(row.documentType),
    folio: row.folio,
    issue_date: row.issueDate,
    totals: { net: summary?.net_amount ?? null, exempt: summary?.exempt_amount ?? null, vat: summary?.vat ?? null, total: row.total },
    lines: summary?.lines ?? [],
    channel: row.channel,
    received_file: receivedFileView(row),
    xml_status: row.xmlKey ? ("RECEIVED" as const) : ("NOT_YET_RECEIVED" as const),
    verification: {
      status: verificationStatus(row.receptionStatus, checks),
      reception_status: row.receptionStatus,
      reception_status_text: receptionStatusText(row.receptionStatus),
      duplicate: row.duplicate,
      checks,
    },
    sii_received_at: row.siiReceivedAt,
    response_deadline: row.responseDeadline,
    seconds_left: row.responseState === "PENDING" ? secondsLeft(row.responseDeadline, now) : null,
    response_state: row.responseState,
    responses: responses.map((r) => ({ ...r, reply_to: r.reply_to ?? null, mail: r.mail ? mailView(r.mail) : null })),
    cession: row.cession ? (JSON.parse(row.cession) as ReceivedCession) : null,
    downloads: row.xmlKey ? files : [],
    received_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
export type ReceivedView = ReturnType<typeof receivedView>;

/** The file that brought the XML as the record keeps it (reception/intake.ts); null before it was kept and while only the register knows the document. */
/** A reply's mailing as shown, with next_attempt_at null on records from before it was kept. */
const mailView = (m: ReplyMail): ReplyMail & { next_attempt_at: string | null; delivered_at: string | null } => ({ state: m.state, attempts: m.attempts, sent_at: m.sent_at, message: m.message, next_attempt_at: m.next_attempt_at ?? null, delivered_at: m.delivered_at ?? null });

export function receivedFileOfRow(row: Pick<ReceivedRow, "receivedFile">): ReceivedFile | null {
  return row.receivedFile ? (JSON.parse(row.receivedFile) as ReceivedFile) : null;
}

function receivedFileView(row: ReceivedRow) {
  if (!row.xmlKey) return null;
  const file = receivedFileOfRow(row);
  const ack = file?.acknowledgment;
  return { name: file?.name ?? null, envelope_id: file?.envelope_id ?? null, message_id: row.messageId, received_at: file?.received_at ?? row.createdAt, acknowledgment: ack ? { at: ack.at, reply_to: ack.reply_to, mail: ack.mail ? mailView(ack.mail) : null } : null, superseded: file?.superseded ?? [] };
}
