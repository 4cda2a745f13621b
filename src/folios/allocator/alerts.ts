/**
 * ENU alerts of one allocator: the condition is detected inside the transaction that changed the
 * folio state (a row in the local `alerts` table, deduplicated by key), then copied to D1
 * `event_outbox` with INSERT OR IGNORE on (company_id, dedupe_key) — by the operation right after
 * its commit, and by the alarm as a retry.
 */
import { newId } from "../../lib/ids";
import { availability, planAlerts, type FolioRange } from "../rules";
import type { EnuPayload } from "../allocator-api";
import type { AllocatorScope } from "./scope";
import type { FolioStore } from "./storage";

export class AlertOutbox {
  constructor(
    private readonly sql: SqlStorage,
    private readonly store: FolioStore,
    private readonly db: D1Database,
    private readonly scope: () => AllocatorScope,
  ) {}

  /**
   * Re-evaluates ENU conditions on the current (already updated) state and records new alerts in
   * the local table. Must run inside the caller's transaction. Returns how many were raised.
   */
  raise(now: number, ranges?: FolioRange[], annulled?: Set<number>): number {
    const { companyId, documentType } = this.scope();
    const avail = availability(ranges ?? this.store.loadRanges(), annulled ?? this.store.loadPendingAnnulled(), now);
    const threshold = this.store.threshold(avail.loadedActive).value;
    const before = this.store.alertState();
    const { state, events } = planAlerts(documentType, avail, threshold, before, now);
    if (events.length === 0 && JSON.stringify(state) === JSON.stringify(before)) return 0;
    const detectedAt = new Date(now).toISOString();
    for (const e of events) {
      const payload: EnuPayload = {
        event: "ENU",
        company_id: companyId,
        document_type: documentType,
        reason: e.reason,
        available: e.available,
        threshold: e.threshold,
        ...(e.cafId !== undefined ? { caf_id: e.cafId } : {}),
        ...(e.expiresAt !== undefined ? { expires_at: e.expiresAt } : {}),
        ...(e.rangeAvailable !== undefined ? { range_available: e.rangeAvailable } : {}),
        detected_at: detectedAt,
      };
      this.sql.exec(
        "INSERT OR IGNORE INTO alerts (dedupe_key, payload, created_at) VALUES (?, ?, ?)",
        e.dedupeKey,
        JSON.stringify(payload),
        new Date().toISOString(),
      );
    }
    this.store.setMeta("alert_state", JSON.stringify(state));
    return events.length;
  }

  hasUnsent(): boolean {
    return this.sql.exec("SELECT 1 FROM alerts WHERE sent_at IS NULL LIMIT 1").toArray().length > 0;
  }

  /**
   * Copies unsent alerts to D1 event_outbox (INSERT OR IGNORE: a repeat after a crash between the
   * D1 write and the local mark is harmless). Throws when D1 fails.
   */
  async flush(): Promise<number> {
    const { companyId } = this.scope();
    const pending = this.sql
      .exec<{ dedupe_key: string; payload: string; created_at: string }>(
        "SELECT dedupe_key, payload, created_at FROM alerts WHERE sent_at IS NULL ORDER BY created_at",
      )
      .toArray();
    if (pending.length === 0) return 0;
    const stmt = this.db.prepare(
      "INSERT OR IGNORE INTO event_outbox (id, company_id, type, dedupe_key, payload, created_at) VALUES (?, ?, 'ENU', ?, ?, ?)",
    );
    await this.db.batch(pending.map((p) => stmt.bind(newId("evt"), companyId, p.dedupe_key, p.payload, p.created_at)));
    const sentAt = new Date().toISOString();
    for (const p of pending) this.sql.exec("UPDATE alerts SET sent_at = ? WHERE dedupe_key = ?", sentAt, p.dedupe_key);
    return pending.length;
  }
}
