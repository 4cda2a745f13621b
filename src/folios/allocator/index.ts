import { DurableObject } from "cloudflare:workers";
import { availability, cafExpiresAt, checkNewRange, nextExpiryCheck, planAnnul, planSetNextFolio, type RangeInput } from "../rules";
import type {
  AddRangeInput,
  AddRangeResult,
  AllocateOptions,
  AllocateResult,
  AllocationRecord,
  AnnulResult,
  DeactivateRangeResult,
  ReserveOptions,
  ReserveResult,
  FolioStatus,
  SetNextFolioResult,
  SetThresholdResult,
} from "../allocator-api";
import { notifyEvents } from "../../webhooks/messages";
import { FolioStore, MAX_BATCH, MAX_DOCUMENT_ID_LENGTH, OUTBOX_RETRY_MS } from "./storage";
import { describeError, log } from "../../lib/log";
import { AllocationPruner, type PruneResult } from "./pruning";
import { AlertOutbox } from "./alerts";
import { FolioNumbering } from "./numbering";
import { ScopeRecord } from "./scope";
import { folioStatus } from "./status";

/**
 * One instance per (company, document type), addressed by `idFromName("<companyId>:<documentType>")`
 * (use `folioAllocatorFor`). It is the only writer of folio state, kept in its own SQLite storage.
 *
 * Exactly-once allocation: every method's read-plan-write runs synchronously (ctx.storage.sql is
 * synchronous, and each mutation is one `transactionSync`), so no other call can interleave inside
 * it, and the allocation row (document_id primary key, folio unique) commits atomically with the
 * range cursor. The only awaits (D1 outbox flush, alarm scheduling) come after the commit and never
 * touch folio state, so a failure there cannot lose, duplicate or re-assign a folio. Output gates
 * hold each RPC's reply until its writes are durable, so a caller never sees a folio that a crash
 * could take back.
 *
 * Allocations are not kept forever: the alarm deletes those of documents created more than a week
 * ago and the allocator refuses (TOO_OLD) any request for a document created before that horizon,
 * so a deleted allocation can never be asked for again (./pruning.ts).
 *
 * ENU alerts: the condition is detected inside the same transaction (row in the local `alerts` table,
 * deduplicated by key), then copied to D1 `event_outbox` with INSERT OR IGNORE on
 * (company_id, dedupe_key): inline right after the operation that raised it, and by the alarm as
 * a retry when D1 failed or the object was evicted in between. The alarm also wakes the object
 * when an expiry warning window opens or a range expires.
 *
 * This class holds the transactions and the alarm; the numbering itself is ./numbering.ts, the ENU
 * alerts ./alerts.ts, the object's scope ./scope.ts and the reported state ./status.ts.
 */
