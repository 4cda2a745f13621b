import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DAY, NOW, dumpStorage, freshAllocator, loadTwoRanges } from "./helpers";

async function allocateN(stub: ReturnType<typeof freshAllocator>["stub"], n: number, prefix: string, now = NOW): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await stub.allocate(`${prefix}-${i}`, { now });
    if (!r.ok) throw new Error(`allocation ${i} failed: ${r.reason}`);
    out.push(r.folio);
  }
  return out;
}

describe("folio allocator: spec §3 folio rules with ranges 1-100 and 201-300", () => {
  it("rules 1-2: numbering starts at the lowest available folio and continues across the gap", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    const s = await stub.status({ now: NOW });
    expect(s.next_folio_to_use).toBe(1);
    expect(s.total_available).toBe(200);
    const folios = await allocateN(stub, 102, "doc");
    expect(folios.slice(0, 3)).toEqual([1, 2, 3]);
    expect(folios.slice(98)).toEqual([99, 100, 201, 202]);
    const first = await stub.allocate("doc-0", { now: NOW });
    expect(first).toEqual({ ok: true, folio: 1, cafId: "A", documentId: "doc-0", replay: true });
    expect(await stub.getAllocation("doc-101")).toMatchObject({ folio: 202, cafId: "B" });
    expect(await stub.getAllocation("never-seen")).toBeNull();
  });

  it("rule 3: setting N marks every lower folio of every active range as used", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    await allocateN(stub, 10, "pre");
    const r = await stub.setNextFolio(250, { now: NOW });
    expect(r).toEqual({
      ok: true,
      id_document_type: "33",
      folios_updated: 90 + 49,
      next_number_to_use: 250,
      message: expect.any(String),
    });
    const s = await stub.status({ now: NOW });
    expect(s.ranges.map((x) => [x.caf_id, x.available, x.next_folio])).toEqual([
      ["A", 0, null],
      ["B", 51, 250],
    ]);
    expect((await stub.allocate("after", { now: NOW })) ).toMatchObject({ ok: true, folio: 250, cafId: "B" });
    // Earlier documents keep their folios.
    expect(await stub.allocate("pre-3", { now: NOW })).toMatchObject({ folio: 4, replay: true });
  });

  it("rule 4: N already annulled or used resolves to the next available folio", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    expect(await stub.annul(50)).toMatchObject({ ok: true, folio: 50, cafId: "A" });
    expect(await stub.annul(51)).toMatchObject({ ok: true });
    const r = await stub.setNextFolio(50, { now: NOW });
    expect(r).toMatchObject({ ok: true, folios_updated: 49, next_number_to_use: 52 });
    expect(await stub.allocate("x", { now: NOW })).toMatchObject({ ok: true, folio: 52 });
    // 40 is used now (marked by the move): resolves to the next free folio, 53, marking nothing.
    expect(await stub.setNextFolio(40, { now: NOW })).toMatchObject({ ok: true, folios_updated: 0, next_number_to_use: 53 });
    // Last folio of A annulled: resolved into B, across the gap.
    expect(await stub.annul(100)).toMatchObject({ ok: true });
    expect(await stub.setNextFolio(100, { now: NOW })).toMatchObject({ ok: true, folios_updated: 47, next_number_to_use: 201 });
    expect(await stub.allocate("y", { now: NOW })).toMatchObject({ ok: true, folio: 201, cafId: "B" });
  });

  it("§4.7 rule 2: N outside every range or in the gap is ENUMERATION_OUT_OF_RANGE and modifies nothing", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    await allocateN(stub, 5, "d");
    const before = await dumpStorage(stub);
    const statusBefore = await stub.status({ now: NOW });
    for (const n of [0, 101, 150, 200, 301, 99_999]) {
      const r = await stub.setNextFolio(n, { now: NOW });
      expect(r).toMatchObject({ ok: false, code: "ENUMERATION_OUT_OF_RANGE", status: 400 });
    }
    expect(await stub.setNextFolio(12.5, { now: NOW })).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID", status: 400 });
    expect(await stub.status({ now: NOW })).toEqual(statusBefore);
    expect(await dumpStorage(stub)).toEqual(before);
    expect(await stub.allocate("next", { now: NOW })).toMatchObject({ folio: 6 });
  });

  it("§4.7 rule 3: no available folio at or above N is ENUMERATION_NO_FOLIOS_AVAILABLE_FROM and modifies nothing", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    for (let f = 291; f <= 300; f++) expect(await stub.annul(f)).toMatchObject({ ok: true });
    const before = await dumpStorage(stub);
    const statusBefore = await stub.status({ now: NOW });
    expect(statusBefore.ranges.map((r) => r.available)).toEqual([100, 90]);
    for (const n of [291, 295, 300]) {
      expect(await stub.setNextFolio(n, { now: NOW })).toMatchObject({ ok: false, code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM", status: 400 });
    }
    // Range A was not marked used: nothing was modified.
    expect(await stub.status({ now: NOW })).toEqual(statusBefore);
    expect(await dumpStorage(stub)).toEqual(before);
    expect(await stub.allocate("first", { now: NOW })).toMatchObject({ folio: 1 });
    // 290 is still possible.
    expect(await stub.setNextFolio(290, { now: NOW })).toMatchObject({ ok: true, next_number_to_use: 290, folios_updated: 99 + 89 });
  });

  it("§4.7 rule 4: no active range is ENUMERATION_NOT_FOUND (404)", async () => {
    const { stub } = freshAllocator("61");
    expect(await stub.setNextFolio(1, { now: NOW })).toMatchObject({ ok: false, code: "ENUMERATION_NOT_FOUND", status: 404 });
    await loadTwoRanges(stub);
    expect(await stub.deactivateRange("A")).toEqual({ ok: true, cafId: "A", changed: true });
    expect(await stub.deactivateRange("A")).toEqual({ ok: true, cafId: "A", changed: false });
    // A is inactive: N inside it is out of range.
    expect(await stub.setNextFolio(50, { now: NOW })).toMatchObject({ ok: false, code: "ENUMERATION_OUT_OF_RANGE" });
    expect(await stub.deactivateRange("B")).toMatchObject({ ok: true, changed: true });
    const before = await dumpStorage(stub);
    expect(await stub.setNextFolio(250, { now: NOW })).toMatchObject({ ok: false, code: "ENUMERATION_NOT_FOUND", status: 404 });
    expect(await dumpStorage(stub)).toEqual(before);
    expect(await stub.allocate("z", { now: NOW })).toMatchObject({ ok: false, reason: "NO_RANGES" });
    expect(await stub.deactivateRange("nope")).toMatchObject({ ok: false, code: "FOLIO_RANGE_NOT_FOUND" });
  });
});

