/**
 * The buyer-response checks as a task of the store's alarm: the store's facturas whose next read of
 * the SII's register is due (`buyer_check_at`, src/domain/invoices/buyer-response.ts) are sent to
 * the issuance queue as `invoice.buyer_check` messages, each leased so that it is not sent again
 * while its message waits. Only stores with checks due do anything, when they are due.
 *
 * Partition 0 holds copies of D1's documents until the documents group switches; until then the
 * cron takes D1's checks (src/cron/index.ts), and the copies here are only leased on, never sent.
 */
import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../../db/client";
import { ordinalOfId } from "../../db/document-store";
import { StoreD1, type StoreRpc } from "../../db/document-store/client";
import { legacyMoved } from "../../db/document-store/legacy";
import * as schema from "../../db/schema";
import { BUYER_CHECKS_PER_RUN, takeDueBuyerChecks } from "../../domain/invoices/buyer-response";
import { enqueueBuyerChecks } from "../../queues/issuance";
import type { StoreAlarmTask } from "./alarms";

type ChecksEnv = Pick<Env, "DB" | "DOCUMENT_STORE" | "CONTROL_DIRECTORY" | "ISSUANCE_QUEUE">;

export class BuyerChecks implements StoreAlarmTask {
  readonly name = "buyer responses";
  private readonly db: Db;

  constructor(
    private readonly sql: SqlStorage,
    store: StoreRpc,
    private readonly env: ChecksEnv,
    private readonly limit = BUYER_CHECKS_PER_RUN,
  ) {
    this.db = drizzle(new StoreD1(() => store).asD1(), { schema });
  }

  touchedBy(sql: string): boolean {
    return sql.includes("buyer_check_at");
  }

  nextAt(): number | null {
    const [row] = this.sql.exec<{ t: string | null }>(`SELECT min(buyer_check_at) AS t FROM invoices WHERE buyer_check_at IS NOT NULL`).toArray();
    if (!row?.t) return null;
    const t = Date.parse(row.t);
    return Number.isFinite(t) ? t : null;
  }

  async run(now: number): Promise<void> {
    const due = await takeDueBuyerChecks(this.db, new Date(now), this.limit);
    if (due.length === 0) return;
    const mine = due.some((d) => ordinalOfId(d.id) === 0) && !(await legacyMoved(this.env, "documents")) ? due.filter((d) => ordinalOfId(d.id) !== 0) : due;
    await enqueueBuyerChecks(this.env, mine);
  }
}
