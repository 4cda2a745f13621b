// Counting wrappers around the service's bindings, for the scale bench only (nothing in src uses
// this). The bench copies this file into the tree it runs and generates an entry module that wraps
// the service's `env` (and every Durable Object class's `env`) with `wrapEnv`; `GET /__scale/meter`
// answers the counts. Counted: D1 round trips and statements (a batch is one round trip), Durable
// Object calls per object (with the name it was addressed by), queue messages per producer binding.
// The local SII simulator shares the D1 binding: statements on its `sim_*` tables are also counted
// apart (`sim_statements`; `sim_round_trips`: round trips whose statements are all the simulator's),
// so the model can charge our database only with the service's own work.
export const meter = { d1: { round_trips: 0, statements: 0, sim_round_trips: 0, sim_statements: 0 }, objects: {}, queues: {}, d1_by_sql: {}, object_methods: {} };
// Per SQL text (the service prepares the same few hundred statements over and over): the regex
// ran on every statement was the meter's largest cost in the scale bench's profile.
const simCache = new Map();
const isSim = (sql) => {
  let sim = simCache.get(sql);
  if (sim === undefined) {
    sim = /(^|[^\w])sim_\w+/i.test(sql ?? "");
    if (simCache.size < 10_000) simCache.set(sql, sim);
  }
  return sim;
};

const sqlOf = new WeakMap(); // statement proxy -> its SQL
const names = new Map(); // id hex -> name

const unwrapped = new WeakMap(); // statement proxy -> the binding's statement

/** A prepared statement that counts one round trip when it runs on its own. */
function statement(st, sql) {
  const proxy = new Proxy(st, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "bind") return (...args) => statement(Reflect.apply(value, target, args), sql);
      if (["first", "all", "run", "raw"].includes(prop))
        return (...args) => {
          count([sql]);
          return Reflect.apply(value, target, args);
        };
      return value.bind(target);
    },
  });
  unwrapped.set(proxy, st);
  sqlOf.set(proxy, sql);
  return proxy;
}

/** One round trip running these statements' SQL. */
function count(sqls) {
  const sim = sqls.filter(isSim).length;
  meter.d1.round_trips++;
  meter.d1.statements += sqls.length;
  for (const sql of sqls) meter.d1_by_sql[sql] = (meter.d1_by_sql[sql] ?? 0) + 1;
  meter.d1.sim_statements += sim;
  if (sim === sqls.length) meter.d1.sim_round_trips++;
}

/** The D1 binding, counting round trips (a batch is one) and statements. */
function d1(db) {
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "prepare") return (sql) => statement(target.prepare(sql), sql);
      if (prop === "batch")
        return (statements) => {
          count(statements.map((s) => sqlOf.get(s)));
          return target.batch(statements.map((s) => unwrapped.get(s) ?? s));
        };
      if (prop === "exec")
        return (sql) => {
          count([sql]);
          return target.exec(sql);
        };
      if (prop === "withSession") return (...args) => d1(Reflect.apply(value, target, args));
      return value.bind(target);
    },
  });
}

function stub(s, record) {
  return new Proxy(s, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function" || prop === "then") return value;
      return (...args) => {
        record.calls++;
        meter.object_methods[`${record.binding}.${String(prop)}`] = (meter.object_methods[`${record.binding}.${String(prop)}`] ?? 0) + 1;
        return target[prop](...args); // an RPC stub's method: called through the stub
      };
    },
  });
}

function namespace(binding, ns) {
  const per = (meter.objects[binding] ??= {});
  const record = (id, name) => {
    const hex = id.toString();
    if (name) names.set(hex, name);
    const rec = (per[hex] ??= { name: names.get(hex) ?? null, calls: 0 });
    Object.defineProperty(rec, "binding", { value: binding, enumerable: false });
    return rec;
  };
  return new Proxy(ns, {
    get(target, prop) {
      if (prop === "idFromName")
        return (name) => {
          const id = target.idFromName(name);
          names.set(id.toString(), name);
          return id;
        };
      if (prop === "get") return (id, options) => stub(target.get(id, options), record(id));
      if (prop === "getByName") return (name, options) => stub(target.getByName(name, options), record(target.idFromName(name), name));
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function queue(binding, q) {
  const add = (n) => (meter.queues[binding] = (meter.queues[binding] ?? 0) + n);
  return {
    send: (...args) => (add(1), q.send(...args)),
    sendBatch: (messages, ...rest) => (add(messages.length), q.sendBatch(messages, ...rest)),
  };
}

/**
 * The wrapped env, made once per env object: the service caches its Drizzle handles per binding
 * object (per isolate, as workerd hands the same env to every request), so a new wrapper per
 * request would defeat those caches and charge the service with work it does not do in production.
 */
const wrapped = new WeakMap();
export function wrapEnv(env) {
  let out = wrapped.get(env);
  if (!out) wrapped.set(env, (out = wrapBindings(env)));
  return out;
}

function wrapBindings(env) {
  const out = { ...env };
  for (const [k, v] of Object.entries(env)) {
    if (!v || typeof v !== "object") continue;
    if (typeof v.prepare === "function" && typeof v.batch === "function") out[k] = d1(v);
    else if (typeof v.idFromName === "function") out[k] = namespace(k, v);
    else if (typeof v.send === "function" && typeof v.sendBatch === "function") out[k] = queue(k, v);
  }
  return out;
}
