/**
 * Credit notes never credit one of our documents for more than it totals. A credit note that moves
 * amounts and names a document of ours in a reference (what it credits is its country's rule: the
 * prepared document's `credits`) claims its total against that document before the POST stores
 * it, as a cancellation is claimed (./cancellation-claims.ts): one conditional insert decides
 * between concurrent notes, the POST gives the claim back when it stores nothing, and a claim
 * counts while its note holds it (`stillHolds`: stored and neither FAILED nor REJECTED, or not
 * stored yet within its grace). The claims live in the company's index store, not in the credited
 * document's partition: one store for all of its partitions (as external_reference), where the
 * insert adds the note's amount only if the amounts already claimed plus it stay within the
 * document's total. A claim whose note no longer holds it is dropped when it would refuse a new one.
 */
import { and, eq } from "drizzle-orm";
import type { Credits, PreparedDocument } from "../countries/port";
import { indexStore } from "../storage/db/document-store";
import { creditClaims } from "../storage/db/document-store/tables";
import { AppError } from "../lib/errors";
import { stillHolds } from "./cancellation-claims";
import { findInvoicesByFolio } from "./queries";
import type { InvoiceRow } from "./state";

type StoreEnv = Parameters<typeof indexStore>[0] & Parameters<typeof stillHolds>[0] & Parameters<typeof findInvoicesByFolio>[0];

/** A document of ours a note credits, and what it credits of it (`credits.units`, in its currency's minor units). */
export interface CreditTarget {
  row: InvoiceRow;
  credits: Credits;
}

/**
 * The documents of ours that a credit note credits (`doc.credits`), in the note's currency (a note
 * in another currency than its document cannot be compared with it and is left to the authority).
 * `known` is a document already read (the cancelled one).
 */
export async function creditTargets(env: StoreEnv, companyId: string, doc: PreparedDocument, known: InvoiceRow | null): Promise<CreditTarget[]> {
  const { credits } = doc;
  if (!credits) return [];
  const wanted = credits.documents.map((d) => ({ type: d.documentType, folio: d.folio }));
  const only = wanted.length === 1 ? wanted[0]! : null;
  const rows =
    only && known?.documentType === only.type && known.folio === only.folio ? [known] : [...(await findInvoicesByFolio(env, companyId, wanted)).values()].map((f) => f.row);
  return rows.filter((row) => row.currency === doc.currency).map((row) => ({ row, credits }));
}

/** Claims each target for note `noteId`, or refuses the note (giving back what it claimed) when one would be credited beyond its total. */
export async function claimCredits(env: StoreEnv, targets: CreditTarget[], noteId: string, now: Date): Promise<true> {
  const claimed: CreditTarget[] = [];
  try {
    for (const target of targets) {
      await claimCredit(env, target, noteId, now);
      claimed.push(target);
    }
    return true;
  } catch (e) {
    await releaseCreditClaims(env, claimed, noteId).catch(() => undefined);
    throw e;
  }
}

/** Gives back the claims note `noteId` made on `targets` (a POST that stored nothing). */
export async function releaseCreditClaims(env: StoreEnv, targets: CreditTarget[], noteId: string): Promise<void> {
  for (const { row } of targets) {
    await indexStore(env, row.companyId).delete(creditClaims).where(and(eq(creditClaims.creditedInvoiceId, row.id), eq(creditClaims.creditNoteId, noteId)));
  }
}

type ClaimRow = { credit_note_id: string; amount: string; created_at: string };

/**
 * Adds the claim only if the claims already on the document plus it stay within its total (one
 * statement, run alone by the store), and reads the claims in the same batch. A refused claim drops
 * the claims whose notes no longer hold them and tries again; when every claim still holds, the
 * note is refused naming what can still be credited.
 */
async function claimCredit(env: StoreEnv, target: CreditTarget, noteId: string, now: Date): Promise<void> {
  const { row, credits } = target;
  const client = indexStore(env, row.companyId).$client;
  const total = credits.toUnits(row.total);
  const amount = credits.units.toString();
  const insert = client.prepare(
    `INSERT INTO credit_claims (credited_invoice_id, credit_note_id, amount, created_at)
     SELECT ?, ?, CAST(? AS INTEGER), ?
     WHERE (SELECT COALESCE(SUM(amount), 0) FROM credit_claims WHERE credited_invoice_id = ?) + CAST(? AS INTEGER) <= CAST(? AS INTEGER)
     ON CONFLICT DO NOTHING RETURNING credit_note_id`,
  );
  const select = client.prepare(`SELECT credit_note_id, CAST(amount AS TEXT) AS amount, created_at FROM credit_claims WHERE credited_invoice_id = ?`);
  let held: ClaimRow[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const [inserted, current] = await client.batch([insert.bind(row.id, noteId, amount, now.toISOString(), row.id, amount, total.toString()), select.bind(row.id)]);
    // A retry of this very note (same Idempotency-Key claim: the same id) holds it already.
    if (inserted!.results.length > 0 || (current!.results as ClaimRow[]).some((c) => c.credit_note_id === noteId)) return;
    const claims = current!.results as ClaimRow[];
    const holds = await Promise.all(claims.map((c) => stillHolds(env, row.companyId, { creditNoteId: c.credit_note_id, createdAt: c.created_at }, now)));
    held = claims.filter((_, i) => holds[i]);
    const gone = claims.filter((_, i) => !holds[i]);
    if (gone.length === 0) break;
    await client.batch(gone.map((c) => client.prepare("DELETE FROM credit_claims WHERE credited_invoice_id = ? AND credit_note_id = ?").bind(row.id, c.credit_note_id)));
  }
  throw exceedsRemaining(target, total, held);
}

function exceedsRemaining(target: CreditTarget, total: bigint, held: ClaimRow[]): AppError {
  const { row, credits } = target;
  const amount = credits.units;
  const credited = held.reduce((sum, c) => sum + BigInt(c.amount), 0n);
  const remaining = total > credited ? total - credited : 0n;
  const money = (v: bigint) => credits.toAmount(v);
  const message =
    `Document ${row.id} (${row.documentType} N° ${row.folio}) totals ${money(total)}, of which earlier credit notes credit ${money(credited)}: ` +
    `at most ${money(remaining)} can still be credited to it, not ${money(amount)}.`;
  return new AppError("INVOICE_CREDIT_EXCEEDS_REMAINING", message, [{ field: "items", message: `At most ${money(remaining)} can still be credited to ${row.id}` }]);
}
