/**
 * Counting wrappers around the Worker's bindings, for the capacity benchmark only (nothing in src
 * uses this). Every call the real code makes through the wrapped `Env` is added to the meter's
 * current step:
 * - D1: the real D1Database class built over a counting fetcher (the binding's own transport), so
 *   every statement's result `meta` (rows_read, rows_written, size_after) is read exactly, whatever
 *   method the caller used (all, run, first, raw, batch);
 * - R2: reads (get, head: class B), writes (put, list: class A), deletes, bytes written and read;
 * - Durable Objects: every RPC call made on a stub (folio allocator, control directory); the document stores' calls are also
 *   counted apart with what each answer reports (statements, rows read and written) and the
 *   store's size growth (its database size after the call, against the size after the previous call
 *   to the same store: pages, so physical growth);
 * - Queues: messages sent (kept, so the bench hands them to the real consumers itself);
 * - SEND_EMAIL, and outbound HTTP (the SII and webhook receivers) through `external`.
 * Time: `waitMs` is the union of the intervals during which at least one binding or outbound call
 * was in flight; wall time minus that is the Worker's own time (≈ its CPU time: the bench runs one
 * document at a time, so little of the Worker's work overlaps its waits).
 */

import { AsyncLocalStorage } from "node:async_hooks";

export interface Counts {
  d1RoundTrips: number;
  d1Statements: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  r2ClassA: number;
  r2ClassB: number;
  r2BytesWritten: number;
  r2BytesRead: number;
  /** Calls to the other Durable Objects (the folio allocator). */
  doCalls: number;
  /** Calls to the document stores (RPC query, batch, relayOutbox…), statements they ran, rows read and written. */
  storeCalls: number;
  storeStatements: number;
  storeRowsRead: number;
  storeRowsWritten: number;
  /** Growth of the stores' database size (page granularity) over the step. */
  storeBytesGrown: number;
  queueMessages: number;
  /** Of those, sent to the webhook queue (the rest went to the issuance queue). */
  webhookQueueMessages: number;
  emails: number;
  outboundCalls: number;
  wallMs: number;
  waitMs: number;
}

export const zero = (): Counts => ({ d1RoundTrips: 0, d1Statements: 0, d1RowsRead: 0, d1RowsWritten: 0, r2ClassA: 0, r2ClassB: 0, r2BytesWritten: 0, r2BytesRead: 0, doCalls: 0, storeCalls: 0, storeStatements: 0, storeRowsRead: 0, storeRowsWritten: 0, storeBytesGrown: 0, queueMessages: 0, webhookQueueMessages: 0, emails: 0, outboundCalls: 0, wallMs: 0, waitMs: 0 });

export function add(a: Counts, b: Counts): Counts {
  const out = zero();
  for (const k of Object.keys(out) as (keyof Counts)[]) out[k] = a[k] + b[k];
  return out;
}

export class Meter {
  private current: Counts | null = null;
  private inflight = 0;
  /** What is in flight (binding and method), to name it when a step ends with calls still running. */
  private readonly running = new Map<number, string>();
  private nextCall = 0;
  private waitStart = 0;
  /** Queue messages sent through the wrapped producers, per binding, until taken. */
  readonly sent = new Map<string, unknown[]>();
  /** Each document store's size after the last call seen (by object id). */
  private readonly storeSizes = new Map<string, number>();
  /** Outbound calls of the current step (method and URL), to name them when a check fails. */
  outbound: string[] = [];
  /** The current step's D1 round trips, each as the SQL text of its statements (a batch's joined by " ⨾ "). */
  d1Sql: string[] = [];

  /** Runs `fn` as one step; returns its result and what it cost. */
  async step<T>(fn: () => Promise<T>): Promise<{ value: T; counts: Counts }> {
    if (this.current) throw new Error("steps do not nest");
    const counts = zero();
    this.current = counts;
    this.outbound = [];
    this.d1Sql = [];
    const t0 = performance.now();
    try {
      const value = await this.context.run(counts, fn);
      return { value, counts };
    } finally {
      counts.wallMs = performance.now() - t0;
      this.current = null;
      if (this.inflight !== 0) throw new Error(`${this.inflight} binding calls still in flight after the step: ${[...this.running.values()].join(", ")}`);
    }
  }

  /** The step a call was made in: work the runtime runs on its own (a queue consumer fed by a store's alarm) has none. */
  private readonly context = new AsyncLocalStorage<Counts>();

