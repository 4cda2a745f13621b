import { abortAllDurableObjects, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { folioAllocatorFor } from "../../src/folios/allocator-api";
import { NOW, freshAllocator } from "./helpers";

function expectConsecutive(folios: number[], from: number): void {
  const sorted = [...folios].sort((a, b) => a - b);
  expect(new Set(sorted).size).toBe(folios.length);
  expect(sorted[0]).toBe(from);
  expect(sorted[sorted.length - 1]).toBe(from + folios.length - 1);
}

describe("folio allocator: exactly once under concurrency and restarts", () => {
  it("1,000 concurrent allocations get 1,000 distinct consecutive folios", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "BIG", from: 1, to: 100_000, authorizedAt: "2026-11-01", expiresAt: null });
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => stub.allocate(`doc-${i}`, { now: NOW })));
    const folios = results.map((r) => {
      if (!r.ok) throw new Error(r.reason);
      expect(r.replay).toBe(false);
      return r.folio;
    });
    expectConsecutive(folios, 1);
    // Each document's stored folio is the one it was told.
    for (const i of [0, 1, 499, 998, 999]) {
      expect(await stub.getAllocation(`doc-${i}`)).toMatchObject({ folio: folios[i] });
    }
    const s = await stub.status({ now: NOW });
    expect(s).toMatchObject({ allocated: 1000, total_available: 99_000, next_folio_to_use: 1001 });
  });

  it("the same document allocated many times concurrently gets one folio", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 1000, authorizedAt: "2026-11-01", expiresAt: null });
    const calls = Array.from({ length: 200 }, (_, i) => stub.allocate(i % 2 === 0 ? "same" : `other-${i}`, { now: NOW }));
    const results = await Promise.all(calls);
    const same = results.filter((_, i) => i % 2 === 0);
    const folioOfSame = new Set(same.map((r) => (r.ok ? r.folio : -1)));
    expect(folioOfSame.size).toBe(1);
    expect(same.filter((r) => r.ok && !r.replay)).toHaveLength(1);
    const all = new Set(results.map((r) => (r.ok ? r.folio : -1)));
    expect(all.size).toBe(101);
    expectConsecutive([...all], 1);
    // And once more, sequentially, after the storm.
    expect(await stub.allocate("same", { now: NOW })).toMatchObject({ ok: true, folio: [...folioOfSame][0], replay: true });
  });

  it("allocateMany: one critical section, same answers as allocate", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 5, authorizedAt: "2026-11-01", expiresAt: null });
    const r = await stub.allocateMany(["a", "b", "a", "", "c", "d", "e", "f"], { now: NOW });
    expect(r.map((x) => (x.ok ? x.folio : x.reason))).toEqual([1, 2, 1, "INVALID_DOCUMENT_ID", 3, 4, 5, "EXHAUSTED"]);
    expect(r[2]).toMatchObject({ replay: true });
    const [again] = await stub.allocateMany(["d"], { now: NOW });
    expect(again).toMatchObject({ ok: true, folio: 4, replay: true });
  });

  it("after an eviction the numbering continues without a skip or a duplicate", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "R", from: 1, to: 1000, authorizedAt: "2026-11-01", expiresAt: null });
    const first = await Promise.all(Array.from({ length: 50 }, (_, i) => stub.allocate(`d-${i}`, { now: NOW })));
    await evictDurableObject(stub);
    // Redelivery after the restart: same folios, nothing new consumed.
    const again = await Promise.all(Array.from({ length: 50 }, (_, i) => stub.allocate(`d-${i}`, { now: NOW })));
    expect(again.map((r) => (r.ok ? r.folio : -1))).toEqual(first.map((r) => (r.ok ? r.folio : -1)));
    expect(again.every((r) => r.ok && r.replay)).toBe(true);
    const next = await stub.allocate("d-new", { now: NOW });
    expect(next).toMatchObject({ ok: true, folio: 51, replay: false });
  });

  it("after an abort of every object (crash) the numbering continues, and in-flight work is either done or not at all", async () => {
    const { stub: before, companyId } = freshAllocator();
    await before.addRange({ cafId: "R", from: 1, to: 10_000, authorizedAt: "2026-11-01", expiresAt: null });
    await Promise.all(Array.from({ length: 20 }, (_, i) => before.allocate(`c-${i}`, { now: NOW })));
    // Abort while a burst is in flight: calls may fail, but no folio is lost or duplicated.
    const burst = Array.from({ length: 300 }, (_, i) => before.allocate(`b-${i}`, { now: NOW }).catch(() => null));
    await Promise.all(burst.slice(0, 100));
    await abortAllDurableObjects();
    const settled = await Promise.all(burst);
    // The first 100 were answered before the abort; the others failed in flight or never ran.
    expect(settled.filter((r) => r && r.ok).length).toBeGreaterThanOrEqual(100);
    // A stub whose object was reset stays broken: callers take a new one.
    const stub = folioAllocatorFor(env.FOLIO_ALLOCATOR, companyId, "33");
    // Retry everything (the caller's redelivery): every document ends up with exactly one folio.
    const retried = await Promise.all(Array.from({ length: 300 }, (_, i) => stub.allocate(`b-${i}`, { now: NOW })));
    const folios = retried.map((r) => (r.ok ? r.folio : -1));
    expectConsecutive(folios, 21);
    settled.forEach((r, i) => {
      if (r && r.ok) expect(r.folio).toBe(folios[i]);
    });
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => stub.allocate(`c-${i}`, { now: NOW })));
    expectConsecutive(again.map((r) => (r.ok ? r.folio : -1)), 1);
    expect(await stub.allocate("tail", { now: NOW })).toMatchObject({ folio: 321 });
  });
});
