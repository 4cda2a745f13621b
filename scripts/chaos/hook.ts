/**
 * The fault hook of the chaos run. TEST-ONLY: only the chaos run's entry (./worker.ts, the entry of
 * `npm run chaos` and of the tests) imports it; the production entry (src/index.ts) never does
 * (test/chaos/production-bundle.node.test.ts greps the bundle for CHAOS_HOOK_COMPILED_IN).
 *
 * A fault plan, set over `POST /__chaos/plan` (local environments only), makes the bindings of the
 * Worker's invocations fail at random, seeded: D1 and R2 calls throw (before the call, or after it
 * succeeded: "the answer was lost"), so do calls on the company's document stores and the control
 * directory (the Durable Objects that hold documents and control data: kind
 * "store"), queue sends are duplicated or delayed (re-ordered), a Durable Object (folio allocator,
 * document store, control directory) resets (`ctx.abort`) before a call, and a queue invocation
 * "dies" at a binding call: from
 * there every binding call throws and no ack or retry counts, so the runtime redelivers whatever
 * was not settled before, exactly as after a crash. Each kind has a budget; nothing is injected
 * after `until`. `GET /__chaos/plan` answers the counts and the time of the last fault.
 */
import { seeded } from "../../src/lib/seeded";

export const CHAOS_MARKER = "CHAOS_HOOK_COMPILED_IN";

export interface FaultPlan {
  seed: number;
  /** Epoch ms after which nothing is injected. */
  until: number;
  /** Probabilities per call. */
  d1: number;
  r2: number;
  /** A call on a document store or a control directory object (DOCUMENT_STORE, CONTROL_DIRECTORY). */
  store: number;
  duplicate: number;
  reorder: number;
  kill: number;
  do_restart: number;
  /** Share of D1/R2/store faults raised after the call succeeded (the write happened, the answer was lost). */
  after: number;
  /** Invocation kinds where D1/R2/store faults apply (queue sends and DO restarts apply everywhere). */
  scopes: Kind[];
  /** At most this many faults of each kind (0 or absent: unlimited). */
  budget?: Partial<Record<FaultKind, number>>;
  /** The first this many calls of a kind are never failed (tests aim a fault at a later call). */
  skip?: Partial<Record<FaultKind, number>>;
  /** The bindings "store" faults apply to (default both). */
  objects?: StoreBinding[];
  /** D1 faults apply only to calls whose SQL (a statement of a batch) contains this, case-insensitively (tests aim at one write). */
  sql?: string;
}

type StoreBinding = "DOCUMENT_STORE" | "CONTROL_DIRECTORY";

type Kind = "fetch" | "queue" | "scheduled";
type FaultKind = "d1" | "r2" | "store" | "duplicate" | "reorder" | "kill" | "do_restart";
/** The binding calls that can fail (before the call, or after it succeeded). */
type CallKind = "d1" | "r2" | "store";

interface State {
  plan: FaultPlan | null;
  random: () => number;
  injected: Record<FaultKind, number>;
  /** Calls of each kind rolled for so far (for `skip`). */
  rolled: Record<FaultKind, number>;
  lastFaultAt: number | null;
}

const state: State = { plan: null, random: Math.random, injected: zero(), rolled: zero(), lastFaultAt: null };

function zero(): Record<FaultKind, number> {
  return { d1: 0, r2: 0, store: 0, duplicate: 0, reorder: 0, kill: 0, do_restart: 0 };
}

export { seeded }; // the driver (scripts/chaos) takes it from here

export class ChaosFault extends Error {
  constructor(what: string) {
    super(`chaos: injected ${what}`);
  }
}

/** A fault as the platform marks a call that failed in its infrastructure (never reached the object, the connection dropped, the object restarted). */
const retryableFault = (what: string, cause?: unknown) => Object.assign(new ChaosFault(what), { retryable: true }, cause === undefined ? {} : { cause });

/** The reason a chaos restart aborts an object with, which its calls in flight fail with. */
const RESTART_REASON = "chaos: Durable Object restart";

/** Decides whether a fault of `kind` happens now, and counts it. */
function roll(kind: FaultKind, where?: Kind): boolean {
  const plan = state.plan;
  if (!plan || Date.now() > plan.until) return false;
  if ((kind === "d1" || kind === "r2" || kind === "store") && where && !plan.scopes.includes(where)) return false;
  if (++state.rolled[kind] <= (plan.skip?.[kind] ?? 0)) return false;
  const budget = plan.budget?.[kind];
  if (budget && state.injected[kind] >= budget) return false;
  if (state.random() >= plan[kind]) return false;
  state.injected[kind]++;
  state.lastFaultAt = Date.now();
  return true;
}

// ---- control ------------------------------------------------------------------------------------