describe("folio allocator: storage stays small and survives restarts", () => {
  it("moving the next folio over 500,000 folios of a 1,000,000-folio CAF writes one cursor, not 500,000 rows", async () => {
    const { stub } = freshAllocator();
    await stub.addRange({ cafId: "HUGE", from: 1, to: 1_000_000, authorizedAt: "2026-11-01", expiresAt: null });
    await stub.annul(400_000);
    const r = await stub.setNextFolio(500_001, { now: NOW });
    expect(r).toMatchObject({ ok: true, folios_updated: 499_999, next_number_to_use: 500_001 });
    const dump = await dumpStorage(stub);
    expect(dump.ranges).toHaveLength(1);
    expect(dump.ranges[0]).toMatchObject({ caf_id: "HUGE", cursor: 500_001 });
    expect(dump.annulled).toHaveLength(1);
    expect(dump.next_folio_moves).toHaveLength(1);
    expect(dump.allocations).toHaveLength(0);
    expect(await stub.allocate("one", { now: NOW })).toMatchObject({ folio: 500_001 });
    expect((await stub.status({ now: NOW })).total_available).toBe(499_999);
  });

  it("moves, annulments, deactivations and thresholds survive an eviction", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    await stub.annul(60);
    await stub.setNextFolio(50, { now: NOW });
    await stub.setThreshold(7);
    await stub.allocate("k1", { now: NOW });
    const before = await stub.status({ now: NOW });
    await evictDurableObject(stub);
    expect(await stub.status({ now: NOW })).toEqual(before);
    expect(await stub.allocate("k1", { now: NOW })).toMatchObject({ folio: 50, replay: true });
    await stub.allocate("k2", { now: NOW });
    expect(await stub.allocate("k3", { now: NOW })).toMatchObject({ folio: 52 });
    expect(await stub.getAllocation("k2")).toMatchObject({ folio: 51 });
  });
});

