/**
 * Delivery status notifications (RFC 3464, "bounces"): the report a mail server sends back to the
 * sender of a message it could not deliver, a multipart/report whose message/delivery-status part
 * has one block of fields per recipient and whose last part holds the original message or its
 * headers. Read from a message postal-mime parsed; the message is hostile, so only the fields below
 * are read, each capped, and nothing is trusted beyond naming a message we sent.
 */
import type { Email } from "postal-mime";

export interface FailedDelivery {
  /** Message-IDs the report names for the message that failed (its original headers, its In-Reply-To and References), without angle brackets. */
  messageIds: string[];
  /** The recipient that failed (Final-Recipient, else Original-Recipient), without its address type. */
  recipient: string | null;
  /** The original message's headers the report quotes (names lower-cased, the first of each), empty when it quotes none. */
  original: Map<string, string>;
  /** Its status code, e.g. 5.1.1. */
  status: string | null;
  /** What the receiving server said (Diagnostic-Code), without its type. */
  diagnostic: string | null;
}

const STATUS_PART = /^message\/(global-)?delivery-status$/i;
const ORIGINAL_PART = /^(message\/(global-)?rfc822|text\/rfc822-headers|message\/global-headers)$/i;
/** How much of a part is read: the fields sit at its start. */
const READ_CHARS = 64 * 1024;

/** The failed delivery a message reports; null when it is no delivery status notification, or reports no recipient as failed (a delay, a success). */
export function failedDelivery(parsed: Pick<Email, "attachments" | "inReplyTo" | "references">): FailedDelivery | null {
  const report = parsed.attachments.find((a) => STATUS_PART.test(a.mimeType));
  if (!report) return null;
  const failed = fieldBlocks(textOf(report.content)).find((b) => /^failed$/i.test(b.get("action") ?? ""));
  if (!failed) return null;
  const ids = new Set<string>();
  const original = parsed.attachments.find((a) => ORIGINAL_PART.test(a.mimeType));
  const headers = (original && fieldBlocks(textOf(original.content))[0]) || new Map<string, string>();
  for (const value of [headers.get("message-id"), parsed.inReplyTo, parsed.references]) {
    for (const m of (value ?? "").matchAll(/<?([^<>\s]{1,250}@[^<>\s]{1,250})>?/g)) ids.add(m[1]!);
  }
  const typed = (v: string | undefined) => (v === undefined ? null : (v.includes(";") ? v.slice(v.indexOf(";") + 1) : v).trim().slice(0, 320) || null);
  return {
    messageIds: [...ids].slice(0, 20),
    original: headers,
    recipient: typed(failed.get("final-recipient") ?? failed.get("original-recipient")),
    status: failed.get("status")?.trim().slice(0, 20) || null,
    diagnostic: typed(failed.get("diagnostic-code"))?.slice(0, 300) ?? null,
  };
}

/** The blocks of `Name: value` fields separated by blank lines (names lower-cased, folded lines joined; the first of a name kept). */
function fieldBlocks(text: string): Map<string, string>[] {
  const blocks: Map<string, string>[] = [];
  let block = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.slice(0, READ_CHARS).split(/\r?\n/)) {
    if (line.trim() === "") {
      if (block.size > 0) blocks.push(block);
      block = new Map();
      last = null;
    } else if (/^[ \t]/.test(line) && last !== null) {
      block.set(last, `${block.get(last)} ${line.trim()}`.slice(0, 1000));
    } else {
      const colon = line.indexOf(":");
      last = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : null;
      if (last !== null && !block.has(last)) block.set(last, line.slice(colon + 1).trim().slice(0, 1000));
      else last = null;
    }
  }
  if (block.size > 0) blocks.push(block);
  return blocks;
}

function textOf(content: ArrayBuffer | Uint8Array | string): string {
  if (typeof content === "string") return content.slice(0, READ_CHARS);
  const bytes = content instanceof Uint8Array ? content : new Uint8Array(content);
  return new TextDecoder("utf-8").decode(bytes.subarray(0, READ_CHARS));
}