/** `/__chaos/plan`: POST sets (or with `{}` clears) the plan, GET reports. Local environments only. */
export async function chaosControl(request: Request, env: Env): Promise<Response | null> {
  const url = new URL(request.url);
  if (url.pathname !== "/__chaos/plan") return null;
  if (env.ENVIRONMENT !== "development" && env.ENVIRONMENT !== "test") return null;
  if (request.method === "POST") {
    const body = (await request.json()) as Partial<FaultPlan>;
    if (body.seed === undefined) {
      state.plan = null;
    } else {
      state.plan = {
        seed: body.seed,
        until: body.until ?? Date.now() + 60_000,
        d1: body.d1 ?? 0,
        r2: body.r2 ?? 0,
        store: body.store ?? 0,
        duplicate: body.duplicate ?? 0,
        reorder: body.reorder ?? 0,
        kill: body.kill ?? 0,
        do_restart: body.do_restart ?? 0,
        after: body.after ?? 0.5,
        scopes: body.scopes ?? ["queue", "scheduled"],
        budget: body.budget,
        skip: body.skip,
        objects: body.objects,
        sql: body.sql?.toLowerCase(),
      };
      state.random = seeded(body.seed);
      state.injected = zero();
      state.rolled = zero();
      state.lastFaultAt = null;
    }
  }
  return Response.json({ marker: CHAOS_MARKER, plan: state.plan, injected: state.injected, last_fault_at: state.lastFaultAt ? new Date(state.lastFaultAt).toISOString() : null });
}

// ---- one invocation -----------------------------------------------------------------------------

/** The life of one invocation: once killed, every binding call throws. */
interface Life {
  kind: Kind;
  dead: boolean;
}

/** `aimed`: whether the plan's aim (its `sql`) lets this call fail (a queue invocation may still die at it). */
function beforeCall(life: Life, binding: CallKind, aimed = true): "before" | "after" | null {
  if (life.dead) throw new ChaosFault("call after the worker died");
  if (life.kind === "queue" && roll("kill")) {
    life.dead = true;
    throw new ChaosFault("worker death");
  }
  if (!aimed || !roll(binding, life.kind)) return null;
  return state.random() < (state.plan?.after ?? 0) ? "after" : "before";
}

async function guarded<T>(life: Life, binding: CallKind, call: () => Promise<T>, sql?: string[]): Promise<T> {
  const aim = state.plan?.sql;
  const fault = beforeCall(life, binding, binding !== "d1" || aim === undefined || sql?.some((q) => q.toLowerCase().includes(aim)) === true);
  if (fault === "before") throw new ChaosFault(`${binding} error`);
  const result = await call();
  if (fault === "after") throw new ChaosFault(`${binding} error after the call`);
  return result;
}

/** The env an invocation sees: the real one while no plan is set. */
export function chaosEnv(env: Env, kind: Kind): { env: Env; life: Life } {
  const life: Life = { kind, dead: false };
  if (!state.plan) return { env, life };
  const wrapped: Env = {
    ...env,
    DB: wrapD1(env.DB, life),
    FILES: wrapR2(env.FILES, life),
    ISSUANCE_QUEUE: wrapQueue(env.ISSUANCE_QUEUE, life),
    WEBHOOK_QUEUE: wrapQueue(env.WEBHOOK_QUEUE, life),
    FOLIO_ALLOCATOR: wrapDurableObjects(env.FOLIO_ALLOCATOR, life, "allocator"),
    DOCUMENT_STORE: wrapDurableObjects(env.DOCUMENT_STORE, life, "DOCUMENT_STORE"),
    CONTROL_DIRECTORY: wrapDurableObjects(env.CONTROL_DIRECTORY, life, "CONTROL_DIRECTORY"),
  };
  return { env: wrapped, life };
}

const REAL = Symbol("real statement");
const SQL = Symbol("statement text");
type Wrapped = D1PreparedStatement & { [REAL]: D1PreparedStatement; [SQL]: string };

function wrapStatement(stmt: D1PreparedStatement, query: string, life: Life): Wrapped {
  const q = [query];
  return {
    [REAL]: stmt,
    [SQL]: query,
    bind: (...values: unknown[]) => wrapStatement(stmt.bind(...values), query, life),
    first: ((col?: string) => guarded(life, "d1", () => (col === undefined ? stmt.first() : stmt.first(col)), q)) as D1PreparedStatement["first"],
    run: (() => guarded(life, "d1", () => stmt.run(), q)) as D1PreparedStatement["run"],
    all: (() => guarded(life, "d1", () => stmt.all(), q)) as D1PreparedStatement["all"],
    raw: ((options?: { columnNames?: boolean }) => guarded(life, "d1", () => stmt.raw(options as { columnNames: true }), q)) as D1PreparedStatement["raw"],
  } as Wrapped;
}

function wrapD1(db: D1Database, life: Life): D1Database {
  return {
    prepare: (query: string) => wrapStatement(db.prepare(query), query, life),
    batch: (stmts: D1PreparedStatement[]) => guarded(life, "d1", () => db.batch(stmts.map((s) => (s as Wrapped)[REAL] ?? s)), stmts.map((s) => (s as Wrapped)[SQL] ?? "")),
    exec: (query: string) => guarded(life, "d1", () => db.exec(query), [query]),
    withSession: (...args: Parameters<D1Database["withSession"]>) => db.withSession(...args),
    dump: () => db.dump(),
  } as D1Database;
}

