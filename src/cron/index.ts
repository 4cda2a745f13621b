import { lt } from "drizzle-orm";
import { createDb } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import type { Env } from "../env";
import { recordCertificateExpiryEvents } from "../domain/certificates/certificates";

type Job = (env: Env, scheduledTime: Date) => Promise<void>;

/** Expired Idempotency-Key records (24 hours) are purged. */
const purgeIdempotencyKeys: Job = async (env, at) => {
  await createDb(env.DB).delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, at.toISOString()));
};

/** CERTIFICATE_EXPIRING events at 30, 15 and 7 days before the active certificate expires. */
const certificateExpiry: Job = async (env, at) => {
  await recordCertificateExpiryEvents(createDb(env.DB), at);
};

/**
 * Cron expression -> jobs. Must match [triggers].crons in wrangler.toml (a test checks it). Jobs only
 * sweep or fan out work to queues, so each run stays short.
 */
export const CRON_JOBS: Record<string, Job[]> = {
  "*/5 * * * *": [purgeIdempotencyKeys, certificateExpiry],
};

export async function runScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const jobs = CRON_JOBS[controller.cron] ?? [];
  const at = new Date(controller.scheduledTime);
  const results = await Promise.allSettled(jobs.map((job) => job(env, at)));
  for (const r of results) {
    if (r.status === "rejected") console.error(JSON.stringify({ level: "error", msg: "cron job failed", cron: controller.cron, error: String(r.reason) }));
  }
}
