/**
 * The reception deadline job as a task of the store's alarm: a received document still
 * PENDING whose SII reception time is known has a deadline; 2 days before it the store records
 * `received_document.deadline_approaching`, at it the document is accepted by law with
 * `received_document.deadline_passed` (src/reception/deadline-job.ts). Each store's alarm is set at
 * the earliest moment one of its documents needs either action, so only stores with documents near a
 * deadline do anything, when they are due.
 *
 * Whether a document's approaching event was recorded is read from the store's outbox (its dedupe
 * key; the store keeps fanned-out events, and its retention never deletes the approaching event of a
 * document still PENDING, ./event-retention.ts): a document whose event is there is next due at its
 * deadline.
 */
import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../../../storage/db/client";
import { StoreD1, type StoreRpc } from "../../../storage/db/document-store/client";
import * as schema from "../../../storage/db/schema";
import { issuingCountry } from "../../../countries";
import { DEADLINE_ROWS_PER_RUN, deadlinesIn } from "../../../reception/deadline-job";
import type { StoreAlarmTask } from "./alarms";

const PENDING_WITH_DEADLINE = "response_state = 'PENDING' AND response_deadline IS NOT NULL";
const APPROACHING_RECORDED = "EXISTS (SELECT 1 FROM event_outbox o WHERE o.company_id = r.company_id AND o.dedupe_key = 'deadline_approaching:' || r.id)";

export class ReceptionDeadlines implements StoreAlarmTask {
  readonly name = "reception deadlines";
  private readonly db: Db;

  /** `store` runs the task's statements in this store (its own `query`/`batch`, so the writes bring the alarm forward like any other). */
  constructor(
    private readonly sql: SqlStorage,
    store: StoreRpc,
    private readonly rowsPerRun = DEADLINE_ROWS_PER_RUN,
  ) {
    this.db = drizzle(new StoreD1(() => store).asD1(), { schema });
  }

  touchedBy(sql: string): boolean {
    return sql.includes("received_documents");
  }

  nextAt(): number | null {
    const passed = this.first(`SELECT response_deadline AS t FROM received_documents r WHERE ${PENDING_WITH_DEADLINE} ORDER BY response_deadline LIMIT 1`);
    const approaching = this.first(`SELECT response_deadline AS t FROM received_documents r WHERE ${PENDING_WITH_DEADLINE} AND NOT ${APPROACHING_RECORDED} ORDER BY response_deadline LIMIT 1`);
    const times = [passed, approaching === null ? null : approaching - issuingCountry().responseWindow.approachingMs].filter((t): t is number => t !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  async run(now: number): Promise<void> {
    await deadlinesIn(this.db, new Date(now), { passed: this.rowsPerRun, approaching: this.rowsPerRun });
  }

  private first(query: string): number | null {
    const [row] = this.sql.exec<{ t: string }>(query).toArray();
    if (!row) return null;
    const t = Date.parse(row.t);
    return Number.isFinite(t) ? t : null;
  }
}
