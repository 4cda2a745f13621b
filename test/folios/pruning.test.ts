import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { randomUlid } from "../../src/lib/ids";
import type { FolioAllocator } from "../../src/folios/allocator";
import { ALLOCATION_RETENTION_MS, PRUNE_INTERVAL_MS } from "../../src/folios/allocator/pruning";
import { DAY, freshAllocator, loadTwoRanges } from "./helpers";

/**
 * The allocator deletes the allocations of documents created more than the retention ago
 * and refuses any folio request for such a document, so no document is ever numbered twice and no
 * folio handed out twice (src/folios/allocator/pruning.ts).
 */
type Stub = DurableObjectStub<FolioAllocator>;

/** A document id created at `at` (what issuance makes: `inv_<ULID>`, or `inv_p<n>_<ULID>` in a store). */
const docAt = (at: number, partition?: number) => (partition === undefined ? `inv_${randomUlid(at)}` : `inv_p${partition}_${randomUlid(at)}`);

async function rowCount(stub: Stub): Promise<number> {
  return runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM allocations").one().n);
}

async function folioOf(stub: Stub, id: string, now: number): Promise<number> {
  const r = await stub.allocate(id, { now });
  if (!r.ok) throw new Error(`${id}: ${r.reason} ${r.message}`);
  return r.folio;
}

