import { DurableObject } from "cloudflare:workers";
import { type StoreAnswer, type StoreResult, type StoreStatement } from "../../../storage/db/document-store/schema";
import { StoreAlarms } from "./alarms";
import { FanoutNotice } from "./fanout-notice";
import { OverdueDeliveries } from "./overdue-deliveries";
import { OverdueReplyMails } from "./overdue-reply-mails";
import { ReceptionDeadlines } from "./reception-deadlines";
import { EventRetention } from "./event-retention";
import { StuckDocuments } from "./stuck-documents";
import { BUYER_CHECKS, BUYER_DELIVERIES, DueDocuments } from "./due-documents";
import { migrateStore } from "./migrate";

/**
 * A document store: one SQLite-backed instance per company and partition (a calendar month, closed
 * early at a size threshold), addressed by `idFromName("<companyId>:<ordinal>")` through
 * `src/storage/db/document-store` (never directly). It holds the rows that grow with documents; the Worker
 * queries it with the same Drizzle code it uses for D1, through a D1-shaped client whose statements
 * arrive here over RPC.
 *
 * `query` runs one statement; `batch` runs several in one `transactionSync`, so a batch is atomic
 * exactly as a D1 batch is (a failing statement rolls back the ones before it). The object's input
 * and output gates make every call a serialisable unit: no other call interleaves inside a batch,
 * and a reply is not delivered before its writes are durable.
 *
 * Events: a call that wrote into the store's `event_outbox` arms the alarm (due at once) before it
 * answers; the alarm sends one fan-out notice naming this store (./fanout-notice.ts) and sends it
 * again while the events wait. The events never leave the store: the fan-out makes their deliveries
 * here. A store that wakes with events not fanned out arms it too. `noticeFanout` sends it on demand.
 */
export class DocumentStore extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /**
   * The store's alarm and the work it runs (./alarms.ts): the reception deadlines (first, so the
   * events they record are announced in the same alarm), the fan-out notice, the re-drive of overdue
   * webhook deliveries, the re-drive of reply mails whose queued attempts were lost
   * (./overdue-reply-mails.ts), the re-drive of stuck documents and envelopes (./stuck-documents.ts), the
   * checks of the buyer's answer to accepted facturas and deliveries to buyers (./due-documents.ts) and the
   * retention of fanned-out events and settled deliveries (./event-retention.ts, 30 days).
   */
  private readonly alarms: StoreAlarms;
  private readonly notice: FanoutNotice;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.notice = new FanoutNotice(this.sql, env, ctx.id.name);
    this.alarms = new StoreAlarms(ctx.storage, [
      new ReceptionDeadlines(this.sql, this),
      this.notice,
      new OverdueDeliveries(this.sql, env),
      new OverdueReplyMails(this.sql, this, env),
      new StuckDocuments(this.sql, env),
      new DueDocuments(BUYER_CHECKS, this.sql, this, env),
      new DueDocuments(BUYER_DELIVERIES, this.sql, this, env),
      new EventRetention(this.sql),
    ]);
    void ctx.blockConcurrencyWhile(async () => {
      // A store just created holds no rows: none of its alarm's tasks has work to ask about.
      if (migrateStore(ctx.storage).created) return;
      await this.alarms.start();
    });
  }

  /** One statement (its own implicit transaction). */
  async query(statement: StoreStatement): Promise<StoreAnswer> {
    const result = this.exec(statement);
    if (result.rowsWritten > 0) await this.alarms.afterWrite([statement.sql]);
    return { results: [result], size: this.sql.databaseSize };
  }

  /** Several statements, all or none. */
  async batch(statements: StoreStatement[]): Promise<StoreAnswer> {
    const results = this.ctx.storage.transactionSync(() => statements.map((s) => this.exec(s)));
    const wrote = statements.filter((_, i) => results[i]!.rowsWritten > 0).map((s) => s.sql);
    if (wrote.length > 0) await this.alarms.afterWrite(wrote);
    return { results, size: this.sql.databaseSize };
  }

  /** Sends the store's fan-out notice now if it holds events not fanned out; returns whether it did (operations, tests). */
  async noticeFanout(): Promise<boolean> {
    return this.notice.sendNow();
  }

  override async alarm(): Promise<void> {
    await this.alarms.fire();
  }

  /** The schema version and size (operations and tests). */
  describe(): { version: number; size: number } {
    const version = this.sql.exec<{ v: number | null }>(`SELECT max(version) AS v FROM store_schema`).one().v ?? 0;
    return { version: version as number, size: this.sql.databaseSize };
  }

  private exec({ sql, params, rows }: StoreStatement): StoreResult {
    const cursor = this.sql.exec(sql, ...params);
    const columns = cursor.columnNames;
    const out: unknown[] = rows === "arrays" ? [...cursor.raw()] : cursor.toArray();
    const written = cursor.rowsWritten;
    let changes = 0;
    let lastRowId = 0;
    if (written > 0) {
      const meta = this.sql.exec<{ c: number; r: number }>(`SELECT changes() AS c, last_insert_rowid() AS r`).one();
      changes = meta.c;
      lastRowId = meta.r;
    }
    return { rows: out, columns, changes, lastRowId, rowsRead: cursor.rowsRead, rowsWritten: written };
  }
}
