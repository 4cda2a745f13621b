/**
 * The rules a document must meet before it is ceded (Ley 19.983; cesion.md §1.2, §4), each refused
 * with its own code and a sentence a bookkeeper understands. Checked at POST, in this order: the
 * type the register takes; the SII accepted the document; no credit note cancels it; its buyer did
 * not claim it; its receipt is on record (the buyer's ERM or ACD at the SII) or its 8 days passed;
 * it is not already ceded by us; the amount is 1..total.
 */
import { AppError } from "../../lib/errors";
import type { InvoiceRow } from "../state";
import type { BuyerEvent } from "../buyer-response";

const CLAIMS = new Set(["RCD", "RFP", "RFT"]);
const RECEIPTS = new Set(["ACD", "ERM"]);
/** A credit note referring to the document, as the SII's register lists it. */
const NOTES = new Set(["NCA"]);

export type ReceiptBasis = "BUYER_RECEIPT" | "EIGHT_DAYS";

const docName = (row: InvoiceRow) => `${row.documentType === 33 ? "Factura" : "Document"} ${row.documentType} folio ${row.folio ?? "(none)"}`;

/** Why the document cannot be ceded (an AppError), or the basis of its receipt. */
export function cedibility(row: InvoiceRow, p: { types: ReadonlySet<number>; cancelledBy: string | null; ceded: { id: string; status: string } | null; now: Date }): ReceiptBasis {
  if (!p.types.has(row.documentType)) {
    throw new AppError("CESSION_TYPE_NOT_CEDIBLE", `${docName(row)} cannot be ceded: the SII's register of cessions takes only facturas (33, 34), liquidaciones-factura (43) and facturas de compra (46).`);
  }
  if (row.status !== "ACCEPTED" && row.status !== "ACCEPTED_WITH_OBJECTIONS") {
    throw new AppError("CESSION_DOCUMENT_NOT_ACCEPTED", `${docName(row)} is ${row.status}: only a document the SII accepted can be ceded${row.status === "REJECTED" || row.status === "FAILED" ? "" : "; wait for the SII's answer and try again"}.`);
  }
  const events = row.buyerEvents ? (JSON.parse(row.buyerEvents) as BuyerEvent[]) : [];
  if (p.cancelledBy || events.some((e) => NOTES.has(e.code))) {
    throw new AppError("CESSION_DOCUMENT_CANCELLED", `${docName(row)} is cancelled by a credit note${p.cancelledBy ? ` (${p.cancelledBy})` : ""}: there is nothing left to cede.`);
  }
  if (row.buyerState === "CLAIMED" || events.some((e) => CLAIMS.has(e.code))) {
    throw new AppError("CESSION_DOCUMENT_CLAIMED", `The buyer claimed ${docName(row)} at the SII: a claimed factura cannot be ceded. Settle the claim with the buyer (a credit note and a new factura) instead.`);
  }
  if (p.ceded) {
    throw new AppError("CESSION_ALREADY_CEDED", `${docName(row)} is already ceded (${p.ceded.id}, ${p.ceded.status}): a document is ceded once by its issuer.`);
  }
  if (row.buyerState === "ACCEPTED" || events.some((e) => RECEIPTS.has(e.code))) return "BUYER_RECEIPT";
  const deadline = row.buyerDeadline ? Date.parse(row.buyerDeadline) : NaN;
  if (row.buyerState === "ACCEPTED_BY_LAW" || (!Number.isNaN(deadline) && deadline <= p.now.getTime())) return "EIGHT_DAYS";
  const left = Number.isNaN(deadline) ? "" : ` (its 8 days end ${new Date(deadline).toISOString().slice(0, 16).replace("T", " ")} UTC)`;
  throw new AppError("CESSION_RECEIPT_MISSING", `${docName(row)} cannot be ceded yet: its buyer has not acknowledged receipt or accepted it at the SII, and its 8 days have not passed${left}. Ask the buyer to record the receipt, or wait.`);
}

/** The amount ceded: the document's total by default, else 1..total. */
export function cessionAmount(row: InvoiceRow, asked: string | number | undefined): string {
  const total = row.total;
  if (asked === undefined) return total;
  const text = String(asked);
  if (!/^\d{1,18}$/.test(text) || BigInt(text) < 1n || !/^\d+$/.test(total) || BigInt(text) > BigInt(total)) {
    throw new AppError("CESSION_AMOUNT_OUT_OF_RANGE", `The amount ceded must be a whole amount between 1 and the document's total, ${total}; ${text} is not.`, [{ field: "amount", message: `1 to ${total}` }]);
  }
  return String(BigInt(text));
}
