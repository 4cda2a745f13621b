/**
 * Dead-lettered queue messages: the dead-letter queues' consumers record each message here (our
 * bodies carry ids only; an Email Sending event is kept as the mail service sent it), the company's
 * OWNER and ADMIN keys list them and send one back to its queue.
 * Recording is idempotent per queue message id, so a redelivered dead letter is recorded once.
 */
import { and, count, desc, eq, type SQL } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { DEAD_LETTER_QUEUES, deadLetters } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { newId } from "../lib/ids";
import { describeError, log } from "../lib/log";
import { isBoundQueue } from "./health";

export type DeadLetterRow = typeof deadLetters.$inferSelect;
export type DeadLetterQueue = (typeof DEAD_LETTER_QUEUES)[number];

/** The company a message of ours is about: its body's `company_id`. */
const companyIdOf = (body: unknown): string | null => {
  const companyId = (body as { company_id?: unknown } | null)?.company_id;
  return typeof companyId === "string" ? companyId : null;
};

/**
 * Records every message of a dead-letter batch (the caller acks them afterwards), listed to the
 * company `companyOf` finds for its body (by default its `company_id`); one it finds none for is
 * recorded unlisted, and logged.
 */
export async function recordDeadLetters(db: Db, queue: DeadLetterQueue, messages: readonly Message<unknown>[], now = new Date(), companyOf: (body: unknown) => Promise<string | null> | string | null = companyIdOf): Promise<void> {
  if (messages.length === 0) return;
  const companies = await Promise.all(messages.map((m) => companyOf(m.body)));
  const rows = messages.map((m, i) => {
    const companyId = companies[i];
    if (typeof companyId !== "string") log("error", "dead letter without a company: recorded unlisted", { queue, message_id: m.id });
    return {
      id: newId("dlq"),
      queue,
      messageId: m.id,
      companyId: typeof companyId === "string" ? companyId : "",
      body: JSON.stringify(m.body),
      attempts: m.attempts,
      createdAt: now.toISOString(),
    };
  });
  await db.insert(deadLetters).values(rows).onConflictDoNothing();
}

export interface DeadLetterFilters {
  queue?: DeadLetterQueue;
  status?: DeadLetterRow["status"];
}

export async function listDeadLetters(db: Db, companyId: string, f: DeadLetterFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(deadLetters.companyId, companyId)];
  if (f.queue) where.push(eq(deadLetters.queue, f.queue));
  if (f.status) where.push(eq(deadLetters.status, f.status));
  const condition = and(...where);
  const [rows, totals] = await db.batch([
    db.select().from(deadLetters).where(condition).orderBy(desc(deadLetters.createdAt), desc(deadLetters.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(deadLetters).where(condition),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}

/**
 * Sends a dead letter back to the queue it died on. Claimed first (DEAD -> REDRIVEN), so two calls
 * send it once; if the send fails the claim is undone. Every consumer step is idempotent, so a
 * re-driven message that finds its work done does nothing.
 */
export async function redriveDeadLetter(db: Db, env: Env, companyId: string, id: string, now = new Date()): Promise<DeadLetterRow> {
  const row = await db.query.deadLetters.findFirst({ where: and(eq(deadLetters.id, id), eq(deadLetters.companyId, companyId)) });
  if (!row) throw new AppError("DEAD_LETTER_NOT_FOUND", `Dead letter ${id} does not exist for this company.`);
  const queue = boundQueueOf(env, row.queue);
  const [claimed] = await db
    .update(deadLetters)
    .set({ status: "REDRIVEN", redrivenAt: now.toISOString() })
    .where(and(eq(deadLetters.id, id), eq(deadLetters.status, "DEAD")))
    .returning();
  if (!claimed) throw new AppError("DEAD_LETTER_ALREADY_REDRIVEN", `Dead letter ${id} was already sent back to its queue at ${row.redrivenAt}.`);
  try {
    await queue.send(JSON.parse(row.body));
  } catch (e) {
    await db.update(deadLetters).set({ status: "DEAD", redrivenAt: null }).where(eq(deadLetters.id, id));
    log("error", "dead letter not re-driven: the queue refused it", { dead_letter_id: id, queue: row.queue, company_id: companyId, error: describeError(e) });
    throw new AppError("DEAD_LETTER_QUEUE_UNAVAILABLE", `Dead letter ${id} could not be sent back to the ${row.queue} queue, which refused it; it stays DEAD. Try again later.`);
  }
  log("info", "dead letter re-driven", { dead_letter_id: id, queue: row.queue, company_id: companyId });
  return claimed;
}

/** The queue a dead letter died on, to go back to; a deployment without its producer binding says so (503), before the letter is claimed. */
function boundQueueOf(env: Env, queue: DeadLetterQueue): Queue {
  const q: unknown = { issuance: env.ISSUANCE_QUEUE, webhooks: env.WEBHOOK_QUEUE, email_events: env.EMAIL_EVENTS_QUEUE }[queue];
  if (!isBoundQueue(q)) throw new AppError("DEAD_LETTER_QUEUE_UNAVAILABLE", `This deployment has no producer binding for the ${queue} queue (wrangler.toml), so its dead letters cannot be sent back; they stay DEAD.`);
  return q;
}
