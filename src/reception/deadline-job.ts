/**
 * The deadline job of one document store, from its alarm: passed -> accepted by law + deadline_passed; 2 days left ->
 * deadline_approaching. Bounded by a budget of rows per run of each kind.
 */
import { and, eq, gt, lte } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { receivedDocuments } from "../storage/db/schema";
import { chunked } from "../lib/chunked";
import { issuingCountry } from "../countries";
import { receptionEvent, receptionEventIf } from "./stores";
import type { ReceivedRow } from "./view";

export const DEADLINE_ROWS_PER_RUN = 300;

export type Budget = { passed: number; approaching: number };

/**
 * One database's passed and approaching deadlines: each passed one is marked accepted by law with its
 * event in one batch (only while still PENDING, and the event only if that UPDATE applied: a repeat
 * records nothing, its event has the same dedupe key); approaching ones get their event once (dedupe key). Takes at most `budget` of each;
 * returns how many of each it found.
 */
export async function deadlinesIn(db: Db, at: Date, budget: Budget): Promise<Budget> {
  const now = at.toISOString();
  const soon = new Date(at.getTime() + issuingCountry().responseWindow.approachingMs).toISOString();
  const pending = eq(receivedDocuments.responseState, "PENDING");
  const [passed, approaching] = await Promise.all([
    budget.passed > 0 ? db.select().from(receivedDocuments).where(and(pending, lte(receivedDocuments.responseDeadline, now))).limit(budget.passed) : [],
    budget.approaching > 0 ? db.select().from(receivedDocuments).where(and(pending, gt(receivedDocuments.responseDeadline, now), lte(receivedDocuments.responseDeadline, soon))).limit(budget.approaching) : [],
  ]);
  const statements = [
    ...passed.flatMap((row) => {
      const next = acceptedByLaw(row, now);
      return [
        db.update(receivedDocuments).set({ responseState: next.responseState, responses: next.responses, updatedAt: now }).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), pending)),
        // Only if the UPDATE applied: an answer recorded meanwhile leaves the document as it is, with no event.
        receptionEventIf(db, { row: next, type: "received_document.deadline_passed", key: `deadline_passed:${row.id}` }, eq(receivedDocuments.responses, next.responses)),
      ];
    }),
    ...approaching.map((row) => receptionEvent(db, { row, type: "received_document.deadline_approaching", key: `deadline_approaching:${row.id}` })),
  ];
  for (const chunk of chunked(statements, 100)) await db.batch(chunk as [(typeof chunk)[number], ...typeof chunk]);
  return { passed: passed.length, approaching: approaching.length };
}

function acceptedByLaw(row: ReceivedRow, now: string): ReceivedRow {
  const responses = [...JSON.parse(row.responses), { action: "ACCEPTED_BY_LAW", reason: "8 días sin respuesta (Ley 19.983)", at: now, sii_code: null, sii_message: null, files: [], reply_to: null }];
  return { ...row, responseState: "ACCEPTED_BY_LAW", responses: JSON.stringify(responses), updatedAt: now };
}
