/**
 * Follow-up work on accepted documents as tasks of the store's alarm: the documents whose next step
 * is due by a column of theirs are sent to the issuance queue, each leased so that it is not sent
 * again while its message waits. Only stores with work due do anything, when it is due.
 * - buyer responses: the next read of the SII's register (`buyer_check_at`,
 *   src/invoices/buyer-response.ts), as `invoice.buyer_check` messages;
 * - buyer deliveries: the next attempt to mail the document to its buyer (`buyer_delivery_at`,
 *   src/invoices/buyer-delivery.ts), as `invoice.buyer_delivery` messages.
 */
import { drizzle } from "drizzle-orm/d1";
import type { Db } from "../../../storage/db/client";
import { StoreD1, type StoreRpc } from "../../../storage/db/document-store/client";
import * as schema from "../../../storage/db/schema";
import { DELIVERIES_PER_RUN, takeDueDeliveries } from "../../../invoices/buyer-delivery";
import { BUYER_CHECKS_PER_RUN, takeDueBuyerChecks } from "../../../invoices/buyer-response";
import { enqueueBuyerChecks, enqueueBuyerDeliveries } from "../../../invoices/pipeline/messages";
import type { StoreAlarmTask } from "./alarms";

type DueEnv = Pick<Env, "DB" | "DOCUMENT_STORE" | "CONTROL_DIRECTORY" | "ISSUANCE_QUEUE">;
type Due = { id: string; companyId: string; lease?: string }[];

export interface DueWork {
  name: string;
  /** The invoices column that holds when the work is next due (ISO 8601), null for none. */
  column: "buyer_check_at" | "buyer_delivery_at";
  /** Takes (and leases) what is due at `at`, at most `limit`. */
  take: (db: Db, at: Date, limit: number) => Promise<Due>;
  enqueue: (env: DueEnv, due: Due) => Promise<void>;
  limit: number;
}

export const BUYER_CHECKS: DueWork = { name: "buyer responses", column: "buyer_check_at", take: takeDueBuyerChecks, enqueue: enqueueBuyerChecks, limit: BUYER_CHECKS_PER_RUN };
export const BUYER_DELIVERIES: DueWork = { name: "buyer deliveries", column: "buyer_delivery_at", take: takeDueDeliveries, enqueue: enqueueBuyerDeliveries, limit: DELIVERIES_PER_RUN };

export class DueDocuments implements StoreAlarmTask {
  readonly name: string;
  private readonly db: Db;

  constructor(
    private readonly work: DueWork,
    private readonly sql: SqlStorage,
    store: StoreRpc,
    private readonly env: DueEnv,
    private readonly limit = work.limit,
  ) {
    this.name = work.name;
    this.db = drizzle(new StoreD1(() => store).asD1(), { schema });
  }

  touchedBy(sql: string): boolean {
    return sql.includes(this.work.column);
  }

  nextAt(): number | null {
    const [row] = this.sql.exec<{ t: string | null }>(`SELECT min(${this.work.column}) AS t FROM invoices WHERE ${this.work.column} IS NOT NULL`).toArray();
    if (!row?.t) return null;
    const t = Date.parse(row.t);
    return Number.isFinite(t) ? t : null;
  }

  async run(now: number): Promise<void> {
    const due = await this.work.take(this.db, new Date(now), this.limit);
    if (due.length === 0) return;
    await this.work.enqueue(this.env, due);
  }
}
