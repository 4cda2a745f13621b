import { createDb } from "../storage/db/client";
import { recordCertificateExpiryEvents } from "../accounts/certificates/certificates";
import { rotationStep } from "../accounts/secrets/rotation";
import { notifyEvents } from "../webhooks/messages";
import { companiesWithStaleEvents } from "../webhooks/fanout";
import { purgeD1Events } from "../webhooks/retention";
import { log } from "../lib/log";
import { pollReceptionRegister } from "../reception/cron";

type Job = (env: Env, scheduledTime: Date) => Promise<void>;

/** `certificate.expiring` events at 30, 15 and 7 days before the active certificate expires. */
const certificateExpiry: Job = async (env, at) => {
  const companies = await recordCertificateExpiryEvents(createDb(env.DB), at);
  await notifyEvents(env, companies);
};

/** How long an event may wait for its fan-out before the sweep steps in. */
export const WEBHOOK_STALE_MS = 2 * 60_000;

/**
 * Webhooks are never lost between D1's outbox and the queue: events left undispatched (a lost fan-out
 * notice, a worker that died after writing the event) are fanned out again (idempotent). Pending
 * deliveries past their attempt time (a lost queue message) are queued again by their document
 * store's own alarm, not here.
 */
export const redriveWebhooks: Job = async (env, at) => {
  const cutoff = new Date(at.getTime() - WEBHOOK_STALE_MS).toISOString();
  await notifyEvents(env, await companiesWithStaleEvents(createDb(env.DB), cutoff));
};

/**
 * Events past their 30-day retention leave D1's outbox (src/webhooks/retention.ts): up to 20 batches
 * of 1,000 per run, oldest first; a run that stops at its bound leaves the rest to the next, which
 * starts again from the oldest. The document stores purge their own rows from their alarms.
 */
export const purgeExpiredEvents: Job = async (env, at) => {
  const step = await purgeD1Events(createDb(env.DB), at);
  if (step.deleted > 0) log("info", "expired webhook events purged", { ...step });
};

/**
 * Re-seals stored secrets under the current master key version (after MASTER_KEY gains a new first
 * entry) and seals CAF files stored before sealing existed: up to 10 pages a run, resuming where the
 * last run stopped; once done for a version it costs one query per run.
 */
export const rotateMasterKey: Job = async (env) => {
  const db = createDb(env.DB);
  for (let i = 0; i < 10; i++) {
    const step = await rotationStep(db, env, 50);
    if (step.resealed > 0) log("info", "master key rotation re-sealed values", { key_version: step.version, phase: step.phase, resealed: step.resealed });
    if (step.done) return;
  }
};

/**
 * Cron expression -> jobs. Must match [triggers].crons in wrangler.toml (a test checks it). Jobs only
 * sweep or fan out work to queues, so each run stays short.
 */
export const CRON_JOBS: Record<string, Job[]> = {
  "*/5 * * * *": [purgeExpiredEvents, certificateExpiry, redriveWebhooks, pollReceptionRegister, rotateMasterKey],
};

export async function runScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const jobs = CRON_JOBS[controller.cron] ?? [];
  const at = new Date(controller.scheduledTime);
  const results = await Promise.allSettled(jobs.map((job) => job(env, at)));
  for (const r of results) {
    if (r.status === "rejected") log("error", "cron job failed", { cron: controller.cron, error: String(r.reason) });
  }
  log("info", "cron run finished", { jobs: jobs.length, failed: results.filter((r) => r.status === "rejected").length });
}
