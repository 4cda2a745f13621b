import { env } from "cloudflare:workers";
import { and, count, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openStore, partitionedId } from "../../src/storage/db/document-store";
import { pageAcrossPartitions, type PartitionedQuery } from "../../src/storage/db/document-store/lists";
import { invoices } from "../../src/storage/db/schema";
import { randomUlid } from "../../src/lib/ids";

/** Pages and totals of a list that spans a company's partitions: the same answer as one table would give. */
const companyId = `cmp_${randomUlid()}`;
const months = ["2026-08-15T12:00:00Z", "2026-09-15T12:00:00Z", "2026-10-15T12:00:00Z"];
/** Every document, newest first, as one table ordered by created_at desc would list them. */
const all: { id: string; status: string }[] = [];

function query(status?: "SENT" | "ACCEPTED"): PartitionedQuery<{ id: string; status: string }> {
  const where = and(eq(invoices.companyId, companyId), status ? eq(invoices.status, status) : undefined);
  return {
    count: async (db) => (await db.select({ n: count() }).from(invoices).where(where))[0]!.n,
    rows: (db, limit, offset) => db.select({ id: invoices.id, status: invoices.status }).from(invoices).where(where).orderBy(desc(invoices.createdAt), desc(invoices.id)).limit(limit).offset(offset),
  };
}

async function seed() {
  // 3 partitions (one per month) with 5, 0 and 7 documents; statuses alternate.
  const sizes = [5, 0, 7];
  for (const [m, at] of months.entries()) {
    const { db, ordinal } = await openStore(env, companyId, new Date(at));
    for (let i = 0; i < sizes[m]!; i++) {
      const created = new Date(Date.parse(at) + i * 1000).toISOString();
      const row = { id: partitionedId("inv", ordinal), status: i % 2 ? "SENT" : "ACCEPTED" } as const;
      await db.insert(invoices).values({ ...row, companyId, documentType: 33, issueDate: at.slice(0, 10), recipientRut: "1-9", recipientName: "x", currency: "CLP", total: "1", body: "{}", createdAt: created });
      all.unshift(row);
    }
  }
}

describe("a list across partitions", () => {
  it("pages newest first across partition boundaries, with the total of all of them", async () => {
    await seed();
    expect(all).toHaveLength(12);
    for (const perPage of [1, 4, 5, 7, 12, 20]) {
      const seen: string[] = [];
      for (let offset = 0; offset < all.length; offset += perPage) {
        const page = await pageAcrossPartitions(env, companyId, query(), { perPage, offset });
        expect(page.total).toBe(12);
        expect(page.rows).toEqual(all.slice(offset, offset + perPage));
        seen.push(...page.rows.map((r) => r.id));
      }
      expect(seen).toEqual(all.map((r) => r.id));
    }
  });

  it("filters in every partition, and a page past the end is empty with the right total", async () => {
    const sent = all.filter((r) => r.status === "SENT");
    const page = await pageAcrossPartitions(env, companyId, query("SENT"), { perPage: 4, offset: 1 });
    expect(page).toEqual({ rows: sent.slice(1, 5), total: sent.length });
    expect(await pageAcrossPartitions(env, companyId, query(), { perPage: 4, offset: 40 })).toEqual({ rows: [], total: 12 });
  });

  it("a company without partitions lists nothing", async () => {
    expect(await pageAcrossPartitions(env, `cmp_${randomUlid()}`, query(), { perPage: 20, offset: 0 })).toEqual({ rows: [], total: 0 });
  });
});
