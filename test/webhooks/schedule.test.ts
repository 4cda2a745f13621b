import { describe, expect, it } from "vitest";
import { DISABLE_AFTER_MS, RETRY_SCHEDULE_SECONDS, retryDelaySeconds, retrySchedule } from "../../src/webhooks/schedule";

describe("webhook retry schedule", () => {
  it("grows at every step and keeps retrying for more than 3 days (11 attempts in all)", () => {
    expect(RETRY_SCHEDULE_SECONDS.every((s, i) => i === 0 || s >= RETRY_SCHEDULE_SECONDS[i - 1]!)).toBe(true);
    const total = RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(3 * 86_400);
    expect(total * 0.9).toBeGreaterThan(3 * 86_400); // even with the whole jitter below
    expect(RETRY_SCHEDULE_SECONDS.length + 1).toBe(11);
    expect(DISABLE_AFTER_MS).toBe(5 * 86_400_000);
  });

  it("jitters each wait by at most 10 % and ends when the schedule does", () => {
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS, 1, () => 0)).toBe(5); // round(4.5)
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS, 2, () => 0)).toBe(270);
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS, 2, () => 0.999999)).toBe(330);
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS, 10, () => 0.5)).toBe(86_400);
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS, 11)).toBeNull();
  });

  it("a shorter schedule is honoured outside production only", () => {
    expect(retrySchedule({ ENVIRONMENT: "test", WEBHOOK_RETRY_SCHEDULE: "1, 2,3" })).toEqual([1, 2, 3]);
    expect(retrySchedule({ ENVIRONMENT: "production", WEBHOOK_RETRY_SCHEDULE: "1,2,3" })).toBe(RETRY_SCHEDULE_SECONDS);
    expect(retrySchedule({ ENVIRONMENT: "development", WEBHOOK_RETRY_SCHEDULE: "" })).toBe(RETRY_SCHEDULE_SECONDS);
    expect(retrySchedule({ ENVIRONMENT: "development", WEBHOOK_RETRY_SCHEDULE: "1,x" })).toBe(RETRY_SCHEDULE_SECONDS);
  });
});
