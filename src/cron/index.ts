import { lt, and, inArray, eq } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { legacyMoved } from "../db/document-store/legacy";
import { idempotencyKeys, envelopes, invoices } from "../db/schema";
import { recordCertificateExpiryEvents } from "../domain/certificates/certificates";
import { rotationStep } from "../domain/secrets/rotation";
import { IN_PROGRESS_STATUSES } from "../domain/invoices/state";
import { BUYER_CHECKS_PER_RUN, takeDueBuyerChecks } from "../domain/invoices/buyer-response";
import { DELIVERIES_PER_RUN, takeDueDeliveries } from "../domain/invoices/buyer-delivery";
import { notifyEvents } from "../queues/webhooks";
import { companiesWithStaleEvents } from "../webhooks/fanout";
import { armStoreAlarms } from "../webhooks/store-alarms";
import { purgeD1Events } from "../webhooks/retention";
import { enqueueBuyerChecks, enqueueBuyerDeliveries, envelopePollBody, invoiceBody, STUCK_AFTER_MS, type EnvelopePollMessage, type InvoiceMessage } from "../queues/issuance";
import { chunked } from "../lib/chunked";
import { log } from "../lib/log";
import { pollReceptionRegister, receptionDeadlines, receptionOverdueMails } from "../reception/cron";
import { migrateToStores } from "../operations/store-migration";

type Job = (env: Env, scheduledTime: Date) => Promise<void>;

/** Expired Idempotency-Key records (24 hours) are purged. */
const purgeIdempotencyKeys: Job = async (env, at) => {
  await createDb(env.DB).delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, at.toISOString()));
};

/** `certificate.expiring` events at 30, 15 and 7 days before the active certificate expires. */
const certificateExpiry: Job = async (env, at) => {
  const companies = await recordCertificateExpiryEvents(createDb(env.DB), at);
  await notifyEvents(env, companies);
};

/**
 * Re-drives documents stuck in a non-final state (a lost queue message, a dead-lettered one, a
 * crash between a write and a queue send) and envelopes whose polling stopped, in D1's legacy
 * partition until its switch. The document stores do the same for their own rows from their alarm
 * (src/durable-objects/document-store/stuck-documents.ts): this job asks no store. Every step is
 * idempotent, so a document that was in fact moving is not harmed.
 */
export const sweepStuckDocuments: Job = async (env, at) => {
  if (await legacyMoved(env, "documents")) return;
  const cutoff = new Date(at.getTime() - STUCK_AFTER_MS).toISOString();
  const { stuck, polls } = await stuckIn(createDb(env.DB), cutoff);
  const messages: { body: InvoiceMessage | EnvelopePollMessage }[] = [
    ...stuck.map((r) => ({ body: invoiceBody(r.id, r.companyId) })),
    ...polls.map((r) => ({ body: envelopePollBody(r.id, r.companyId) })),
  ];
  for (const chunk of chunked(messages, 100)) await env.ISSUANCE_QUEUE.sendBatch(chunk);
  if (messages.length > 0) log("info", "sweep re-drove work", { documents: stuck.length, envelopes: polls.length });
};

const SWEEP_LIMIT = 500;

/** D1's documents untouched in a non-final state since `cutoff`, and its envelopes whose polling stopped. */
async function stuckIn(db: Db, cutoff: string) {
  const [stuck, polls] = await db.batch([
    db
      .select({ id: invoices.id, companyId: invoices.companyId })
      .from(invoices)
      .where(and(inArray(invoices.status, [...IN_PROGRESS_STATUSES]), lt(invoices.updatedAt, cutoff)))
      .limit(SWEEP_LIMIT),
    db
      .select({ id: envelopes.id, companyId: envelopes.companyId })
      .from(envelopes)
      .where(and(eq(envelopes.status, "SENT"), lt(envelopes.updatedAt, cutoff)))
      .limit(SWEEP_LIMIT),
  ]);
  return { stuck, polls };
}

/**
 * The buyer-response checks and buyer deliveries due in D1's legacy partition 0 until the documents
 * group's switch (the document stores send their own from their alarm,
 * src/durable-objects/document-store/due-documents.ts).
 */
export const buyerChecksInD1: Job = async (env, at) => {
  if (await legacyMoved(env, "documents")) return;
  const db = createDb(env.DB);
  await enqueueBuyerChecks(env, await takeDueBuyerChecks(db, at, BUYER_CHECKS_PER_RUN));
  await enqueueBuyerDeliveries(env, await takeDueDeliveries(db, at, DELIVERIES_PER_RUN));
};

/** How long an event may wait for its fan-out before the sweep steps in. */
export const WEBHOOK_STALE_MS = 2 * 60_000;

/**
 * Webhooks are never lost between the outbox and the queue: events left undispatched (a lost fan-out
 * notice, a worker that died after the move's batch) are fanned out again (idempotent). Pending
 * deliveries past their attempt time (a lost queue message) are queued again by their document
 * store's own alarm, not here (issue 16: no walk over every store per run); the cron only makes the
 * one-time walk that arms the alarm of stores from before that change (src/webhooks/store-alarms.ts).
 */
export const redriveWebhooks: Job = async (env, at) => {
  const db = createDb(env.DB);
  const cutoff = new Date(at.getTime() - WEBHOOK_STALE_MS).toISOString();
  await notifyEvents(env, await companiesWithStaleEvents(db, cutoff));
  const step = await armStoreAlarms(env, at);
  if (step.walked > 0) log("info", "store alarms armed (one-time walk)", { ...step });
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
 * Issue 16: while DOCUMENT_STORE_MIGRATION is "on", each run copies up to 5,000 more rows of the moved
 * D1 tables into the document stores (src/operations/store-migration.ts); once everything is copied a
 * run costs one D1 read per table. Off by default: it is for the deploy that moves the writes.
 */
export const migrateDocumentStores: Job = async (env) => {
  if (env.DOCUMENT_STORE_MIGRATION !== "on") return;
  const step = await migrateToStores(env, 5_000);
  if (step.rows > 0) log("info", "store migration step", { rows: step.rows, done: step.done });
};

/**
 * Cron expression -> jobs. Must match [triggers].crons in wrangler.toml (a test checks it). Jobs only
 * sweep or fan out work to queues, so each run stays short.
 */
export const CRON_JOBS: Record<string, Job[]> = {
  "*/5 * * * *": [purgeIdempotencyKeys, purgeExpiredEvents, certificateExpiry, sweepStuckDocuments, buyerChecksInD1, redriveWebhooks, pollReceptionRegister, receptionDeadlines, receptionOverdueMails, rotateMasterKey, migrateDocumentStores],
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
