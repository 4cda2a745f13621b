import { DurableObject } from "cloudflare:workers";
import { STORE_SCHEMA, type StoreAnswer, type StoreResult, type StoreStatement } from "../../db/document-store/schema";

/**
 * A document store: one SQLite-backed instance per company and partition (a calendar month, closed
 * early at a size threshold), addressed by `idFromName("<companyId>:<ordinal>")` through
 * `src/db/document-store` (never directly). It holds the rows that grow with documents; the Worker
 * queries it with the same Drizzle code it uses for D1, through a D1-shaped client whose statements
 * arrive here over RPC.
 *
 * `query` runs one statement; `batch` runs several in one `transactionSync`, so a batch is atomic
 * exactly as a D1 batch is (a failing statement rolls back the ones before it). The object's input
 * and output gates make every call a serialisable unit: no other call interleaves inside a batch,
 * and a reply is not delivered before its writes are durable.
 */
export class DocumentStore extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    void ctx.blockConcurrencyWhile(async () => this.migrate());
  }

  /** Applies the schema entries this store has not applied yet, each in one transaction. */
  private migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT NULL)`);
    const current = (this.sql.exec<{ v: number | null }>(`SELECT max(version) AS v FROM store_schema`).one().v ?? 0) as number;
    for (let v = current; v < STORE_SCHEMA.length; v++) {
      this.ctx.storage.transactionSync(() => {
        for (const statement of STORE_SCHEMA[v]!) this.sql.exec(statement);
        this.sql.exec(`INSERT INTO store_schema (version) VALUES (?)`, v + 1);
      });
    }
  }

  /** One statement (its own implicit transaction). */
  query(statement: StoreStatement): StoreAnswer {
    return { results: [this.exec(statement)], size: this.sql.databaseSize };
  }

  /** Several statements, all or none. */
  batch(statements: StoreStatement[]): StoreAnswer {
    const results = this.ctx.storage.transactionSync(() => statements.map((s) => this.exec(s)));
    return { results, size: this.sql.databaseSize };
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
