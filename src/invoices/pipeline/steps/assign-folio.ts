import { allocator } from "../../../folios/cafs";
import { MOVES, transition, type InvoiceRow } from "../../state";
import { toLocalDateTime } from "../../../lib/time";
import { type StepDeps, TerminalStepError, fail, reload, companyContext } from "./context";

// ---------------------------------------------------------------------------------------------
// Step 1: RECEIVED -> GENERATED. The folio comes from the allocator keyed by the document id, so a
// repeated or concurrent delivery gets the same folio and no folio is ever taken twice.

export type Allocation = Awaited<ReturnType<ReturnType<typeof allocator>["allocate"]>>;

/**
 * Folios for several RECEIVED documents of one company and type in one call to their allocator
 * (one critical section there; the same keyed-by-document semantics as `allocate`).
 */
export async function allocateFolios(deps: StepDeps, companyId: string, documentType: number, invoiceIds: string[]): Promise<Map<string, Allocation>> {
  const folios = allocator(deps.env, companyId, documentType);
  const results: unknown[] = [];
  // The allocator takes at most 1,000 documents a call.
  for (let i = 0; i < invoiceIds.length; i += 1000) results.push(...(await folios.allocateMany(invoiceIds.slice(i, i + 1000))));
  return new Map(invoiceIds.map((id, i) => [id, results[i]! as Allocation]));
}

/** The allocator had no folio for the document: it ends FAILED with the reason. */
export async function refuseFolio(deps: StepDeps, inv: InvoiceRow, result: Extract<Allocation, { ok: false }>): Promise<never> {
  const why =
    result.reason === "EXHAUSTED" || result.reason === "NO_RANGES"
      ? `No folio left for document type ${inv.documentType}: load a new CAF and issue the document again.`
      : result.reason === "EXPIRED"
        ? `The CAF folios of document type ${inv.documentType} expired: load a new CAF and issue the document again.`
        : result.message;
  await fail(deps, inv, why);
  throw new TerminalStepError(why);
}

export async function assignFolio(deps: StepDeps, inv: InvoiceRow, preallocated?: Allocation): Promise<InvoiceRow> {
  if (inv.status !== "RECEIVED") return inv;
  const result = preallocated ?? (await allocator(deps.env, inv.companyId, inv.documentType).allocate(inv.id));
  if (!result.ok) return refuseFolio(deps, inv, result);
  const { timeZone } = await companyContext(deps, inv.companyId);
  const stampedAt = toLocalDateTime(deps.now(), timeZone);
  const moved = await transition(
    deps.store,
    inv.id,
    MOVES.assignFolio,
    { folio: result.folio, cafId: result.cafId, stampedAt },
    `Folio ${result.folio} assigned`,
  );
  return moved ?? (await reload(deps, inv.id));
}
