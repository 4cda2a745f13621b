/**
 * `external_reference` unique per company across all of its partitions: the company's
 * index store records which document holds each reference. A claim inserts the pair; a reference held
 * by another document is taken over only when that holder no longer holds it (it FAILED, which frees
 * its reference, or it was never stored because its request died), which the caller tells by reading
 * the holder in its own store. So a crash between a document's failure and the release of its
 * reference, or between a claim and the document's insert, never blocks the reference for good.
 */
import { and, eq } from "drizzle-orm";
import { indexStore } from "../storage/db/document-store";
import { externalReferences } from "../storage/db/document-store/tables";

type StoreEnv = Parameters<typeof indexStore>[0];

export type ClaimResult = { ok: true } | { ok: false; holder: string };

/** Claims `reference` for `invoiceId`; `holds(holderId)` says whether another holder still holds it. */
export async function claimReference(env: StoreEnv, companyId: string, reference: string, invoiceId: string, holds: (holderId: string) => Promise<boolean>): Promise<ClaimResult> {
  const db = indexStore(env, companyId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await db.insert(externalReferences).values({ reference, invoiceId }).onConflictDoNothing().returning({ invoiceId: externalReferences.invoiceId });
    if (row) return { ok: true };
    const [current] = await db.select().from(externalReferences).where(eq(externalReferences.reference, reference));
    if (!current) continue; // released meanwhile: claim again
    if (current.invoiceId === invoiceId) return { ok: true };
    if (await holds(current.invoiceId)) return { ok: false, holder: current.invoiceId };
    // The holder let it go: take it over only if it is still that holder's (a concurrent claimer may have won).
    const [taken] = await db
      .update(externalReferences)
      .set({ invoiceId, createdAt: new Date().toISOString() })
      .where(and(eq(externalReferences.reference, reference), eq(externalReferences.invoiceId, current.invoiceId)))
      .returning({ invoiceId: externalReferences.invoiceId });
    if (taken) return { ok: true };
  }
  const [winner] = await db.select().from(externalReferences).where(eq(externalReferences.reference, reference));
  return { ok: false, holder: winner?.invoiceId ?? "" };
}

/** Frees `reference` if `invoiceId` holds it (a FAILED document; a POST that stored nothing). */
export async function releaseReference(env: StoreEnv, companyId: string, reference: string, invoiceId: string): Promise<void> {
  await indexStore(env, companyId).delete(externalReferences).where(and(eq(externalReferences.reference, reference), eq(externalReferences.invoiceId, invoiceId)));
}
