/**
 * The sweep of reply mails whose chain of queued attempts broke (src/reception/overdue-mails.ts) as
 * a task of the store's alarm: set at the earliest `mail_due_at` of the store's received documents
 * plus the margin, so only stores with mails in flight do anything, when one may be overdue.
 */
import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../../../storage/db/client";
import { StoreD1, type StoreRpc } from "../../../storage/db/document-store/client";
import * as schema from "../../../storage/db/schema";
import { overdueMailsIn, REPLY_MAIL_STALE_MS } from "../../../reception/overdue-mails";
import { MAIL_SETTLED } from "../../../reception/reply-mail";
import type { StoreAlarmTask } from "./alarms";

/** The soonest the alarm comes back for this task: a sweep whose queue refused comes back then, not at once. */
const RETRY_MS = 5 * 60_000;

export class OverdueReplyMails implements StoreAlarmTask {
  readonly name = "overdue reply mails";
  private readonly db: Db;

  constructor(
    private readonly sql: SqlStorage,
    store: StoreRpc,
    private readonly env: Env,
  ) {
    this.db = drizzle(new StoreD1(() => store).asD1(), { schema });
  }

  touchedBy(sql: string): boolean {
    return sql.includes("mail_due_at");
  }

  /** A mail settled: the document's mail_due_at may have gone, and the alarm it set with it. */
  relievedBy(sql: string): boolean {
    return sql.includes(MAIL_SETTLED);
  }

  nextAt(now: number): number | null {
    const [row] = this.sql.exec<{ t: string | null }>("SELECT min(mail_due_at) AS t FROM received_documents WHERE mail_due_at IS NOT NULL").toArray();
    if (!row?.t) return null;
    const due = Date.parse(row.t) + REPLY_MAIL_STALE_MS;
    return Number.isFinite(due) ? Math.max(due, now + RETRY_MS) : now + RETRY_MS;
  }

  async run(now: number): Promise<void> {
    await overdueMailsIn(this.db, this.env, new Date(now));
  }
}
