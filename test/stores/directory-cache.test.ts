import { env } from "cloudflare:workers";
import { and, eq, isNull } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { forgetDirectory, openPartition, openStore, partitionKnown, partitionedId, partitionsOf } from "../../src/storage/db/document-store";
import { createDb } from "../../src/storage/db/client";
import { documentPartitions, invoices } from "../../src/storage/db/schema";
import { randomUlid } from "../../src/lib/ids";

/**
 * The D1 statements a document still makes: what the partition directory costs in D1 on a cold
 * isolate and afterwards, and that what is cached cannot lead
 * a write astray (a partition another isolate closed by size is seen on this isolate's next call).
 */
const newCompanyId = () => `cmp_${randomUlid()}`;

/** D1 as the service sees it, counting what it is asked: statements, and round trips (a batch is one). */
function countingEnv(over: Partial<Env> & { DOCUMENT_STORE_MAX_BYTES?: string } = {}) {
  const counts = { statements: 0, roundTrips: 0 };
  const real = env.DB;
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args));
        if (prop === "all" || prop === "run" || prop === "raw" || prop === "first") {
          return (...args: unknown[]) => {
            counts.statements++;
            counts.roundTrips++;
            return (target[prop] as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  const DB = {
    prepare: (query: string) => wrap(real.prepare(query)),
    batch: (stmts: D1PreparedStatement[]) => {
      counts.statements += stmts.length;
      counts.roundTrips++;
      return real.batch(stmts.map((s) => (s as unknown as { __target?: D1PreparedStatement }).__target ?? s));
    },
    exec: (q: string) => real.exec(q),
    dump: () => real.dump(),
    withSession: (c?: string) => real.withSession(c),
  } as unknown as D1Database;
  return { env: { ...env, ...over, DB } as Env & { DOCUMENT_STORE_MAX_BYTES?: string }, counts };
}

afterEach(() => {
  forgetDirectory();
});

describe("the partition directory on a cold isolate", () => {
  it("a company's first partition: the control directory's read (its own), then one batch that makes it and reads it back", async () => {
    const companyId = newCompanyId();
    const { env: e, counts } = countingEnv();
    const p = await openPartition(e, companyId);
    expect(p).toMatchObject({ companyId, ordinal: 1, storeName: `${companyId}:1`, closedAt: null });
    // The read of the open row is the company's directory object's (src/storage/db/control-directory.ts), not this isolate's.
    expect(counts).toEqual({ statements: 2, roundTrips: 1 });
    // The open partition is known to exist: reading by an id of it asks D1 nothing.
    expect(await partitionKnown(e, companyId, 1)).toBe(true);
    await openPartition(e, companyId);
    expect(counts).toEqual({ statements: 2, roundTrips: 1 });
  });

  it("a company that has its partition: none from a new isolate (its directory object reads D1 once, then holds it)", async () => {
    const companyId = newCompanyId();
    await openPartition(env, companyId);
    forgetDirectory();
    const { env: e, counts } = countingEnv();
    expect((await openStore(e, companyId)).ordinal).toBe(1);
    expect((await openStore(e, companyId)).ordinal).toBe(1);
    expect(counts).toEqual({ statements: 0, roundTrips: 0 });
  });

  it("the first store partition comes after closed ones", async () => {
    const closedOnes = newCompanyId();
    const d1 = createDb(env.DB);
    const row = (companyId: string, ordinal: number) => ({ companyId, ordinal, storeName: `${companyId}:${ordinal}`, period: "2026-10", openedAt: "2026-10-01T00:00:00.000Z", closedAt: "2026-10-02T00:00:00.000Z", closedReason: "SIZE" as const });
    await d1.insert(documentPartitions).values([row(closedOnes, 1), row(closedOnes, 2)]);
    expect((await openPartition(env, closedOnes)).ordinal).toBe(3);
    expect((await partitionsOf(env, closedOnes)).map((p) => [p.ordinal, p.closedAt === null])).toEqual([[3, true], [2, false], [1, false]]);
  });

  it("concurrent first openers in new isolates agree on one partition", async () => {
    const companyId = newCompanyId();
    const opened = await Promise.all(Array.from({ length: 8 }, () => openPartition(countingEnv().env, companyId)));
    expect(new Set(opened.map((p) => p.ordinal))).toEqual(new Set([1]));
    expect(await createDb(env.DB).select().from(documentPartitions).where(eq(documentPartitions.companyId, companyId))).toHaveLength(1);
  });

  it("a partition another isolate closed by size is seen on this isolate's next call to it, and the writes after go to the new one", async () => {
    const companyId = newCompanyId();
    const { env: e } = countingEnv({ DOCUMENT_STORE_MAX_BYTES: "1" });
    const first = await openStore(e, companyId);
    // Another isolate closes it and opens the next; this isolate still holds its copy.
    const d1 = createDb(env.DB);
    await d1.batch([
      d1.update(documentPartitions).set({ closedAt: new Date().toISOString(), closedReason: "SIZE", sizeBytes: 9 }).where(and(eq(documentPartitions.companyId, companyId), eq(documentPartitions.ordinal, 1), isNull(documentPartitions.closedAt))),
      d1.insert(documentPartitions).values({ companyId, ordinal: 2, storeName: `${companyId}:2`, period: new Date().toISOString().slice(0, 7), openedAt: new Date().toISOString() }),
    ]);
    expect((await openStore(e, companyId)).ordinal).toBe(1);
    // Its next call there reports the store's size past the threshold: the copy is replaced at once.
    const id = partitionedId("inv", first.ordinal);
    await first.db.insert(invoices).values({ id, companyId, documentType: 33, status: "RECEIVED", issueDate: "2026-11-23", recipientRut: "77879240-0", recipientName: "Cliente Ltda", currency: "CLP", total: "1", body: "{}" });
    expect((await openStore(e, companyId)).ordinal).toBe(2);
    // The close it made again changed nothing: the first close stands, one partition is open.
    expect((await partitionsOf(env, companyId)).map((p) => [p.ordinal, p.closedReason, p.sizeBytes])).toEqual([[2, null, 0], [1, "SIZE", 9]]);
  });
});