describe("folio allocator: ranges, annulment, expiry, exhaustion", () => {
  it("rejects overlapping, duplicate and invalid ranges; the same CAF twice is an idempotent repeat", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    const base = { authorizedAt: "2026-11-01", expiresAt: null };
    expect(await stub.addRange({ cafId: "C", from: 90, to: 110, ...base })).toMatchObject({ ok: false, code: "FOLIO_RANGE_OVERLAP", conflictingCafId: "A" });
    expect(await stub.addRange({ cafId: "C", from: 150, to: 201, ...base })).toMatchObject({ ok: false, code: "FOLIO_RANGE_OVERLAP", conflictingCafId: "B" });
    expect(await stub.addRange({ cafId: "A", from: 1, to: 100, ...base })).toEqual({ ok: true, cafId: "A", created: false });
    expect(await stub.addRange({ cafId: "A", from: 500, to: 600, ...base })).toMatchObject({ ok: false, code: "FOLIO_RANGE_DUPLICATE" });
    expect(await stub.addRange({ cafId: "D", from: 700, to: 600, ...base })).toMatchObject({ ok: false, code: "FOLIO_RANGE_INVALID" });
    expect(await stub.addRange({ cafId: "D", from: 700, to: 800, authorizedAt: "x", expiresAt: null })).toMatchObject({ ok: false, code: "FOLIO_RANGE_INVALID" });
    // Inactive ranges still own their numbers.
    await stub.deactivateRange("B");
    expect(await stub.addRange({ cafId: "E", from: 250, to: 260, ...base })).toMatchObject({ ok: false, code: "FOLIO_RANGE_OVERLAP", conflictingCafId: "B" });
    expect(await stub.addRange({ cafId: "C", from: 101, to: 200, ...base })).toEqual({ ok: true, cafId: "C", created: true });
    expect((await stub.status({ now: NOW })).ranges.map((r) => [r.caf_id, r.active])).toEqual([
      ["A", true],
      ["C", true],
      ["B", false],
    ]);
  });

  it("annul: typed errors for used, annulled and unknown folios; annulled folios are never allocated", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    await allocateN(stub, 3, "a");
    expect(await stub.annul(2)).toMatchObject({ ok: false, code: "FOLIO_ALREADY_USED", status: 409 });
    expect(await stub.annul(4, { reason: "printed by mistake" })).toEqual({ ok: true, folio: 4, cafId: "A" });
    expect(await stub.annul(4)).toMatchObject({ ok: false, code: "FOLIO_ALREADY_ANNULLED", status: 409 });
    expect(await stub.annul(150)).toMatchObject({ ok: false, code: "FOLIO_NOT_IN_RANGE", status: 400 });
    expect(await stub.annul(-1)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
    expect(await stub.annul(6)).toMatchObject({ ok: true });
    expect(await allocateN(stub, 3, "b")).toEqual([5, 7, 8]);
    const s = await stub.status({ now: NOW });
    expect(s.ranges[0]).toMatchObject({ caf_id: "A", available: 92, annulled: 2, next_folio: 9 });
    expect(s.allocated).toBe(6);
  });

  it("expired ranges are skipped, their unused folios are reported, not consumed", async () => {
    const { stub } = freshAllocator();
    const expired = new Date(NOW - DAY).toISOString();
    expect(await stub.addRange({ cafId: "OLD", from: 1, to: 100, authorizedAt: "2026-05-01", expiresAt: expired })).toMatchObject({ ok: true });
    expect(await stub.allocate("e0", { now: NOW })).toMatchObject({ ok: false, reason: "EXPIRED" });
    // Before the expiry the same range works.
    expect(await stub.allocate("e1", { now: NOW - 2 * DAY })).toMatchObject({ ok: true, folio: 1, cafId: "OLD" });
    await stub.addRange({ cafId: "NEW", from: 201, to: 300, authorizedAt: "2026-11-01", expiresAt: null });
    expect(await stub.allocate("e2", { now: NOW })).toMatchObject({ ok: true, folio: 201, cafId: "NEW" });
    const s = await stub.status({ now: NOW });
    expect(s.ranges[0]).toMatchObject({ caf_id: "OLD", expired: true, available: 99, next_folio: 2 });
    expect(s.expired_unused).toBe(99);
    expect(s.total_available).toBe(99);
    expect(s.next_folio_to_use).toBe(202);
  });

  it("expiry is derived from the document type when not given: 6 months for 33, never for 52", async () => {
    const { stub } = freshAllocator("33");
    expect(await stub.addRange({ cafId: "F", from: 1, to: 10, authorizedAt: "2026-01-15" })).toMatchObject({ ok: true });
    expect((await stub.status({ now: NOW })).ranges[0]).toMatchObject({ expires_at: "2026-07-15T00:00:00.000Z", expired: true });
    expect(await stub.allocate("late", { now: NOW })).toMatchObject({ ok: false, reason: "EXPIRED" });
    expect(await stub.allocate("early", { now: Date.parse("2026-07-14T23:00:00Z") })).toMatchObject({ ok: true, folio: 1 });
    const guide = freshAllocator("52");
    await guide.stub.addRange({ cafId: "G", from: 1, to: 10, authorizedAt: "2020-01-15" });
    expect((await guide.stub.status({ now: NOW })).ranges[0]).toMatchObject({ expires_at: null, expired: false });
    expect(await guide.stub.allocate("g", { now: NOW })).toMatchObject({ ok: true, folio: 1 });
  });

  it("exhaustion gives a typed result; a new CAF continues the numbering", async () => {
    const { stub } = freshAllocator("56");
    await stub.addRange({ cafId: "S", from: 10, to: 12, authorizedAt: "2026-11-01", expiresAt: null });
    expect(await allocateN(stub, 3, "s")).toEqual([10, 11, 12]);
    expect(await stub.allocate("s-3", { now: NOW })).toMatchObject({ ok: false, reason: "EXHAUSTED" });
    expect((await stub.status({ now: NOW })).next_folio_to_use).toBeNull();
    await stub.addRange({ cafId: "T", from: 13, to: 20, authorizedAt: "2026-11-01", expiresAt: null });
    // The document that failed gets a folio on retry; earlier documents keep theirs.
    expect(await stub.allocate("s-3", { now: NOW })).toMatchObject({ ok: true, folio: 13, replay: false });
    expect(await stub.allocate("s-0", { now: NOW })).toMatchObject({ ok: true, folio: 10, replay: true });
  });

  it("bad input gets typed errors, never a crash", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    expect(await stub.allocate("", { now: NOW })).toMatchObject({ ok: false, reason: "INVALID_DOCUMENT_ID" });
    expect(await stub.allocate("x".repeat(201), { now: NOW })).toMatchObject({ ok: false, reason: "INVALID_DOCUMENT_ID" });
    expect(await stub.setThreshold(-1)).toMatchObject({ ok: false, code: "THRESHOLD_INVALID" });
    expect(await stub.setThreshold(1.5)).toMatchObject({ ok: false, code: "THRESHOLD_INVALID" });
    // Untyped callers (JSON bodies) cannot crash the object either.
    expect(await stub.addRange(null as never)).toMatchObject({ ok: false, code: "FOLIO_RANGE_INVALID" });
    expect(await stub.addRange({ cafId: "Z", from: "1", to: 5, authorizedAt: "2026-11-01" } as never)).toMatchObject({
      ok: false,
      code: "FOLIO_RANGE_INVALID",
    });
    expect(await stub.setNextFolio("250" as never, { now: NOW })).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
    expect(await stub.annul("3" as never)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
    expect(await stub.allocate(42 as never, { now: NOW })).toMatchObject({ ok: false, reason: "INVALID_DOCUMENT_ID" });
    expect(await stub.allocate("ok", { now: NOW })).toMatchObject({ ok: true, folio: 1 });
  });

  it("threshold: 10 % of the active folios by default, configurable per document type", async () => {
    const { stub } = freshAllocator();
    await loadTwoRanges(stub);
    expect(await stub.status({ now: NOW })).toMatchObject({ threshold: 20, threshold_is_default: true });
    expect(await stub.setThreshold(75)).toEqual({ ok: true, threshold: 75, is_default: false });
    expect(await stub.status({ now: NOW })).toMatchObject({ threshold: 75, threshold_is_default: false });
    const other = freshAllocator("61");
    await loadTwoRanges(other.stub);
    expect(await other.stub.status({ now: NOW })).toMatchObject({ threshold: 20, threshold_is_default: true });
    expect(await stub.setThreshold(null)).toEqual({ ok: true, threshold: 20, is_default: true });
  });
});
