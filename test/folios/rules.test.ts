import { describe, expect, it } from "vitest";
import {
  availability,
  cafExpiresAt,
  checkNewRange,
  defaultThreshold,
  INITIAL_ALERT_STATE,
  nextExpiryCheck,
  planAlerts,
  planAllocation,
  planAnnul,
  planSetNextFolio,
  remainingInRange,
  type FolioRange,
} from "../../src/folios/rules";

const NOW = Date.parse("2026-11-22T12:00:00Z");
const DAY = 86_400_000;

function range(id: string, from: number, to: number, extra: Partial<FolioRange> = {}): FolioRange {
  return { id, from, to, active: true, authorizedAt: "2026-11-01", expiresAt: null, cursor: from, ...extra };
}

/** Two non-contiguous CAFs, as in the specification's examples. */
function twoRanges(): FolioRange[] {
  return [range("A", 1, 100), range("B", 201, 300)];
}

const none = new Set<number>();

describe("planAllocation", () => {
  it("starts at the lowest available folio of the loaded ranges when nothing was set (rule 2)", () => {
    const p = planAllocation([range("B", 201, 300), range("A", 1, 100)], none, NOW);
    expect(p).toEqual({ ok: true, folio: 1, rangeId: "A", newCursor: 2 });
  });

  it("skips annulled folios and moves on to the next range when one is used up", () => {
    const ranges = [range("A", 1, 3, { cursor: 3 }), range("B", 201, 300)];
    expect(planAllocation(ranges, new Set([3]), NOW)).toEqual({ ok: true, folio: 201, rangeId: "B", newCursor: 202 });
    const p = planAllocation([range("A", 1, 10, { cursor: 4 })], new Set([5, 6]), NOW);
    expect(p).toEqual({ ok: true, folio: 4, rangeId: "A", newCursor: 7 });
  });

  it("reports NO_RANGES, EXHAUSTED and EXPIRED", () => {
    expect(planAllocation([], none, NOW)).toEqual({ ok: false, reason: "NO_RANGES" });
    expect(planAllocation([range("A", 1, 10, { active: false })], none, NOW)).toEqual({ ok: false, reason: "NO_RANGES" });
    expect(planAllocation([range("A", 1, 10, { cursor: 11 })], none, NOW)).toEqual({ ok: false, reason: "EXHAUSTED" });
    const expired = range("A", 1, 10, { expiresAt: new Date(NOW - 1000).toISOString() });
    expect(planAllocation([expired], none, NOW)).toEqual({ ok: false, reason: "EXPIRED" });
    // An expired range is skipped, a later valid one is used.
    expect(planAllocation([expired, range("B", 201, 300)], none, NOW)).toMatchObject({ ok: true, folio: 201 });
  });
});

