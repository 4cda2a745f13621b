import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { closePartition, openPartition, openPartitions, openStore, ordinalOfId, partitionedId, partitionsOf, storeFor, storeForId } from "../../src/storage/db/document-store";
import { createDb, uniqueViolation } from "../../src/storage/db/client";
import { documentPartitions, invoiceEvents, invoices } from "../../src/storage/db/schema";
import { randomUlid } from "../../src/lib/ids";
import { storeRows } from "../helpers/store";

/**
 * The document stores: a SQLite Durable Object per company and partition, queried with
 * the project's Drizzle code through a D1-shaped client, and the partition directory in D1.
 */
const newCompanyId = () => `cmp_${randomUlid()}`;

function invoiceRow(companyId: string, id: string, over: Partial<typeof invoices.$inferInsert> = {}): typeof invoices.$inferInsert {
  return {
    id, companyId, documentType: 33, status: "RECEIVED", issueDate: "2026-11-23", recipientRut: "77879240-0", recipientName: "Cliente Ltda",
    currency: "CLP", total: "35700", body: "{}", ...over,
  };
}

describe("a document store answers the project's Drizzle queries", () => {
  it("inserts, selects (objects and arrays), updates with returning, and batches", async () => {
    const companyId = newCompanyId();
    const { db, ordinal } = await openStore(env, companyId);
    const id = partitionedId("inv", ordinal);
    await db.insert(invoices).values(invoiceRow(companyId, id, { externalReference: "ERP-1" }));
    const [row] = await db.select().from(invoices).where(eq(invoices.id, id));
    expect(row).toMatchObject({ id, companyId, documentType: 33, status: "RECEIVED", attempts: 0, externalReference: "ERP-1" });
    expect(row!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const picked = await db.select({ folio: invoices.folio, ref: invoices.externalReference }).from(invoices).where(eq(invoices.companyId, companyId));
    expect(picked).toEqual([{ folio: null, ref: "ERP-1" }]);
    const found = await db.query.invoices.findFirst({ where: eq(invoices.id, id) });
    expect(found?.id).toBe(id);

    const [moved, history] = await db.batch([
      db.update(invoices).set({ status: "GENERATED", folio: 7 }).where(eq(invoices.id, id)).returning({ id: invoices.id, folio: invoices.folio }),
      db.insert(invoiceEvents).values({ id: `evt_${randomUlid()}`, invoiceId: id, status: "GENERATED" }),
    ]);
    expect(moved).toEqual([{ id, folio: 7 }]);
    expect(history.meta.changes).toBe(1);
    const none = await db.update(invoices).set({ status: "SIGNED" }).where(eq(invoices.status, "FAILED")).returning();
    expect(none).toEqual([]);
    const run = await db.run(sql`UPDATE invoices SET attempts = attempts + 1 WHERE company_id = ${companyId}`);
    expect(run.meta.changes).toBe(1);
    expect(await storeRows(companyId, sql`SELECT status, folio, attempts FROM invoices`)).toEqual([{ status: "GENERATED", folio: 7, attempts: 1 }]);
  });

  it("a batch is all or nothing, and a unique violation reads as D1's", async () => {
    const companyId = newCompanyId();
    const { db, ordinal } = await openStore(env, companyId);
    const first = partitionedId("inv", ordinal);
    await db.insert(invoices).values(invoiceRow(companyId, first, { externalReference: "ERP-9" }));
    const error = await db
      .batch([
        db.update(invoices).set({ status: "GENERATED" }).where(eq(invoices.id, first)),
        db.insert(invoices).values(invoiceRow(companyId, partitionedId("inv", ordinal), { externalReference: "ERP-9" })),
      ])
      .then(() => null, (e: unknown) => e);
    expect(uniqueViolation(error)).toBe("invoices.company_id, invoices.external_reference");
    expect(await storeRows(companyId, "SELECT id, status FROM invoices")).toEqual([{ id: first, status: "RECEIVED" }]);
  });

  it("a bad statement is an error, never an empty answer", async () => {
    const { db } = await openStore(env, newCompanyId());
    const error = (await db.all(sql`SELECT * FROM companies`).then(() => null, (e: unknown) => e)) as Error & { cause?: Error };
    expect(error?.cause?.message).toMatch(/no such table: companies/);
  });

  it("keeps companies and partitions apart", async () => {
    const a = newCompanyId();
    const b = newCompanyId();
    const storeA = await openStore(env, a);
    await storeA.db.insert(invoices).values(invoiceRow(a, partitionedId("inv", storeA.ordinal)));
    expect(await storeFor(env, b, storeA.ordinal).db.select().from(invoices)).toEqual([]);
    expect(await storeFor(env, a, storeA.ordinal + 1).db.select().from(invoices)).toEqual([]);
    expect(await storeFor(env, a, storeA.ordinal).db.select({ id: invoices.id }).from(invoices)).toHaveLength(1);
  });
});

describe("the partition directory", () => {
  const nov = new Date("2026-11-23T12:00:00Z");
  const dec = new Date("2026-12-01T00:00:01Z");

  it("opens partition 1 on first use and keeps it for the month", async () => {
    const companyId = newCompanyId();
    const p = await openPartition(env, companyId, nov);
    expect(p).toMatchObject({ companyId, ordinal: 1, storeName: `${companyId}:1`, period: "2026-11", closedAt: null });
    expect((await openPartition(env, companyId, new Date("2026-11-30T23:59:59Z"))).ordinal).toBe(1);
  });

  it("rolls over at a new month: the old one closes (MONTH_END), the next opens", async () => {
    const companyId = newCompanyId();
    await openPartition(env, companyId, nov);
    const next = await openPartition(env, companyId, dec);
    expect(next).toMatchObject({ ordinal: 2, period: "2026-12", closedAt: null });
    const all = await partitionsOf(env, companyId);
    expect(all.map((p) => [p.ordinal, p.closedReason, p.closedAt])).toEqual([
      [2, null, null],
      [1, "MONTH_END", dec.toISOString()],
    ]);
  });

  it("a clock behind the month that another isolate already opened keeps the newer partition", async () => {
    const companyId = newCompanyId();
    await openPartition(env, companyId, nov);
    expect((await openPartition(env, companyId, dec)).ordinal).toBe(2);
    expect(await openPartition(env, companyId, new Date("2026-11-30T23:59:59Z"))).toMatchObject({ ordinal: 2, period: "2026-12" });
    expect(await partitionsOf(env, companyId)).toHaveLength(2);
  });

  it("concurrent openers agree on one open partition", async () => {
    const companyId = newCompanyId();
    const opened = await Promise.all(Array.from({ length: 12 }, () => openPartition(env, companyId, nov)));
    expect(new Set(opened.map((p) => p.ordinal))).toEqual(new Set([1]));
    const rolled = await Promise.all(Array.from({ length: 12 }, () => openPartition(env, companyId, dec)));
    expect(new Set(rolled.map((p) => p.ordinal))).toEqual(new Set([2]));
    const rows = await createDb(env.DB).select().from(documentPartitions).where(eq(documentPartitions.companyId, companyId));
    expect(rows).toHaveLength(2);
  });

  it("the open partitions of every company are what the sweeps walk", async () => {
    const [a, b] = [newCompanyId(), newCompanyId()];
    await openPartition(env, a, nov);
    await openPartition(env, a, dec);
    await openPartition(env, b, nov);
    const open = (await openPartitions(env)).filter((p) => p.companyId === a || p.companyId === b);
    expect(open.map((p) => [p.companyId, p.ordinal]).sort()).toEqual([[a, 2], [b, 1]].sort());
  });

  it("a stale roll-over changes nothing", async () => {
    const companyId = newCompanyId();
    await openPartition(env, companyId, nov);
    await closePartition(env, companyId, 1, "SIZE", 123, nov);
    await closePartition(env, companyId, 1, "SIZE", 456, nov);
    expect((await partitionsOf(env, companyId)).map((p) => [p.ordinal, p.closedReason, p.sizeBytes])).toEqual([
      [2, null, 0],
      [1, "SIZE", 123],
    ]);
  });

  it("closes a partition early when its store passes the size threshold", async () => {
    const companyId = newCompanyId();
    const small = { ...env, DOCUMENT_STORE_MAX_BYTES: "1" };
    const first = await openStore(small, companyId);
    const id = partitionedId("inv", first.ordinal);
    await first.db.insert(invoices).values(invoiceRow(companyId, id));
    const [closed] = (await partitionsOf(env, companyId)).filter((p) => p.ordinal === first.ordinal);
    expect(closed).toMatchObject({ closedReason: "SIZE" });
    expect(closed!.sizeBytes).toBeGreaterThan(0);
    const second = await openStore(env, companyId);
    expect(second.ordinal).toBe(first.ordinal + 1);
    // The document stays where it was written, and its id still finds it.
    const [back] = await storeForId(env, companyId, id)!.db.select({ id: invoices.id }).from(invoices).where(eq(invoices.id, id));
    expect(back?.id).toBe(id);
  });
});

describe("ids carry their partition", () => {
  it("new ids name their ordinal", () => {
    const id = partitionedId("inv", 37);
    expect(id).toMatch(/^inv_p37_[0-9A-Z]{26}$/);
    expect(ordinalOfId(id)).toBe(37);
  });

  it("anything else is not an id of ours (null: the caller answers not found)", () => {
    for (const bad of ["", "inv_", `inv_${randomUlid()}`, "inv_p_01JD3Q4M6YV8T1N5B2K7C9XW3E", "inv_p1_short", "inv_01jd3q4m6yv8t1n5b2k7c9xw3e", "../inv", "inv_p1234567_01JD3Q4M6YV8T1N5B2K7C9XW3E"]) {
      expect(ordinalOfId(bad), bad).toBeNull();
      expect(storeForId(env, "cmp_x", bad), bad).toBeNull();
    }
  });
});
