import { availability, isExpired, planAllocation } from "../rules";
import type { FolioStatus } from "../allocator-api";
import type { AllocationPruner } from "./pruning";
import type { AllocatorScope } from "./scope";
import type { FolioStore } from "./storage";

/** The allocator's state as the API reports it: ranges with what is left of each, the next folio, the alert threshold and the counts. */
export function folioStatus(sql: SqlStorage, store: FolioStore, pruner: AllocationPruner, scope: AllocatorScope, now: number): FolioStatus {
  const { companyId, documentType } = scope;
  const ranges = store.loadRanges();
  const annulled = store.loadPendingAnnulled();
  const avail = availability(ranges, annulled, now);
  const t = store.threshold(avail.loadedActive);
  const annulledPerRange = new Map(
    sql
      .exec<{ caf_id: string; n: number }>("SELECT caf_id, COUNT(*) AS n FROM annulled GROUP BY caf_id")
      .toArray()
      .map((r) => [r.caf_id, r.n] as const),
  );
  const next = planAllocation(ranges, annulled, now);
  const allocated = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM allocations").one().n + pruner.prunedCount();
  return {
    company_id: companyId,
    document_type: documentType,
    ranges: avail.ranges.map((ra) => ({
      caf_id: ra.range.id,
      from: ra.range.from,
      to: ra.range.to,
      active: ra.range.active,
      authorized_at: ra.range.authorizedAt,
      expires_at: ra.range.expiresAt,
      expired: isExpired(ra.range, now),
      available: ra.remaining,
      next_folio: ra.remaining > 0 ? ra.range.cursor : null,
      annulled: annulledPerRange.get(ra.range.id) ?? 0,
    })),
    total_available: avail.totalAvailable,
    expired_unused: avail.expiredUnused,
    next_folio_to_use: next.ok ? next.folio : null,
    threshold: t.value,
    threshold_is_default: t.isDefault,
    allocated,
    reserved: store.reservationCount(now),
  };
}