function wrapR2(bucket: R2Bucket, life: Life): R2Bucket {
  return new Proxy(bucket, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => guarded(life, "r2", () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

function delayFor(options: { delaySeconds?: number } | undefined): { delaySeconds?: number } | undefined {
  if (!roll("reorder")) return options;
  return { ...options, delaySeconds: (options?.delaySeconds ?? 0) + 1 + Math.floor(state.random() * 3) };
}

function wrapQueue<T>(queue: Queue<T>, life: Life): Queue<T> {
  const alive = () => {
    if (life.dead) throw new ChaosFault("queue send after the worker died");
  };
  const send = async (body: T, options?: QueueSendOptions) => {
    alive();
    await queue.send(body, delayFor(options));
    if (roll("duplicate")) await queue.send(body, delayFor(options));
  };
  const sendBatch = async (messages: Iterable<MessageSendRequest<T>>, options?: QueueSendBatchOptions) => {
    alive();
    const list = [...messages].map((m) => ({ ...m, ...delayFor(m) }));
    await queue.sendBatch(list, options);
    const again = list.filter(() => roll("duplicate"));
    if (again.length > 0) await queue.sendBatch(again, options);
  };
  return new Proxy(queue, {
    get(target, prop) {
      if (prop === "send") return send;
      if (prop === "sendBatch") return sendBatch;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Before a call on a Durable Object stub, the object may be reset (in-memory state gone, storage
 * kept). On a document store or a control directory object (fault kind "store") the call may also
 * fail like a D1 call: before it, or after it succeeded (the write happened, the answer was lost),
 * and a queue invocation may die there. The folio allocator only restarts: its answers carry the
 * folios, and a lost one is a folio the chaos run's invariants would count as skipped.
 */
type AnyStub = Record<string | symbol, unknown>;
interface Namespace {
  get(id: DurableObjectId): unknown;
}

function wrapDurableObjects<T>(namespace: T, life: Life, binding: "allocator" | StoreBinding): T {
  const ns = namespace as unknown as Namespace & object;
  return new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== "get" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
      return (id: DurableObjectId) => {
        const stub = target.get(id) as AnyStub;
        return new Proxy(stub, {
          get(s, method) {
            const fn = Reflect.get(s, method, s) as unknown;
            if (typeof fn !== "function") return fn;
            return async (...args: unknown[]) => {
              if (life.dead) throw new ChaosFault(`${binding === "allocator" ? "allocator" : "store"} call after the worker died`);
              const faults = binding !== "allocator" && (state.plan?.objects ?? [binding]).includes(binding);
              const fault = faults ? beforeCall(life, "store") : null;
              if (roll("do_restart")) await (target.get(id) as unknown as { chaosRestart(): Promise<void> }).chaosRestart().catch(() => undefined);
              if (fault === "before") throw retryableFault("store error");
              const fresh = target.get(id) as unknown as Record<string, (...a: unknown[]) => unknown>;
              let result: unknown;
              try {
                result = await fresh[method as string]!(...args);
              } catch (err) {
                // A call in flight when the object restarted fails as the platform fails it: marked retryable.
                if (String((err as Error)?.message).includes(RESTART_REASON)) throw retryableFault("call in flight during a Durable Object restart", err);
                throw err;
              }
              if (fault === "after") throw retryableFault("store error after the call");
              return result;
            };
          },
        });
      };
    },
  }) as unknown as T;
}

/** The Durable Object side of a restart: reset the object (it starts again from its storage). */
export function installChaosRestart(cls: { prototype: object }): void {
  Object.defineProperty(cls.prototype, "chaosRestart", {
    value(this: { ctx: DurableObjectState }) {
      this.ctx.abort(RESTART_REASON);
    },
  });
}

/**
 * A queue batch whose acks and retries stop counting once the invocation died; the handler then
 * throws, and the runtime redelivers every message not settled before the death.
 */
export function chaosBatch<T>(batch: MessageBatch<T>, life: Life): MessageBatch<T> {
  if (!state.plan) return batch;
  const messages = batch.messages.map((m) => {
    const wrapped = Object.create(m) as Message<T>;
    wrapped.ack = () => {
      if (!life.dead) m.ack();
    };
    wrapped.retry = (o?: QueueRetryOptions) => {
      if (!life.dead) m.retry(o);
    };
    return Object.defineProperties(wrapped, { id: { value: m.id }, body: { value: m.body }, attempts: { value: m.attempts }, timestamp: { value: m.timestamp } });
  });
  const ackAll = () => {
    if (!life.dead) batch.ackAll();
  };
  const retryAll = (o?: QueueRetryOptions) => {
    if (!life.dead) batch.retryAll(o);
  };
  return new Proxy(batch, {
    get(target, prop) {
      if (prop === "messages") return messages;
      if (prop === "ackAll") return ackAll;
      if (prop === "retryAll") return retryAll;
      return Reflect.get(target, prop, target) as unknown;
    },
  });
}

export function assertAlive(life: Life): void {
  if (life.dead) throw new ChaosFault("worker death: the batch is redelivered");
}
