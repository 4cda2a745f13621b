import { describe, expect, it } from "vitest";
import { canonicalLanguageTag, endOfLocalDay, isRealDate, isValidTimeZone, toLocalDateTime } from "../../src/lib/time";
import { backoffSeconds } from "../../src/lib/backoff";
import { pollDelaySeconds } from "../../src/invoices/pipeline/consumer";

describe("time helpers", () => {
  it("local wall-clock time without offset, across Chile's daylight saving", () => {
    expect(toLocalDateTime("2026-11-22T06:00:00Z", "America/Santiago")).toBe("2026-11-22T03:00:00"); // UTC-3 (summer)
    expect(toLocalDateTime("2026-06-15T06:00:00Z", "America/Santiago")).toBe("2026-06-15T02:00:00"); // UTC-4 (winter)
  });

  it("the last instant of a Chilean day (CAF expiry) follows the day's offset", () => {
    expect(endOfLocalDay("2026-11-22", "America/Santiago")).toBe("2026-11-23T02:59:59.999Z");
    expect(endOfLocalDay("2026-06-15", "America/Santiago")).toBe("2026-06-16T03:59:59.999Z");
    expect(endOfLocalDay("2026-06-15", "UTC")).toBe("2026-06-15T23:59:59.999Z");
  });

  it("dates, zones and language tags", () => {
    expect(isRealDate("2024-02-29")).toBe(true);
    expect(isRealDate("2026-02-29")).toBe(false);
    expect(isValidTimeZone("America/Santiago")).toBe(true);
    expect(isValidTimeZone("America/Nowhere")).toBe(false);
    expect(canonicalLanguageTag("es-cl")).toBe("es-CL");
    expect(canonicalLanguageTag("not a tag")).toBeNull();
  });
});

describe("retry schedules", () => {
  it("backoff grows exponentially with jitter and is capped at 5 minutes", () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const ceiling = Math.min(300, 2 ** Math.min(attempt, 20));
      for (let i = 0; i < 20; i++) {
        const d = backoffSeconds(attempt);
        expect(d).toBeGreaterThanOrEqual(Math.max(1, Math.floor(ceiling / 2)));
        expect(d).toBeLessThanOrEqual(Math.max(1, ceiling));
      }
    }
  });

  it("polls the simulator at once, the real SII from 2 s backing off to 5 minutes", () => {
    expect(pollDelaySeconds(0, "simulator")).toBe(0);
    expect(pollDelaySeconds(0, "production")).toBe(2);
    expect(pollDelaySeconds(5, "production")).toBe(16);
    expect(pollDelaySeconds(50, "certification")).toBe(300);
  });
});
