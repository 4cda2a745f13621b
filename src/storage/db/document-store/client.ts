/**
 * A D1-shaped client over a document store's RPC, so that `drizzle-orm/d1` (and so every query in
 * this code base, typed `Db`) runs unchanged against a store: `prepare(sql).bind(...).all/run/raw/
 * first` become one `query` call, `batch([...])` one atomic `batch` call. Only what the Drizzle D1
 * driver uses is implemented (`exec`, `dump` and sessions are not).
 *
 * Chosen over `drizzle-orm/sqlite-proxy` because the handle it gives has exactly the type of the D1
 * one: the domain functions that take a `Db` need no second signature.
 */
import type { StoreAnswer, StoreStatement } from "./schema";

/** The two RPC methods of a store, plus a hook that sees the store's size after every call. */
export interface StoreRpc {
  query(statement: StoreStatement): Promise<StoreAnswer>;
  batch(statements: StoreStatement[]): Promise<StoreAnswer>;
}

type Row = Record<string, unknown>;

function d1Result(answer: StoreAnswer["results"][number]): D1Result<Row> {
  return {
    success: true,
    results: answer.rows as Row[],
    meta: {
      duration: 0,
      size_after: 0,
      rows_read: answer.rowsRead,
      rows_written: answer.rowsWritten,
      last_row_id: answer.lastRowId,
      changed_db: answer.rowsWritten > 0,
      changes: answer.changes,
    },
  };
}

class StorePreparedStatement {
  constructor(
    private readonly client: StoreD1,
    readonly sql: string,
    readonly params: unknown[] = [],
  ) {}

  bind(...params: unknown[]): StorePreparedStatement {
    return new StorePreparedStatement(this.client, this.sql, params);
  }

  statement(rows: StoreStatement["rows"]): StoreStatement {
    return { sql: this.sql, params: this.params, rows };
  }

  async all(): Promise<D1Result<Row>> {
    return d1Result((await this.client.send(this.statement("objects"))).results[0]!);
  }

  run(): Promise<D1Result<Row>> {
    return this.all();
  }

  async first(column?: string): Promise<unknown> {
    const row = (await this.all()).results[0];
    if (!row) return null;
    return column === undefined ? row : row[column];
  }

  async raw(options?: { columnNames?: boolean }): Promise<unknown[][]> {
    const result = (await this.client.send(this.statement("arrays"))).results[0]!;
    const rows = result.rows as unknown[][];
    return options?.columnNames ? [result.columns, ...rows] : rows;
  }
}

/**
 * `stub` makes the store's stub for each call: a stub belongs to the request that made it (workerd
 * refuses I/O on it from another request), while this client lives as long as the isolate.
 */
export class StoreD1 {
  constructor(
    private readonly stub: () => StoreRpc,
    private readonly onSize: (size: number) => Promise<void> | void = () => {},
  ) {}

  prepare(sql: string): StorePreparedStatement {
    return new StorePreparedStatement(this, sql);
  }

  async batch(statements: StorePreparedStatement[]): Promise<D1Result<Row>[]> {
    const answer = await this.stub().batch(statements.map((s) => s.statement("objects")));
    await this.onSize(answer.size);
    return answer.results.map(d1Result);
  }

  /** @internal one statement; the size hook runs after it. */
  async send(statement: StoreStatement): Promise<StoreAnswer> {
    const answer = await this.stub().query(statement);
    await this.onSize(answer.size);
    return answer;
  }

  /** This client as the D1 binding type the Drizzle D1 driver takes (it uses only the methods above). */
  asD1(): D1Database {
    return this as unknown as D1Database;
  }
}