describe("planSetNextFolio (spec §3 rules 3-4, §4.7)", () => {
  it("N inside a range: marks every lower folio of every active range as used", () => {
    const p = planSetNextFolio(twoRanges(), none, 250, NOW);
    expect(p).toEqual({
      ok: true,
      nextNumberToUse: 250,
      foliosUpdated: 100 + 49,
      updates: [
        { rangeId: "A", cursor: 101 },
        { rangeId: "B", cursor: 250 },
      ],
    });
  });

  it("counts only folios that were still available", () => {
    const ranges = [range("A", 1, 100, { cursor: 11 }), range("B", 201, 300)];
    const p = planSetNextFolio(ranges, new Set([20, 21, 60]), 50, NOW);
    // 11..49 is 39 folios, minus annulled 20 and 21.
    expect(p).toMatchObject({ ok: true, nextNumberToUse: 50, foliosUpdated: 37, updates: [{ rangeId: "A", cursor: 50 }] });
  });

  it("resolves to a greater folio when N is annulled or used (rule 4)", () => {
    const ranges = [range("A", 1, 100, { cursor: 1 }), range("B", 201, 300)];
    const p = planSetNextFolio(ranges, new Set([50, 51]), 50, NOW);
    expect(p).toMatchObject({ ok: true, nextNumberToUse: 52, foliosUpdated: 49, updates: [{ rangeId: "A", cursor: 52 }] });
    // N used (below the cursor): resolved to the cursor.
    const used = planSetNextFolio([range("A", 1, 100, { cursor: 70 }), range("B", 201, 300)], none, 40, NOW);
    expect(used).toEqual({ ok: true, nextNumberToUse: 70, foliosUpdated: 0, updates: [] });
    // Last folio of the first range annulled: resolved into the next range.
    const across = planSetNextFolio(twoRanges(), new Set([100]), 100, NOW);
    expect(across).toMatchObject({ ok: true, nextNumberToUse: 201, foliosUpdated: 99, updates: [{ rangeId: "A", cursor: 101 }] });
  });

  it("N lower than the current position never moves cursors back", () => {
    const ranges = [range("A", 1, 100, { cursor: 101 }), range("B", 201, 300, { cursor: 230 })];
    const p = planSetNextFolio(ranges, none, 210, NOW);
    expect(p).toEqual({ ok: true, nextNumberToUse: 230, foliosUpdated: 0, updates: [] });
  });

  it("N outside every range or in the gap: ENUMERATION_OUT_OF_RANGE, no redirect", () => {
    for (const n of [0, -5, 101, 150, 200, 301, 10_000]) {
      expect(planSetNextFolio(twoRanges(), none, n, NOW)).toMatchObject({ ok: false, code: "ENUMERATION_OUT_OF_RANGE", status: 400 });
    }
    // Inside an inactive range only: out of range as well.
    const inactive = [range("A", 1, 100, { active: false }), range("B", 201, 300)];
    expect(planSetNextFolio(inactive, none, 50, NOW)).toMatchObject({ ok: false, code: "ENUMERATION_OUT_OF_RANGE" });
  });

  it("N inside a range with nothing available at or above it: ENUMERATION_NO_FOLIOS_AVAILABLE_FROM", () => {
    const ranges = [range("A", 1, 100), range("B", 201, 300, { cursor: 301 })];
    expect(planSetNextFolio(ranges, none, 250, NOW)).toMatchObject({ ok: false, code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM", status: 400 });
    const annulledTail = [range("A", 1, 100), range("B", 201, 300, { cursor: 299 })];
    expect(planSetNextFolio(annulledTail, new Set([299, 300]), 250, NOW)).toMatchObject({
      ok: false,
      code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM",
    });
  });

  it("no active range: ENUMERATION_NOT_FOUND (404)", () => {
    expect(planSetNextFolio([], none, 1, NOW)).toMatchObject({ ok: false, code: "ENUMERATION_NOT_FOUND", status: 404 });
    expect(planSetNextFolio([range("A", 1, 100, { active: false })], none, 1, NOW)).toMatchObject({
      ok: false,
      code: "ENUMERATION_NOT_FOUND",
    });
  });

  it("rejects a non-integer N", () => {
    expect(planSetNextFolio(twoRanges(), none, 1.5, NOW)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
    expect(planSetNextFolio(twoRanges(), none, Number.NaN, NOW)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
  });

  it("skips expired ranges when resolving the next folio", () => {
    const expiredB = [range("A", 1, 100), range("B", 201, 300, { expiresAt: new Date(NOW - DAY).toISOString() })];
    expect(planSetNextFolio(expiredB, none, 250, NOW)).toMatchObject({ ok: false, code: "ENUMERATION_NO_FOLIOS_AVAILABLE_FROM" });
    const expiredA = [range("A", 1, 100, { expiresAt: new Date(NOW - DAY).toISOString() }), range("B", 201, 300)];
    expect(planSetNextFolio(expiredA, none, 50, NOW)).toMatchObject({ ok: true, nextNumberToUse: 201 });
  });
});

describe("planAnnul", () => {
  it("annuls an unused folio; at the cursor the cursor moves past it", () => {
    expect(planAnnul(twoRanges(), none, 50)).toEqual({ ok: true, rangeId: "A", newCursor: 1 });
    expect(planAnnul(twoRanges(), new Set([2, 3]), 1)).toEqual({ ok: true, rangeId: "A", newCursor: 4 });
    expect(planAnnul([range("A", 1, 1)], none, 1)).toEqual({ ok: true, rangeId: "A", newCursor: 2 });
  });

  it("gives typed errors", () => {
    const ranges = [range("A", 1, 100, { cursor: 10 }), range("B", 201, 300)];
    expect(planAnnul(ranges, none, 150)).toMatchObject({ ok: false, code: "FOLIO_NOT_IN_RANGE" });
    expect(planAnnul(ranges, none, 5)).toMatchObject({ ok: false, code: "FOLIO_ALREADY_USED" });
    expect(planAnnul(ranges, new Set([5]), 5)).toMatchObject({ ok: false, code: "FOLIO_ALREADY_ANNULLED" });
    expect(planAnnul(ranges, new Set([20]), 20)).toMatchObject({ ok: false, code: "FOLIO_ALREADY_ANNULLED" });
    expect(planAnnul(ranges, none, 0)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
    expect(planAnnul(ranges, none, 2.5)).toMatchObject({ ok: false, code: "FOLIO_NUMBER_INVALID" });
  });
});

describe("checkNewRange", () => {
  const input = { cafId: "C", from: 101, to: 200, authorizedAt: "2026-11-01", expiresAt: null };
  it("accepts a range filling the gap exactly", () => {
    expect(checkNewRange(twoRanges(), input)).toBeNull();
  });
  it("rejects overlaps (also with inactive ranges), duplicates and bad bounds", () => {
    expect(checkNewRange(twoRanges(), { ...input, from: 100 })).toMatchObject({ code: "FOLIO_RANGE_OVERLAP", conflictingCafId: "A" });
    expect(checkNewRange(twoRanges(), { ...input, from: 150, to: 400 })).toMatchObject({ code: "FOLIO_RANGE_OVERLAP", conflictingCafId: "B" });
    expect(checkNewRange([range("A", 1, 100, { active: false })], { ...input, from: 50, to: 60 })).toMatchObject({ code: "FOLIO_RANGE_OVERLAP" });
    expect(checkNewRange(twoRanges(), { ...input, cafId: "A", from: 1000, to: 1001 })).toMatchObject({ code: "FOLIO_RANGE_DUPLICATE" });
    expect(checkNewRange([], { ...input, from: 10, to: 9 })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
    expect(checkNewRange([], { ...input, from: 0 })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
    expect(checkNewRange([], { ...input, to: 1.5 })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
    expect(checkNewRange([], { ...input, cafId: "" })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
    expect(checkNewRange([], { ...input, authorizedAt: "yesterday" })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
    expect(checkNewRange([], { ...input, expiresAt: "soon" })).toMatchObject({ code: "FOLIO_RANGE_INVALID" });
  });
});

describe("expiry, availability and thresholds", () => {
  it("CAFs of 33, 43, 46, 56 and 61 expire 6 months after authorisation; others never", () => {
    expect(cafExpiresAt("33", "2026-01-15")).toBe("2026-07-15T00:00:00.000Z");
    expect(cafExpiresAt("61", "2026-08-31")).toBe("2027-02-28T00:00:00.000Z");
    expect(cafExpiresAt("56", "2027-08-31T10:00:00-03:00")).toBe("2028-02-29T00:00:00.000Z");
    for (const t of ["43", "46"]) expect(cafExpiresAt(t, "2026-11-01")).toBe("2027-05-01T00:00:00.000Z");
    for (const t of ["34", "39", "41", "52"]) expect(cafExpiresAt(t, "2026-11-01")).toBeNull();
    expect(cafExpiresAt("33", "not a date")).toBeUndefined();
  });

  it("counts available folios without one entry per used folio", () => {
    const big = range("BIG", 1, 1_000_000, { cursor: 250_001 });
    expect(remainingInRange(big, new Set([250_001, 999_999, 5]))).toBe(750_000 - 2);
    const a = availability(
      [big, range("OLD", 2_000_001, 2_000_010, { expiresAt: new Date(NOW - DAY).toISOString() }), range("OFF", 3_000_001, 3_000_005, { active: false })],
      new Set(),
      NOW,
    );
    expect(a.totalAvailable).toBe(750_000);
    expect(a.expiredUnused).toBe(10);
    expect(a.loadedActive).toBe(1_000_010);
    expect(defaultThreshold(200)).toBe(20);
    expect(defaultThreshold(1)).toBe(1);
    expect(defaultThreshold(0)).toBe(1);
  });
});

describe("planAlerts", () => {
  it("raises LOW_AVAILABILITY once per episode and re-arms when it clears", () => {
    const low = availability([range("A", 1, 100, { cursor: 95 })], none, NOW);
    const first = planAlerts("33", low, 10, INITIAL_ALERT_STATE, NOW);
    expect(first.events).toEqual([{ reason: "LOW_AVAILABILITY", dedupeKey: "ENU:33:LOW_AVAILABILITY:1", available: 6, threshold: 10 }]);
    expect(planAlerts("33", low, 10, first.state, NOW).events).toEqual([]);
    const refilled = availability([range("A", 1, 100, { cursor: 95 }), range("B", 201, 300)], none, NOW);
    const cleared = planAlerts("33", refilled, 10, first.state, NOW);
    expect(cleared.events).toEqual([]);
    expect(cleared.state).toMatchObject({ lowRaised: false, lowSeq: 2 });
    expect(planAlerts("33", low, 10, cleared.state, NOW).events[0]?.dedupeKey).toBe("ENU:33:LOW_AVAILABILITY:2");
  });

  it("raises EXHAUSTED and EXPIRING (within 30 days, once per range)", () => {
    const done = availability([range("A", 1, 100, { cursor: 101 })], none, NOW);
    expect(planAlerts("33", done, 10, INITIAL_ALERT_STATE, NOW).events.map((e) => e.reason)).toEqual(["LOW_AVAILABILITY", "EXHAUSTED"]);
    const soon = range("S", 1, 100, { expiresAt: new Date(NOW + 20 * DAY).toISOString() });
    const later = range("L", 201, 300, { expiresAt: new Date(NOW + 40 * DAY).toISOString() });
    const a = availability([soon, later], none, NOW);
    const r = planAlerts("33", a, 10, INITIAL_ALERT_STATE, NOW);
    expect(r.events).toEqual([
      {
        reason: "EXPIRING",
        dedupeKey: "ENU:33:EXPIRING:S",
        available: 200,
        threshold: 10,
        cafId: "S",
        expiresAt: soon.expiresAt,
        rangeAvailable: 100,
      },
    ]);
    expect(planAlerts("33", a, 10, r.state, NOW).events).toEqual([]);
    expect(nextExpiryCheck(a, NOW)).toBe(NOW + 10 * DAY);
    // Nothing to warn about when the range has no folios left.
    const usedUp = availability([range("S", 1, 100, { cursor: 101, expiresAt: soon.expiresAt })], none, NOW);
    expect(planAlerts("33", usedUp, 0, INITIAL_ALERT_STATE, NOW).events.map((e) => e.reason)).toEqual(["EXHAUSTED"]);
  });
});
