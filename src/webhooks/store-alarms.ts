/**
 * Overdue webhook deliveries, reception deadlines and stuck documents and envelopes are handled by
 * each document store's own alarm (src/durable-objects/document-store/overdue-deliveries.ts,
 * reception-deadlines.ts, stuck-documents.ts), so the cron no longer asks every store for them. A
 * store arms its alarm when it starts and after every write to its deliveries, received documents,
 * documents or envelopes, so stores written or woken after this release are covered by themselves;
 * what is left is a store holding such work from before this release (a delivery or a document whose
 * queue message was lost, a received document whose deadline comes) that nothing wakes again. For
 * those the cron makes one walk, once: every partition that can still hold any of it (open, or closed
 * within 45 days: the reception window, longer than the retry one and than the week the cron's
 * stuck-document sweep used to cover) is asked to arm its alarm, which sets it at the earliest time
 * any of its tasks is due; ARM_PER_RUN per run, resuming from a cursor in D1 (`cron_cursors`,
 * migration 0017); once the walk is finished a run costs one D1 read.
 */
import { and, asc, eq, gt, gte, isNull, or } from "drizzle-orm";
import { createDb } from "../db/client";
import { storeName } from "../db/document-store";
import { cronCursors, documentPartitions } from "../db/schema";
import { chunked } from "../lib/chunked";
import { RECEPTION_CLOSED_PARTITIONS_MS } from "../reception/stores";

/** How long after its close a partition may still hold a pending delivery: the retry schedule (about 4 days) and a margin. */
export const DELIVERY_RETRY_WINDOW_MS = 7 * 86_400_000;
/** The walk's window: the longer of the deliveries' and the reception deadlines' (a PENDING received document, 45 days). */
export const ARM_WINDOW_MS = Math.max(DELIVERY_RETRY_WINDOW_MS, RECEPTION_CLOSED_PARTITIONS_MS);
export const ARM_PER_RUN = 500;
const ARM_PARALLEL = 20;
const JOB = "store_alarms";

export interface ArmStep {
  armed: number;
  walked: number;
  finished: boolean;
}

/** One run of the walk: the next ARM_PER_RUN partitions after the cursor are asked to arm their alarm. */
export async function armStoreAlarms(env: Env, now = new Date(), limit = ARM_PER_RUN): Promise<ArmStep> {
  const db = createDb(env.DB);
  let [state] = await db.select().from(cronCursors).where(eq(cronCursors.job, JOB));
  if (state?.finishedAt) return { armed: 0, walked: 0, finished: true };
  if (!state) {
    await db.insert(cronCursors).values({ job: JOB }).onConflictDoNothing();
    [state] = await db.select().from(cronCursors).where(eq(cronCursors.job, JOB));
  }
  const page = await nextPartitions(env, state!.cursor, now, limit);
  let armed = 0;
  for (const group of chunked(page, ARM_PARALLEL)) {
    const set = await Promise.all(group.map((p) => env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(p.companyId, p.ordinal))).armAlarm()));
    armed += set.filter((at) => at !== null).length;
  }
  const last = page.at(-1);
  const finished = page.length < limit;
  await db
    .update(cronCursors)
    .set({ cursor: last ? cursorOf(last) : state!.cursor, done: state!.done + page.length, finishedAt: finished ? now.toISOString() : null })
    .where(eq(cronCursors.job, JOB));
  return { armed, walked: page.length, finished };
}

const cursorOf = (p: { companyId: string; ordinal: number }) => `${p.companyId}|${p.ordinal}`;

/** Partitions after the cursor (company, then ordinal) that may hold pending deliveries or received documents with open deadlines. */
async function nextPartitions(env: Env, cursor: string, now: Date, limit: number) {
  const since = new Date(now.getTime() - ARM_WINDOW_MS).toISOString();
  const [company = "", ordinal = "-1"] = cursor === "" ? [] : cursor.split("|");
  const after = or(gt(documentPartitions.companyId, company), and(eq(documentPartitions.companyId, company), gt(documentPartitions.ordinal, Number(ordinal))));
  const live = or(isNull(documentPartitions.closedAt), gte(documentPartitions.closedAt, since));
  return createDb(env.DB)
    .select({ companyId: documentPartitions.companyId, ordinal: documentPartitions.ordinal })
    .from(documentPartitions)
    .where(and(after, live))
    .orderBy(asc(documentPartitions.companyId), asc(documentPartitions.ordinal))
    .limit(limit);
}
