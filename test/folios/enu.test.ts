import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FolioAllocator } from "../../src/folios/allocator";
import { DAY, NOW, freshAllocator, loadTwoRanges } from "./helpers";

interface OutboxRow {
  id: string;
  type: string;
  dedupe_key: string;
  payload: string;
  dispatched_at: string | null;
}

async function outbox(companyId: string): Promise<OutboxRow[]> {
  const r = await env.DB.prepare("SELECT id, type, dedupe_key, payload, dispatched_at FROM event_outbox WHERE company_id = ? ORDER BY created_at, dedupe_key")
    .bind(companyId)
    .all<OutboxRow>();
  return r.results;
}

async function allocateMany(stub: DurableObjectStub<FolioAllocator>, n: number, prefix: string, now = NOW): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await stub.allocate(`${prefix}-${i}`, { now });
    if (!r.ok) throw new Error(`${prefix}-${i}: ${r.reason}`);
  }
}

describe("ENU events in the D1 outbox", () => {
  it("LOW_AVAILABILITY once when availability falls under the threshold, EXHAUSTED once at the end, re-armed by a new CAF", async () => {
    const { stub, companyId } = freshAllocator();
    await loadTwoRanges(stub); // 200 folios, default threshold 20
    await allocateMany(stub, 180, "a");
    expect(await outbox(companyId)).toEqual([]);
    await allocateMany(stub, 1, "b");
    let rows = await outbox(companyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: "ENU", dedupe_key: "ENU:33:LOW_AVAILABILITY:1", dispatched_at: null });
    expect(JSON.parse(rows[0]!.payload)).toEqual({
      event: "ENU",
      company_id: companyId,
      document_type: "33",
      reason: "LOW_AVAILABILITY",
      available: 19,
      threshold: 20,
      detected_at: new Date(NOW).toISOString(),
    });
    await allocateMany(stub, 19, "c");
    expect(await stub.allocate("over", { now: NOW })).toMatchObject({ ok: false, reason: "EXHAUSTED" });
    expect(await stub.allocate("over2", { now: NOW })).toMatchObject({ ok: false, reason: "EXHAUSTED" });
    rows = await outbox(companyId);
    expect(rows.map((r) => r.dedupe_key)).toEqual(["ENU:33:LOW_AVAILABILITY:1", "ENU:33:EXHAUSTED:1"]);
    expect(JSON.parse(rows[1]!.payload)).toMatchObject({ reason: "EXHAUSTED", available: 0 });

    // A new CAF clears both conditions; falling low again is a new episode with a new event.
    await stub.addRange({ cafId: "C", from: 301, to: 400, authorizedAt: "2026-11-01", expiresAt: null }, { now: NOW });
    expect((await stub.status({ now: NOW })).threshold).toBe(30);
    await allocateMany(stub, 70, "d");
    expect(await outbox(companyId)).toHaveLength(2);
    await allocateMany(stub, 1, "e");
    rows = await outbox(companyId);
    expect(rows.map((r) => r.dedupe_key)).toEqual(["ENU:33:LOW_AVAILABILITY:1", "ENU:33:EXHAUSTED:1", "ENU:33:LOW_AVAILABILITY:2"]);
    expect(JSON.parse(rows[2]!.payload)).toMatchObject({ available: 29, threshold: 30 });
  });

  it("raising the threshold above the availability raises LOW_AVAILABILITY at once", async () => {
    const { stub, companyId } = freshAllocator("61");
    await loadTwoRanges(stub);
    await stub.setThreshold(500, { now: NOW });
    const rows = await outbox(companyId);
    expect(rows.map((r) => r.dedupe_key)).toEqual(["ENU:61:LOW_AVAILABILITY:1"]);
    expect(JSON.parse(rows[0]!.payload)).toMatchObject({ document_type: "61", available: 200, threshold: 500 });
  });

  it("EXPIRING once per range within 30 days of its expiry; the clock check picks up later ones", async () => {
    const { stub, companyId } = freshAllocator();
    const soon = new Date(NOW + 10 * DAY).toISOString();
    const later = new Date(NOW + 45 * DAY).toISOString();
    await stub.addRange({ cafId: "SOON", from: 1, to: 100, authorizedAt: "2026-05-22", expiresAt: soon }, { now: NOW });
    await stub.addRange({ cafId: "LATER", from: 201, to: 300, authorizedAt: "2026-06-06", expiresAt: later }, { now: NOW });
    let rows = await outbox(companyId);
    expect(rows.map((r) => r.dedupe_key)).toEqual(["ENU:33:EXPIRING:SOON"]);
    expect(JSON.parse(rows[0]!.payload)).toMatchObject({
      reason: "EXPIRING",
      caf_id: "SOON",
      expires_at: soon,
      range_available: 100,
      // Raised when SOON was loaded, before LATER was.
      available: 100,
    });
    await allocateMany(stub, 5, "x");
    expect(await outbox(companyId)).toHaveLength(1);
    // The object arms its alarm for the next clock-driven change.
    const alarm = await runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    // 20 days later LATER enters its window and SOON has expired with 95 folios unused.
    const r = await stub.checkAlerts({ now: NOW + 20 * DAY });
    expect(r).toEqual({ raised: 1, delivered: 1 });
    rows = await outbox(companyId);
    expect(rows.map((x) => x.dedupe_key)).toEqual(["ENU:33:EXPIRING:SOON", "ENU:33:EXPIRING:LATER"]);
    const status = await stub.status({ now: NOW + 20 * DAY });
    expect(status).toMatchObject({ expired_unused: 95, total_available: 100 });
    expect(await stub.checkAlerts({ now: NOW + 21 * DAY })).toEqual({ raised: 0, delivered: 0 });
  });

  it("a D1 failure never affects allocation; the alarm delivers the event later, once", async () => {
    const { stub, companyId } = freshAllocator("56");
    await stub.addRange({ cafId: "R", from: 1, to: 10, authorizedAt: "2026-11-01", expiresAt: null }, { now: NOW });
    await env.DB.exec("ALTER TABLE event_outbox RENAME TO event_outbox_away");
    let folios: number[] = [];
    try {
      // Threshold 1 by default (10 % of 10): the 10th allocation exhausts the range and raises
      // LOW_AVAILABILITY and EXHAUSTED while D1 cannot take them.
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => stub.allocate(`d-${i}`, { now: NOW })));
      folios = results.map((r) => (r.ok ? r.folio : -1));
    } finally {
      await env.DB.exec("ALTER TABLE event_outbox_away RENAME TO event_outbox");
    }
    expect([...folios].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await outbox(companyId)).toEqual([]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const rows = await outbox(companyId);
    expect(rows.map((r) => r.dedupe_key).sort()).toEqual(["ENU:56:EXHAUSTED:1", "ENU:56:LOW_AVAILABILITY:1"]);
    // A repeated delivery (e.g. crash after the D1 write, before the local mark) inserts nothing new.
    await runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => {
      state.storage.sql.exec("UPDATE alerts SET sent_at = NULL");
    });
    expect(await stub.checkAlerts({ now: NOW })).toEqual({ raised: 0, delivered: 2 });
    expect(await outbox(companyId)).toHaveLength(2);
    // Redelivered allocations still answer the same folios.
    const again = await Promise.all(Array.from({ length: 10 }, (_, i) => stub.allocate(`d-${i}`, { now: NOW })));
    expect(again.map((r) => (r.ok ? r.folio : -1))).toEqual(folios);
  });
});
