/**
 * Numbering inside one allocator: reserving the right to a folio and handing a document its folio.
 * Every method here runs inside the caller's transaction (see FolioAllocator), so the read-plan-write
 * of a folio is never interleaved with another call.
 */
import { availability, planAllocation, rangeOfNth } from "../rules";
import type { AllocateResult, ReserveResult } from "../allocator-api";
import type { AllocationPruner } from "./pruning";
import type { AllocatorScope } from "./scope";
import { MAX_DOCUMENT_ID_LENGTH, RESERVATION_TTL_MS, SectionState, type FolioStore } from "./storage";

export class FolioNumbering {
  constructor(
    private readonly sql: SqlStorage,
    private readonly store: FolioStore,
    private readonly pruner: AllocationPruner,
    private readonly scope: () => AllocatorScope,
  ) {}

  /**
   * Reserves one folio for `documentId` unless every folio left is held (see ReserveResult). The
   * caller has checked the document id and runs this inside a transaction.
   */
  reserve(documentId: string, now: number, issueDate: string | undefined): ReserveResult {
    this.scope();
    if (this.pruner.isBeyondHorizon(documentId)) return this.pruner.refusal(documentId);
    if (this.store.hasReservation(documentId) || this.store.findAllocation(documentId)) return { ok: true, documentId, replay: true, authorizedAt: null };
    this.sql.exec("DELETE FROM reservations WHERE reserved_at <= ?", now - RESERVATION_TTL_MS);
    const ranges = this.store.loadRanges();
    const annulled = this.store.loadPendingAnnulled();
    const held = this.store.reservationCount(now);
    const range = rangeOfNth(ranges, annulled, now, held);
    if (!range) {
      const plan = planAllocation(ranges, annulled, now);
      const reason = plan.ok ? "EXHAUSTED" : plan.reason;
      const message =
        reason === "NO_RANGES"
          ? "the document type has no active folio ranges"
          : reason === "EXPIRED"
            ? "the only folios left belong to expired ranges"
            : held > 0
              ? `every folio left is reserved by the ${held} documents accepted before this one`
              : "every active folio range is used up";
      return { ok: false, reason, message };
    }
    const authorizedAt = range.authorizedAt.slice(0, 10);
    if (issueDate !== undefined && issueDate < authorizedAt) {
      return { ok: false, reason: "BEFORE_AUTHORIZATION", message: `the CAF of the next folios was authorised on ${authorizedAt}`, authorizedAt };
    }
    this.sql.exec("INSERT INTO reservations (document_id, issue_date, reserved_at) VALUES (?, ?, ?)", documentId, issueDate ?? null, now);
    return { ok: true, documentId, replay: false, authorizedAt };
  }

  /** Folio state of one critical section, read on first use (a replay reads nothing). */
  lazyState(): SectionState {
    return new SectionState(
      () => this.store.loadRanges(),
      () => this.store.loadPendingAnnulled(),
    );
  }

  writeCursors(state: SectionState): void {
    for (const r of state.ranges) {
      if (state.dirty.has(r.id)) this.sql.exec("UPDATE ranges SET cursor = ? WHERE caf_id = ?", r.cursor, r.id);
    }
    state.dirty.clear();
  }

  /** Must run inside a transaction; the caller writes the cursors (writeCursors) before it ends. */
  allocateOne(documentId: string, now: number, state: SectionState): AllocateResult {
    if (typeof documentId !== "string" || documentId.length < 1 || documentId.length > MAX_DOCUMENT_ID_LENGTH) {
      return { ok: false, reason: "INVALID_DOCUMENT_ID", message: `documentId must be a string of 1 to ${MAX_DOCUMENT_ID_LENGTH} characters` };
    }
    this.scope();
    if (this.pruner.isBeyondHorizon(documentId)) return this.pruner.refusal(documentId);
    const reserved = this.store.hasReservation(documentId);
    if (!reserved) {
      // A document without a reservation may not take a folio that reserved documents count on.
      const held = this.store.reservationCount(now);
      if (held > 0 && availability(state.ranges, state.annulled, now).totalAvailable <= held) {
        const existing = this.store.findAllocation(documentId);
        if (existing) return { ok: true, folio: existing.folio, cafId: existing.cafId, documentId, replay: true };
        return { ok: false, reason: "RESERVED", message: `every folio left is reserved by ${held} documents already accepted` };
      }
    }
    const plan = planAllocation(state.ranges, state.annulled, now);
    if (plan.ok) {
      // One statement for the common case: the insert succeeds unless the document already has a
      // folio (then nothing is consumed). A clash on the folio itself would be a bug: the UNIQUE
      // constraint throws and the whole transaction rolls back.
      const inserted = this.sql
        .exec(
          `INSERT INTO allocations (document_id, folio, caf_id, allocated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT(document_id) DO NOTHING RETURNING folio`,
          documentId,
          plan.folio,
          plan.rangeId,
          new Date(now).toISOString(),
        )
        .toArray();
      if (inserted.length === 1) {
        const range = state.ranges.find((r) => r.id === plan.rangeId);
        if (!range) throw new Error("planned range vanished");
        range.cursor = plan.newCursor;
        state.dirty.add(range.id);
        if (reserved) this.sql.exec("DELETE FROM reservations WHERE document_id = ?", documentId);
        return { ok: true, folio: plan.folio, cafId: plan.rangeId, documentId, replay: false };
      }
    }
    const existing = this.store.findAllocation(documentId);
    if (existing) return { ok: true, folio: existing.folio, cafId: existing.cafId, documentId, replay: true };
    if (plan.ok) throw new Error(`allocation of ${documentId} neither inserted nor found`);
    const message =
      plan.reason === "NO_RANGES"
        ? "the document type has no active folio ranges"
        : plan.reason === "EXPIRED"
          ? "the only folios left belong to expired ranges"
          : "every active folio range is used up";
    return { ok: false, reason: plan.reason, message };
  }
}