  count(f: (c: Counts) => void) {
    if (this.current) f(this.current);
  }

  /** Awaits an I/O call, adding its time to the step's waiting time (overlapping calls once). */
  async io<T>(call: () => Promise<T>, label = "?"): Promise<T> {
    if (this.inflight++ === 0) this.waitStart = performance.now();
    const n = this.nextCall++;
    this.running.set(n, label);
    try {
      return await call();
    } finally {
      this.running.delete(n);
      if (--this.inflight === 0) this.count((c) => (c.waitMs += performance.now() - this.waitStart));
    }
  }

  /** Outbound HTTP (the tax authority, webhook receivers): counted and timed as I/O. */
  external(fetcher: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
    return (req) => {
      this.count((c) => c.outboundCalls++);
      if (this.current) this.outbound.push(`${req.method} ${req.url}`);
      return this.io(() => fetcher(req), `fetch ${req.method} ${req.url}`);
    };
  }

  /**
   * `external` for the global fetch, which the whole isolate shares: only calls made inside the
   * current step are counted. The document stores run in this isolate with the real bindings, so
   * a store's alarm can queue webhook deliveries that the runtime's own consumer sends while a
   * step runs (48 of them once, into the batched run): those are not the step's work.
   */
  /** Global fetches made outside any step's work (not counted), to report. */
  readonly outsideSteps: string[] = [];

  externalInStep(fetcher: (req: Request) => Promise<Response>): (req: Request) => Promise<Response> {
    const counted = this.external(fetcher);
    return (req) => {
      if (this.current && this.context.getStore() === this.current) return counted(req);
      this.outsideSteps.push(`${req.method} ${req.url}`);
      return fetcher(req);
    };
  }

  take(queue: string): unknown[] {
    const msgs = this.sent.get(queue) ?? [];
    this.sent.set(queue, []);
    return msgs;
  }

  /** `env` with every binding the service uses wrapped. */
  wrap(env: Env): Env {
    return {
      ...env,
      DB: this.d1(env.DB),
      FILES: this.r2(env.FILES),
      FOLIO_ALLOCATOR: this.durableObjects(env.FOLIO_ALLOCATOR),
      DOCUMENT_STORE: this.durableObjects(env.DOCUMENT_STORE, (key, answer) => this.storeAnswer(key, answer)),
      // The control directory: its calls are counted with the folio allocator's (doCalls);
      // the D1 reads an object makes to fill an entry are its own (the scale bench counts them).
      CONTROL_DIRECTORY: this.durableObjects(env.CONTROL_DIRECTORY),
      ISSUANCE_QUEUE: this.queue("ISSUANCE_QUEUE"),
      WEBHOOK_QUEUE: this.queue("WEBHOOK_QUEUE"),
      SEND_EMAIL: { send: async () => { this.count((c) => c.emails++); } } as unknown as SendEmail,
    };
  }

  private d1(db: D1Database): D1Database {
    const inner = (db as unknown as { fetcher: Fetcher }).fetcher;
    const Ctor = db.constructor as new (fetcher: unknown) => D1Database;
    const fetcher = {
      fetch: async (input: RequestInfo, init?: RequestInit) => {
        // The harness's own parse of the answer is timed as waiting, not as the Worker's work.
        const [res, parsed] = await this.io(async () => {
          const r = await inner.fetch(input, init);
          return [r, (await r.clone().json().catch(() => null)) as unknown] as const;
        }, `D1 ${typeof init?.body === "string" ? init.body.slice(0, 120) : ""}`);
        const results = (Array.isArray(parsed) ? parsed : [parsed]) as { meta?: { rows_read?: number; rows_written?: number } }[];
        if (this.current) this.d1Sql.push(sqlOf(init?.body));
        this.count((c) => {
          c.d1RoundTrips++;
          for (const r of results) {
            if (!r?.meta) continue;
            c.d1Statements++;
            c.d1RowsRead += r.meta.rows_read ?? 0;
            c.d1RowsWritten += r.meta.rows_written ?? 0;
          }
        });
        return res;
      },
      connect: () => {
        throw new Error("not used");
      },
    };
    return new Ctor(fetcher);
  }

