/**
 * The cancellation of one of our documents by a note (§4.9): its row lives in the
 * partition of the cancelled document (where the document's reads and events find it), keyed by the
 * cancelled document, so one insert there decides between concurrent notes. The POST claims it
 * before it stores the note (in the open partition, possibly another store) and gives it back when it
 * stores nothing; the pipeline releases it there when the note FAILS or is REJECTED
 * (src/invoices/pipeline/steps/context.ts). A claim whose note was never stored (its request died between the
 * claim and the store) or that ended FAILED or REJECTED without its release is taken over.
 */
import { and, eq } from "drizzle-orm";
import { knownStoreForId, ordinalOfId, partitionFor } from "../storage/db/document-store";
import { cancellations, invoices } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import type { InvoiceRow } from "./state";

type StoreEnv = Parameters<typeof partitionFor>[0];

/** How long a claim whose note is not stored yet is left to its POST (which stores it within seconds). */
export const UNSTORED_CLAIM_GRACE_MS = 5 * 60_000;

/** Claims the cancellation of `target` for note `noteId`, or refuses it naming the note that holds it. */
export async function claimCancellation(env: StoreEnv, target: InvoiceRow, noteId: string, now: Date): Promise<true> {
  const { db } = await partitionFor(env, target.companyId, ordinalOfId(target.id)!);
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await db.insert(cancellations).values({ cancelledInvoiceId: target.id, creditNoteId: noteId, createdAt: now.toISOString() }).onConflictDoNothing().returning();
    if (row) return true as const;
    const [current] = await db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, target.id));
    if (!current) continue; // released meanwhile: claim again
    if (current.creditNoteId === noteId) return true as const;
    if (await stillHolds(env, target.companyId, current, now)) throw alreadyCancelled(target, current.creditNoteId);
    // Take it over only if it is still that holder's (a concurrent claimer may have won).
    const [taken] = await db
      .update(cancellations)
      .set({ creditNoteId: noteId, createdAt: now.toISOString() })
      .where(and(eq(cancellations.cancelledInvoiceId, target.id), eq(cancellations.creditNoteId, current.creditNoteId)))
      .returning();
    if (taken) return true as const;
  }
  throw alreadyCancelled(target, "another note");
}

/** Gives back a claim the POST made when it stored nothing (only if `noteId` still holds it). */
export async function releaseCancellationClaim(env: StoreEnv, target: InvoiceRow, noteId: string): Promise<void> {
  const { db } = await partitionFor(env, target.companyId, ordinalOfId(target.id)!);
  await db.delete(cancellations).where(and(eq(cancellations.cancelledInvoiceId, target.id), eq(cancellations.creditNoteId, noteId)));
}

/** A note holds its claim while it is stored and not FAILED or REJECTED, or, unstored, while its POST may still store it. */
export async function stillHolds(env: StoreEnv, companyId: string, claim: Pick<typeof cancellations.$inferSelect, "creditNoteId" | "createdAt">, now: Date): Promise<boolean> {
  const p = await knownStoreForId(env, companyId, claim.creditNoteId);
  const [note] = p ? await p.db.select({ status: invoices.status }).from(invoices).where(eq(invoices.id, claim.creditNoteId)).limit(1) : [];
  if (!note) return now.getTime() - Date.parse(claim.createdAt) < UNSTORED_CLAIM_GRACE_MS;
  return note.status !== "FAILED" && note.status !== "REJECTED";
}

function alreadyCancelled(target: InvoiceRow, holder: string): AppError {
  return new AppError("INVOICE_ALREADY_CANCELLED", `Document ${target.id} (${target.documentType} N° ${target.folio}) is already cancelled by ${holder}.`, [
    { field: "billing_reference", message: "Already cancelled" },
  ]);
}
