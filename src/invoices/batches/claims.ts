/**
 * What a batch's valid rows hold before their documents are stored, taken in as few calls as the
 * single POST takes for one document: the `external_reference`s in one batch of the company's index
 * store (a reference used twice in the batch is refused on its later rows), the folio reservations
 * of each document type in ONE call to its allocator, then the cancellations and credits of the
 * notes one by one (rare in a batch). A row refused at one step gives back what it took before it;
 * `release` gives back everything when the batch stores nothing.
 */
import type { BatchItem } from "drizzle-orm/batch";
import { indexStore } from "../../storage/db/document-store";
import { externalReferences } from "../../storage/db/document-store/tables";
import { AppError } from "../../lib/errors";
import { chunked } from "../../lib/chunked";
import { allocator } from "../../folios/cafs";
import { claimCancellation, releaseCancellationClaim } from "../cancellation-claims";
import { claimCredits, releaseCreditClaims } from "../credit-claims";
import { documentHolds, refuseReservation } from "../issue";
import { claimReference, releaseReference } from "../references";
import { refusing, type Candidate, type Checked } from "./check";
import type { RowError } from "./rows";

type Held = Candidate & { reference: boolean; cancelling: boolean; crediting: boolean };

/** Reserves, claims and refuses: the candidates that hold everything their document needs. */
export async function claimRows(env: Env, companyId: string, checked: Checked, refused: Map<number, RowError>, now: Date): Promise<{ held: Held[]; release: () => Promise<void> }> {
  const unique = refuseRepeatedReferences(checked.candidates, refused);
  // References before folios: a row refused for its reference never holds a folio a later row needs.
  const referenced = await claimReferences(env, companyId, unique.map((c) => ({ ...c, reference: false, cancelling: false, crediting: false })), refused);
  const reserved = await reserve(env, companyId, referenced, checked, refused, now);
  const held: Held[] = [];
  for (const c of reserved) {
    const ok = await refusing(refused, c.i, async () => {
      if (c.target) c.cancelling = await claimCancellation(env, c.target, c.id, now);
      if (c.credited.length > 0) c.crediting = await claimCredits(env, c.credited, c.id, now);
      return c;
    });
    if (ok) held.push(ok);
    else await giveBack(env, companyId, [c]);
  }
  return { held, release: () => giveBack(env, companyId, held) };
}

/** The second and later rows of a batch with the same external_reference are refused, naming the first. */
function refuseRepeatedReferences(candidates: Candidate[], refused: Map<number, RowError>): Candidate[] {
  const first = new Map<string, number>();
  return candidates.filter((c) => {
    const ref = c.body.external_reference;
    if (!ref) return true;
    const seen = first.get(ref);
    if (seen === undefined) {
      first.set(ref, c.i);
      return true;
    }
    const message = `external_reference ${ref} is already used by row ${seen} of this batch.`;
    refused.set(c.i, { code: "INVOICE_DUPLICATE_EXTERNAL_REFERENCE", message, details: [{ field: `rows[${c.i}].external_reference`, message: `Already used by rows[${seen}]` }] });
    return false;
  });
}

/** Folio reservations: one allocator call per document type, rows in order; a row refused gives back its reference. */
async function reserve(env: Env, companyId: string, candidates: Held[], checked: Checked, refused: Map<number, RowError>, now: Date): Promise<Held[]> {
  const byType = new Map<number, Held[]>();
  for (const c of candidates) byType.set(c.doc.documentType, [...(byType.get(c.doc.documentType) ?? []), c]);
  const held: Held[] = [];
  await Promise.all(
    [...byType].map(async ([type, rows]) => {
      const results = await allocator(env, companyId, type).reserveMany(rows.map((c) => ({ documentId: c.id, issueDate: c.doc.issueDate })));
      for (const [k, c] of rows.entries()) {
        const r = results[k]!;
        const ok = await refusing(refused, c.i, () => (r.ok ? c : refuseReservation(checked.contexts.get(type)!, c.doc, r, now)));
        if (ok) held.push(ok);
        else if (c.reference) await releaseReference(env, companyId, c.body.external_reference!, c.id).catch(() => undefined);
      }
    }),
  );
  return held.sort((a, b) => a.i - b.i);
}

/**
 * The references in one batch of the index store; a reference another document holds goes through
 * the single POST's claim (it is taken over when that holder FAILED or was never stored).
 */
async function claimReferences(env: Env, companyId: string, rows: Held[], refused: Map<number, RowError>): Promise<Held[]> {
  const db = indexStore(env, companyId);
  const wanted = rows.filter((c) => c.body.external_reference);
  const inserted = new Set<string>();
  if (wanted.length > 0) {
    const statements = chunked(wanted, 40).map((chunk) =>
      db.insert(externalReferences).values(chunk.map((c) => ({ reference: c.body.external_reference!, invoiceId: c.id }))).onConflictDoNothing().returning({ invoiceId: externalReferences.invoiceId }),
    );
    const results = (await db.batch(statements as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as { invoiceId: string }[][];
    for (const r of results.flat()) inserted.add(r.invoiceId);
  }
  const out: Held[] = [];
  for (const c of rows) {
    const ref = c.body.external_reference;
    if (ref && !inserted.has(c.id)) {
      const claim = await claimReference(env, companyId, ref, c.id, (holderId) => documentHolds(env, companyId, holderId));
      if (!claim.ok) {
        const e = new AppError("INVOICE_DUPLICATE_EXTERNAL_REFERENCE", `external_reference ${ref} is already document ${claim.holder}.`, [{ field: "external_reference", message: `Already used by ${claim.holder}` }]);
        await refusing(refused, c.i, () => Promise.reject(e));
        continue;
      }
    }
    out.push({ ...c, reference: !!ref });
  }
  return out;
}

/** Gives back what `rows` hold: their reservations (one call per type), references, cancellations and credits. */
async function giveBack(env: Env, companyId: string, rows: Held[]): Promise<void> {
  const byType = new Map<number, string[]>();
  for (const c of rows) byType.set(c.doc.documentType, [...(byType.get(c.doc.documentType) ?? []), c.id]);
  await Promise.all([...byType].map(([type, ids]) => allocator(env, companyId, type).releaseMany(ids).catch(() => undefined)));
  for (const c of rows) {
    if (c.reference) await releaseReference(env, companyId, c.body.external_reference!, c.id).catch(() => undefined);
    if (c.cancelling) await releaseCancellationClaim(env, c.target!, c.id).catch(() => undefined);
    if (c.crediting) await releaseCreditClaims(env, c.credited, c.id).catch(() => undefined);
  }
}