  private r2(bucket: R2Bucket): R2Bucket {
    const size = (o: { size?: number } | null) => o?.size ?? 0;
    return {
      put: async (...args: Parameters<R2Bucket["put"]>) => {
        const o = await this.io(() => bucket.put(...args), `R2 put ${args[0]}`);
        this.count((c) => { c.r2ClassA++; c.r2BytesWritten += size(o); });
        return o;
      },
      get: async (...args: Parameters<R2Bucket["get"]>) => {
        const o = await this.io(() => bucket.get(...args), `R2 get ${args[0]}`);
        this.count((c) => { c.r2ClassB++; c.r2BytesRead += size(o); });
        return o;
      },
      head: async (key: string) => {
        const o = await this.io(() => bucket.head(key), `R2 head ${key}`);
        this.count((c) => c.r2ClassB++);
        return o;
      },
      list: async (opts?: R2ListOptions) => {
        const o = await this.io(() => bucket.list(opts), "R2 list");
        this.count((c) => c.r2ClassA++);
        return o;
      },
      delete: (keys: string | string[]) => this.io(() => bucket.delete(keys), "R2 delete"),
    } as unknown as R2Bucket;
  }

  /** What a document store's answer reports: statements, rows, and its size against the last one seen. */
  private storeAnswer(key: string, answer: unknown) {
    const a = answer as { results?: { rowsRead: number; rowsWritten: number }[]; size?: number } | null;
    this.count((c) => {
      c.storeCalls++;
      for (const r of a?.results ?? []) {
        c.storeStatements++;
        c.storeRowsRead += r.rowsRead;
        c.storeRowsWritten += r.rowsWritten;
      }
    });
    if (typeof a?.size !== "number") return;
    const before = this.storeSizes.get(key);
    if (before !== undefined) this.count((c) => (c.storeBytesGrown += a.size! - before));
    this.storeSizes.set(key, a.size);
  }

  private durableObjects<T extends DurableObjectNamespace<any>>(ns: T, onAnswer?: (key: string, answer: unknown) => void): T {
    const meter = this;
    const stub = (s: object, key: string) =>
      new Proxy(s, {
        get(target, prop) {
          const v = Reflect.get(target, prop);
          if (typeof v !== "function" || prop === "then" || typeof prop === "symbol") return v;
          return (...args: unknown[]) => {
            if (!onAnswer) meter.count((c) => c.doCalls++); // a store's calls are counted as storeCalls
            // Called as a method of the stub (an RPC property has no Function.prototype.apply).
            const called = meter.io(() => (target as Record<string, (...a: unknown[]) => Promise<unknown>>)[prop]!(...args), `DO ${String(prop)} ${JSON.stringify(args).slice(0, 120)}`);
            return onAnswer ? called.then((answer) => (onAnswer(key, answer), answer)) : called;
          };
        },
      });
    return new Proxy(ns, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (prop === "get" || prop === "getByName") return (...args: unknown[]) => stub((target as unknown as Record<string, (...a: unknown[]) => object>)[prop]!(...args), String(args[0]));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }

  private queue(name: string): Queue {
    const keep = (bodies: unknown[]) => {
      this.count((c) => {
        c.queueMessages += bodies.length;
        if (name === "WEBHOOK_QUEUE") c.webhookQueueMessages += bodies.length;
      });
      this.sent.set(name, [...(this.sent.get(name) ?? []), ...bodies]);
    };
    return {
      send: async (body: unknown) => keep([body]),
      sendBatch: async (msgs: Iterable<MessageSendRequest>) => keep([...msgs].map((m) => m.body)),
    } as unknown as Queue;
  }
}

/** The SQL text of a D1 request body (`{sql}` or, for a batch, `[{sql}, …]`), statements joined by " ⨾ ". */
function sqlOf(body: unknown): string {
  if (typeof body !== "string") return "?";
  try {
    const parsed = JSON.parse(body) as { sql?: string } | { sql?: string }[];
    return (Array.isArray(parsed) ? parsed : [parsed]).map((q) => (q.sql ?? "?").replace(/\s+/g, " ").trim()).join(" ⨾ ");
  } catch {
    return body.slice(0, 200);
  }
}

/** A queue batch of `bodies`, as the runtime hands it to a consumer; records acks and retries. */
export function batchOf(queue: string, bodies: unknown[]): MessageBatch<unknown> & { retried: number } {
  const out = {
    queue,
    retried: 0,
    messages: bodies.map((body, i) => ({
      id: `m${i}`,
      timestamp: new Date(),
      body,
      attempts: 1,
      ack() {},
      retry() {
        out.retried++;
      },
    })),
    ackAll() {},
    retryAll() {
      out.retried += bodies.length;
    },
  };
  return out as unknown as MessageBatch<unknown> & { retried: number };
}