describe("folio allocator: pruning allocations behind a horizon", () => {
  const T0 = Date.parse("2026-11-01T00:00:00Z");

  it("a late duplicate request after pruning is refused and consumes nothing; later documents keep their replay", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    const old = [docAt(T0), docAt(T0 + 1000, 3), docAt(T0 + 2000)];
    const recent = docAt(T0 + 3 * DAY);
    const folios = [];
    for (const id of [...old, recent]) folios.push(await folioOf(stub, id, T0 + 3 * DAY));
    expect(folios).toEqual([1, 2, 3, 4]);
    const handMade = "doc-without-time";
    expect(await folioOf(stub, handMade, T0)).toBe(5);

    const pruned = await stub.pruneAllocations({ now: T0 + ALLOCATION_RETENTION_MS + DAY });
    expect(pruned).toEqual({ horizon: new Date(T0 + DAY).toISOString(), deleted: 3, more: false });
    expect(await rowCount(stub)).toBe(2); // the recent one and the id without a time

    for (const id of old) {
      const again = await stub.allocate(id, { now: T0 + 9 * DAY });
      expect(again).toMatchObject({ ok: false, reason: "TOO_OLD" });
      expect((again as { message: string }).message).toContain(id);
      expect(await stub.reserve(id, { now: T0 + 9 * DAY })).toMatchObject({ ok: false, reason: "TOO_OLD" });
    }
    const many = await stub.allocateMany([old[0]!, recent, handMade], { now: T0 + 9 * DAY });
    expect(many.map((r) => (r.ok ? r.folio : r.reason))).toEqual(["TOO_OLD", 4, 5]);
    const status = await stub.status({ now: T0 + 9 * DAY });
    expect(status.next_folio_to_use).toBe(6); // nothing consumed by the refusals
    expect(status.allocated).toBe(5); // kept + pruned
    expect(await folioOf(stub, docAt(T0 + 9 * DAY), T0 + 9 * DAY)).toBe(6);
  });

  it("documents on either side of the horizon: below refused before and after its row goes, at the horizon kept", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    const H = T0 + 5 * DAY;
    const below = docAt(H - 1);
    const at = docAt(H);
    expect(await folioOf(stub, below, H)).toBe(1);
    expect(await folioOf(stub, at, H)).toBe(2);
    // The first batch moves the horizon and deletes nothing yet (limit 0): the row exists, the request is still refused.
    expect(await stub.pruneAllocations({ now: H + ALLOCATION_RETENTION_MS, limit: 0 })).toMatchObject({ deleted: 0 });
    expect(await stub.allocate(below, { now: H })).toMatchObject({ ok: false, reason: "TOO_OLD" });
    expect(await stub.pruneAllocations({ now: H + ALLOCATION_RETENTION_MS })).toMatchObject({ deleted: 1, more: false });
    expect(await stub.allocate(below, { now: H })).toMatchObject({ ok: false, reason: "TOO_OLD" });
    expect(await stub.allocate(at, { now: H })).toEqual({ ok: true, folio: 2, cafId: "A", documentId: at, replay: true });
    // The horizon never moves back.
    expect(await stub.pruneAllocations({ now: T0 })).toMatchObject({ horizon: new Date(H).toISOString(), deleted: 0 });
  });

  it("requests racing a prune never get a folio twice nor a second folio for one document", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    const H = T0 + 10 * DAY;
    const ids = Array.from({ length: 40 }, (_, i) => docAt(H - 20 + i)); // 20 below the horizon, 20 at or above
    const first = await Promise.all(ids.map((id) => stub.allocate(id, { now: H })));
    const firstFolio = new Map(ids.map((id, i) => [id, (first[i] as { folio: number }).folio]));
    expect(new Set(firstFolio.values()).size).toBe(40);
    const racing = await Promise.all([
      ...ids.map((id) => stub.allocate(id, { now: H })),
      ...Array.from({ length: 4 }, () => stub.pruneAllocations({ now: H + ALLOCATION_RETENTION_MS, limit: 7 })),
      ...ids.map((id) => stub.allocate(id, { now: H })),
      ...ids.map((id) => stub.allocate(docAt(H + 1), { now: H })),
    ]);
    const answers = racing.filter((r): r is Awaited<ReturnType<Stub["allocate"]>> => "ok" in r);
    for (const r of answers) {
      if (r.ok && firstFolio.has(r.documentId)) expect(r.folio).toBe(firstFolio.get(r.documentId)); // a replay, never a new folio
      if (!r.ok) expect(r.reason).toBe("TOO_OLD");
    }
    const fresh = answers.filter((r) => r.ok && !firstFolio.has(r.documentId)).map((r) => (r as { folio: number }).folio);
    expect(fresh).toHaveLength(40);
    expect(new Set([...firstFolio.values(), ...fresh]).size).toBe(80);
    // After the dust settles: every document below the horizon is refused, every other one replays.
    await stub.pruneAllocations({ now: H + ALLOCATION_RETENTION_MS });
    for (const [i, id] of ids.entries()) {
      const r = await stub.allocate(id, { now: H });
      if (i < 20) expect(r).toMatchObject({ ok: false, reason: "TOO_OLD" });
      else expect(r).toMatchObject({ ok: true, folio: firstFolio.get(id), replay: true });
    }
    expect(await rowCount(stub)).toBe(60);
  });

  it("an alarm set for a far CAF expiry is brought forward to the next prune by the first allocation", async () => {
    const { stub } = freshAllocator("33"); // facturas: the CAF expires 6 months after authorisation
    const today = new Date().toISOString().slice(0, 10);
    await stub.addRange({ cafId: "F1", from: 1, to: 100, authorizedAt: today });
    const alarmAt = () => runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => state.storage.getAlarm());
    const expiryCheck = await alarmAt();
    expect(expiryCheck! - Date.now()).toBeGreaterThan(30 * DAY);
    await stub.allocate(docAt(Date.now() - ALLOCATION_RETENTION_MS - DAY));
    const next = await alarmAt();
    expect(next! - Date.now()).toBeLessThanOrEqual(PRUNE_INTERVAL_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowCount(stub)).toBe(0);
    expect(await alarmAt()).toBe(expiryCheck); // nothing left to prune: back to the expiry check
  });

  it("after an alarm that left nothing to prune (no alarm set), the next allocation arms it again", async () => {
    const { stub } = freshAllocator("39");
    await stub.addRange({ cafId: "B1", from: 1, to: 100, authorizedAt: "2026-01-01", expiresAt: null });
    const alarmAt = () => runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => state.storage.getAlarm());
    await stub.allocate(docAt(Date.now() - ALLOCATION_RETENTION_MS - DAY));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowCount(stub)).toBe(0);
    expect(await alarmAt()).toBeNull();
    await stub.allocate(docAt(Date.now()));
    expect((await alarmAt())!).toBeGreaterThanOrEqual(Date.now() + ALLOCATION_RETENTION_MS - 60_000);
  });

  it("the alarm prunes in bounded batches and keeps itself scheduled", async () => {
    const { stub } = freshAllocator("39"); // boletas: no expiry, so only pruning sets the alarm
    await stub.addRange({ cafId: "B1", from: 1, to: 20_000, authorizedAt: "2026-01-01", expiresAt: null });
    const now = Date.now();
    const old = Array.from({ length: 12_000 }, (_, i) => docAt(now - ALLOCATION_RETENTION_MS - DAY + i));
    for (let i = 0; i < old.length; i += 1000) await stub.allocateMany(old.slice(i, i + 1000));
    const recent = docAt(now);
    await stub.allocate(recent);
    const alarmAt = () => runInDurableObject(stub, (_i: FolioAllocator, state: DurableObjectState) => state.storage.getAlarm());
    const first = await alarmAt();
    expect(first).not.toBeNull(); // armed by the first new allocation
    expect(first!).toBeGreaterThanOrEqual(now + PRUNE_INTERVAL_MS - 1000);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowCount(stub)).toBe(12_001 - 5_000); // one batch per alarm
    const next = await alarmAt();
    expect(next! - Date.now()).toBeLessThan(5_000); // a full batch: come back soon
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rowCount(stub)).toBe(1);
    expect(await stub.allocate(old[11_999]!)).toMatchObject({ ok: false, reason: "TOO_OLD" });
    expect(await stub.allocate(recent)).toMatchObject({ ok: true, folio: 12_001, replay: true });
    // Nothing left to prune now: the next run is when the recent row crosses the horizon.
    expect((await alarmAt())!).toBeGreaterThanOrEqual(now + ALLOCATION_RETENTION_MS);
    expect((await stub.status()).allocated).toBe(12_001);
  });
});