export class FolioAllocator extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly store: FolioStore;
  private readonly pruner: AllocationPruner;
  private readonly scopeRecord: ScopeRecord;
  private readonly alerts: AlertOutbox;
  private readonly numbering: FolioNumbering;
  /** Whether this instance has made sure the alarm will prune (once per instance, on its first new allocation). */
  private pruneArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.store = new FolioStore(this.sql);
    this.pruner = new AllocationPruner(this.sql);
    this.scopeRecord = new ScopeRecord(this.store, ctx.id.name);
    const scope = () => this.scopeRecord.get();
    this.alerts = new AlertOutbox(this.sql, this.store, env.DB, scope);
    this.numbering = new FolioNumbering(this.sql, this.store, this.pruner, scope);
    this.scopeRecord.remember();
  }

  private scope(): { companyId: string; documentType: string } {
    return this.scopeRecord.get();
  }

  /** After an operation that raised alerts: arm the alarm as a safety net, then try D1 at once. */
  private async deliverAlerts(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + OUTBOX_RETRY_MS);
    try {
      if ((await this.alerts.flush()) > 0) await notifyEvents(this.env, [this.scope().companyId]).catch(() => undefined); // the cron re-drives
    } catch (err) {
      log("warn", "folio allocator: ENU outbox write failed, the alarm will retry", { error: describeError(err) });
    }
  }

  /** Keeps the alarm at the next instant something must happen (retry or expiry), if any. */
  private async scheduleAlarm(now: number = Date.now(), pruneFull = false): Promise<void> {
    const avail = availability(this.store.loadRanges(), this.store.loadPendingAnnulled(), now);
    const candidates = [nextExpiryCheck(avail, now), this.pruner.nextPruneAt(now, pruneFull)];
    if (this.alerts.hasUnsent()) candidates.push(now + OUTBOX_RETRY_MS);
    const due = candidates.filter((t): t is number => t !== null);
    const when = due.length === 0 ? null : Math.min(...due);
    const current = await this.ctx.storage.getAlarm();
    if (when === null) {
      if (current !== null) await this.ctx.storage.deleteAlarm();
      return;
    }
    if (current === null || current > when || current < Date.now()) await this.ctx.storage.setAlarm(when);
  }

  // -------------------------------------------------------------------------------------------
  // RPC

  /**
   * The folio of a document: the same documentId always gets the same folio; a folio is never
   * handed to two documents; folios are taken in order (the lowest available of the usable ranges).
   */
  async allocate(documentId: string, options: AllocateOptions = {}): Promise<AllocateResult> {
    const now = options.now ?? Date.now();
    let raised = 0;
    const result = this.ctx.storage.transactionSync(() => {
      const state = this.numbering.lazyState();
      const r = this.numbering.allocateOne(documentId, now, state);
      if (state.loaded) {
        this.numbering.writeCursors(state);
        raised = this.alerts.raise(now, state.ranges, state.annulled);
      }
      return r;
    });
    if (raised > 0) await this.deliverAlerts();
    if (result.ok && !result.replay) await this.armPruning();
    return result;
  }

  /**
   * The right to one folio for a document being accepted (see ReserveResult): at most as many live
   * reservations as folios left, so with N folios left exactly N documents are accepted and the
   * rest are refused at once. Idempotent per document; `allocate` turns it into the folio.
   */
  async reserve(documentId: string, options: ReserveOptions = {}): Promise<ReserveResult> {
    const now = options.now ?? Date.now();
    if (typeof documentId !== "string" || documentId.length < 1 || documentId.length > MAX_DOCUMENT_ID_LENGTH) {
      return { ok: false, reason: "INVALID_DOCUMENT_ID", message: `documentId must be a string of 1 to ${MAX_DOCUMENT_ID_LENGTH} characters` };
    }
    return this.ctx.storage.transactionSync((): ReserveResult => this.numbering.reserve(documentId, now, options.issueDate));
  }

  /**
   * Reservations of several documents in one critical section (a batch's valid rows), in input
   * order: each result is what reserve() would have answered for that document at that point.
   */
  async reserveMany(items: { documentId: string; issueDate?: string }[], options: AllocateOptions = {}): Promise<ReserveResult[]> {
    const now = options.now ?? Date.now();
    if (!Array.isArray(items) || items.length > MAX_BATCH) throw new RangeError(`reserveMany takes an array of at most ${MAX_BATCH} documents`);
    return this.ctx.storage.transactionSync(() =>
      items.map(({ documentId, issueDate }): ReserveResult => {
        if (typeof documentId !== "string" || documentId.length < 1 || documentId.length > MAX_DOCUMENT_ID_LENGTH) {
          return { ok: false, reason: "INVALID_DOCUMENT_ID", message: `documentId must be a string of 1 to ${MAX_DOCUMENT_ID_LENGTH} characters` };
        }
        return this.numbering.reserve(documentId, now, issueDate);
      }),
    );
  }

  /** Gives back several reservations (rows of a batch refused after their reservation). */
  async releaseMany(documentIds: string[]): Promise<number> {
    if (!Array.isArray(documentIds)) return 0;
    let released = 0;
    for (const id of documentIds) if (typeof id === "string") released += this.sql.exec("DELETE FROM reservations WHERE document_id = ? RETURNING 1", id).toArray().length;
    return released;
  }

  /** Gives back a reservation that will never be allocated (the document was not stored, or FAILED first). */
  async release(documentId: string): Promise<boolean> {
    if (typeof documentId !== "string") return false;
    return this.sql.exec("DELETE FROM reservations WHERE document_id = ? RETURNING 1", documentId).toArray().length > 0;
  }

  /**
   * Several documents in one critical section (e.g. a queue batch). Results are in input order;
   * each one is exactly what allocate() would have answered for that document at that point.
   */
  async allocateMany(documentIds: string[], options: AllocateOptions = {}): Promise<AllocateResult[]> {
    const now = options.now ?? Date.now();
    if (!Array.isArray(documentIds) || documentIds.length > MAX_BATCH) {
      throw new RangeError(`allocateMany takes an array of at most ${MAX_BATCH} document ids`);
    }
    let raised = 0;
    const results = this.ctx.storage.transactionSync(() => {
      const state = this.numbering.lazyState();
      const out = documentIds.map((id) => this.numbering.allocateOne(id, now, state));
      if (state.loaded) {
        this.numbering.writeCursors(state);
        raised = this.alerts.raise(now, state.ranges, state.annulled);
      }
      return out;
    });
    if (raised > 0) await this.deliverAlerts();
    if (results.some((r) => r.ok && !r.replay)) await this.armPruning();
    return results;
  }

  /** Makes sure an alarm will prune this object's allocations (the alarm then keeps itself going). */
  private async armPruning(): Promise<void> {
    if (this.pruneArmed) return;
    this.pruneArmed = true;
    await this.scheduleAlarm(); // brings an alarm set for a far expiry forward to the next prune
  }

  /**
   * Deletes at most `limit` allocations of documents created before the horizon (now minus the
   * retention), moving the horizon first; see ./pruning.ts. Called by the alarm; tests pass `now`.
   */
  async pruneAllocations(options: AllocateOptions & { limit?: number } = {}): Promise<PruneResult> {
    const now = options.now ?? Date.now();
    return this.ctx.storage.transactionSync(() => this.pruner.prune(now, options.limit));
  }

  /** The folio already given to a document, if any (never allocates). */
  async getAllocation(documentId: string): Promise<AllocationRecord | null> {
    if (typeof documentId !== "string") return null;
    return this.store.findAllocation(documentId);
  }

  /**
   * Loads a CAF range. Rejects invalid bounds and overlap with any loaded range (active or not).
   * Repeating the same cafId with the same bounds is accepted and changes nothing (created: false).
   */
  async addRange(rangeInput: AddRangeInput, options: AllocateOptions = {}): Promise<AddRangeResult> {
    const now = options.now ?? Date.now();
    let raised = 0;
    if (typeof rangeInput !== "object" || rangeInput === null) {
      return { ok: false, code: "FOLIO_RANGE_INVALID", message: "a range {cafId, from, to, authorizedAt, expiresAt} is required" };
    }
    const result = this.ctx.storage.transactionSync((): AddRangeResult => {
      const { documentType } = this.scope();
      const input: RangeInput = {
        ...rangeInput,
        expiresAt:
          rangeInput.expiresAt === undefined
            ? (cafExpiresAt(documentType, String(rangeInput.authorizedAt)) ?? null)
            : rangeInput.expiresAt,
      };
      const ranges = this.store.loadRanges();
      const err = checkNewRange(ranges, input);
      if (err) {
        const same = ranges.find((r) => r.id === input.cafId);
        if (err.code === "FOLIO_RANGE_DUPLICATE" && same && same.from === input.from && same.to === input.to) {
          return { ok: true, cafId: input.cafId, created: false };
        }
        return { ok: false, ...err };
      }
      this.sql.exec(
        `INSERT INTO ranges (caf_id, from_folio, to_folio, active, authorized_at, expires_at, cursor, created_at)
         VALUES (?, ?, ?, 1, ?, ?, ?, ?)`,
        input.cafId,
        input.from,
        input.to,
        input.authorizedAt,
        input.expiresAt,
        input.from,
        new Date().toISOString(),
      );
      // Annulled folios can only exist inside loaded ranges, so the new cursor needs no skipping.
      raised = this.alerts.raise(now);
      return { ok: true, cafId: input.cafId, created: true };
    });
    if (result.ok && result.created) await this.scheduleAlarm();
    if (raised > 0) await this.deliverAlerts();
    return result;
  }

  /** Takes a range out of use. Its unused folios are never handed out again by this range. */
  async deactivateRange(cafId: string, options: AllocateOptions = {}): Promise<DeactivateRangeResult> {
    const now = options.now ?? Date.now();
    let raised = 0;
    const result = this.ctx.storage.transactionSync((): DeactivateRangeResult => {
      this.scope();
      const row = this.sql.exec<{ active: number }>("SELECT active FROM ranges WHERE caf_id = ?", String(cafId)).toArray()[0];
      if (!row) return { ok: false, code: "FOLIO_RANGE_NOT_FOUND", message: `no loaded range with CAF id ${String(cafId)}` };
      if (row.active === 0) return { ok: true, cafId, changed: false };
      this.sql.exec("UPDATE ranges SET active = 0, deactivated_at = ? WHERE caf_id = ?", new Date().toISOString(), cafId);
      raised = this.alerts.raise(now);
      return { ok: true, cafId, changed: true };
    });
    if (raised > 0) await this.deliverAlerts();
    return result;
  }

  /**
   * §4.7 set next folio. On error nothing is modified. On success every folio below N in every
   * active range is marked used and the next allocation gets next_number_to_use.
   */
  async setNextFolio(n: number, options: AllocateOptions = {}): Promise<SetNextFolioResult> {
    const now = options.now ?? Date.now();
    let raised = 0;
    const result = this.ctx.storage.transactionSync((): SetNextFolioResult => {
      const { documentType } = this.scope();
      const ranges = this.store.loadRanges();
      const annulled = this.store.loadPendingAnnulled();
      const plan = planSetNextFolio(ranges, annulled, n, now);
      if (!plan.ok) {
        const { ok: _ok, ...err } = plan;
        return { ok: false, ...err };
      }
      for (const u of plan.updates) {
        this.sql.exec("UPDATE ranges SET cursor = ? WHERE caf_id = ?", u.cursor, u.rangeId);
      }
      this.sql.exec(
        "INSERT INTO next_folio_moves (requested, next_number_to_use, folios_updated, moved_at) VALUES (?, ?, ?, ?)",
        n,
        plan.nextNumberToUse,
        plan.foliosUpdated,
        new Date(now).toISOString(),
      );
      raised = this.alerts.raise(now);
      const message =
        plan.nextNumberToUse === n
          ? `next folio set to ${n}; ${plan.foliosUpdated} lower folios marked as used`
          : `folio ${n} is not available; the next folio to use is ${plan.nextNumberToUse}; ${plan.foliosUpdated} lower folios marked as used`;
      return {
        ok: true,
        id_document_type: documentType,
        folios_updated: plan.foliosUpdated,
        next_number_to_use: plan.nextNumberToUse,
        message,
      };
    });
    if (raised > 0) await this.deliverAlerts();
    return result;
  }

  /** Annuls one unused folio of a loaded range: it will never be issued. */
  async annul(folio: number, options: AllocateOptions & { reason?: string } = {}): Promise<AnnulResult> {
    const now = options.now ?? Date.now();
    let raised = 0;
    const result = this.ctx.storage.transactionSync((): AnnulResult => {
      this.scope();
      const ranges = this.store.loadRanges();
      const annulled = this.store.loadPendingAnnulled();
      if (typeof folio === "number" && Number.isSafeInteger(folio)) {
        const before = this.sql.exec("SELECT 1 FROM annulled WHERE folio = ?", folio).toArray();
        if (before.length > 0) annulled.add(folio);
      }
      const plan = planAnnul(ranges, annulled, folio);
      if (!plan.ok) {
        const { ok: _ok, ...err } = plan;
        return { ok: false, ...err };
      }
      this.sql.exec(
        "INSERT INTO annulled (folio, caf_id, reason, annulled_at) VALUES (?, ?, ?, ?)",
        folio,
        plan.rangeId,
        typeof options.reason === "string" ? options.reason.slice(0, 500) : null,
        new Date(now).toISOString(),
      );
      this.sql.exec("UPDATE ranges SET cursor = ? WHERE caf_id = ?", plan.newCursor, plan.rangeId);
      raised = this.alerts.raise(now);
      return { ok: true, folio, cafId: plan.rangeId };
    });
    if (raised > 0) await this.deliverAlerts();
    return result;
  }

  /** Alert threshold of this document type; null returns to the default (10 % of active folios). */
  async setThreshold(threshold: number | null, options: AllocateOptions = {}): Promise<SetThresholdResult> {
    const now = options.now ?? Date.now();
    if (threshold !== null && !(typeof threshold === "number" && Number.isSafeInteger(threshold) && threshold >= 0)) {
      return { ok: false, code: "THRESHOLD_INVALID", message: "threshold must be a non-negative integer or null" };
    }
    let raised = 0;
    const result = this.ctx.storage.transactionSync((): SetThresholdResult => {
      this.scope();
      if (threshold === null) this.sql.exec("DELETE FROM meta WHERE key = 'threshold'");
      else this.store.setMeta("threshold", String(threshold));
      const ranges = this.store.loadRanges();
      const annulled = this.store.loadPendingAnnulled();
      raised = this.alerts.raise(now, ranges, annulled);
      const t = this.store.threshold(availability(ranges, annulled, now).loadedActive);
      return { ok: true, threshold: t.value, is_default: t.isDefault };
    });
    if (raised > 0) await this.deliverAlerts();
    return result;
  }

  async status(options: AllocateOptions = {}): Promise<FolioStatus> {
    const now = options.now ?? Date.now();
    return folioStatus(this.sql, this.store, this.pruner, this.scope(), now);
  }

  /**
   * Re-checks the clock-driven alerts (expiry windows, expired ranges) and delivers pending ENU
   * rows to D1. Called by the alarm; a cron may call it too. Throws when D1 is unavailable.
   */
  async checkAlerts(options: AllocateOptions = {}): Promise<{ raised: number; delivered: number }> {
    const now = options.now ?? Date.now();
    const raised = this.ctx.storage.transactionSync(() => this.alerts.raise(now));
    const delivered = await this.alerts.flush();
    if (delivered > 0) await notifyEvents(this.env, [this.scope().companyId]).catch(() => undefined); // the cron re-drives
    return { raised, delivered };
  }

  override async alarm(): Promise<void> {
    if (!this.scopeRecord.known()) return;
    let more = false;
    try {
      more = (await this.pruneAllocations()).more;
    } catch (err) {
      log("warn", "folio allocator: pruning failed, the next alarm retries", { error: describeError(err) });
    }
    try {
      await this.checkAlerts();
    } finally {
      await this.scheduleAlarm(Date.now(), more);
      this.pruneArmed = false; // the next new allocation checks again (the alarm may have found nothing to keep it)
    }
  }
}
