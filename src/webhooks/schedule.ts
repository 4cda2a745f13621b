/**
 * When a failed delivery is tried again: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h
 * and 24 h (each ±10 % jitter), i.e. 11 attempts over about 4 days and 4 hours; then the delivery is
 * FAILED (it can still be redelivered by hand). An endpoint whose deliveries have all failed for 5
 * days in a row is disabled. The schedule can be shortened for tests with the WEBHOOK_RETRY_SCHEDULE
 * variable (comma-separated seconds), never in production.
 */
export const RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400, 86_400];
export const DISABLE_AFTER_MS = 5 * 86_400_000;
/** Cloudflare Queues hold a message back at most 12 hours; longer waits are re-queued on arrival. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

export function retrySchedule(env: { ENVIRONMENT: string; WEBHOOK_RETRY_SCHEDULE?: string }): readonly number[] {
  const custom = env.ENVIRONMENT !== "production" ? env.WEBHOOK_RETRY_SCHEDULE : undefined;
  if (!custom) return RETRY_SCHEDULE_SECONDS;
  const parsed = custom.split(",").map((s) => Number(s.trim()));
  return parsed.every((n) => Number.isFinite(n) && n >= 0) ? parsed : RETRY_SCHEDULE_SECONDS;
}

/** Delay before attempt `attempt + 1` (attempt counts from 1), or null when there is none left. */
export function retryDelaySeconds(schedule: readonly number[], attempt: number, random = Math.random): number | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * random()));
}

const unit = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);

/** The schedule in words, for the OpenAPI document (written from the table above, so it cannot drift). */
export function describeSchedule(schedule: readonly number[] = RETRY_SCHEDULE_SECONDS): string {
  const days = schedule.reduce((a, b) => a + b, 0) / 86_400;
  return `A failed attempt (not 2xx, no answer within 10 s, a network error) is tried again after ${schedule.map(unit).join(", ")} (each ±10 % jitter): ${schedule.length + 1} attempts over about ${days.toFixed(1)} days, with the same \`webhook-id\`; then the delivery is FAILED (it can be redelivered). An endpoint that has failed every delivery for ${DISABLE_AFTER_MS / 86_400_000} days is disabled.`;
}
