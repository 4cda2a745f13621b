/**
 * Reads of issued documents across partitions: GET finds a document in the partition its id names
 * (a previous month's store or the current one), with its history from the same place; the list walks the partitions
 * newest first with the pages and `total` of one table.
 */
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { closePartition, openStore, partitionedId, storeForId } from "../../src/storage/db/document-store";
import { invoiceEvents, invoices } from "../../src/storage/db/schema";
import { randomUlid } from "../../src/lib/ids";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";

const monthsAgo = (n: number) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - n, 10, 12));

describe("issued documents read across partitions", () => {
  it("GET and the list find documents of a previous month's store and the current store", async () => {
    const issuer = await readyIssuer([33], 5);
    const res = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: `R-${randomUlid()}` }));
    expect(res.status).toBe(202);
    await untilFinal(issuer, res.body.id);
    const home = storeForId(env, issuer.companyId, res.body.id)!;
    const [issued] = await home.db.select().from(invoices).where(eq(invoices.id, res.body.id));
    // Fixtures: copies of the issued document's row in last month's and this month's stores.
    await home.db.delete(invoices).where(eq(invoices.id, res.body.id)); // only the fixtures remain
    const placed: string[] = [];
    for (const at of [monthsAgo(1), new Date()]) {
      const store = await openStore(env, issuer.companyId, at);
      // The first copy's partition is then closed, as the month's end closes it: the second goes to the next one.
      const id = partitionedId("inv", store.ordinal);
      await store.db.batch([
        store.db.insert(invoices).values({ ...issued!, id, externalReference: null, folio: 901 + placed.length, createdAt: at.toISOString() }),
        store.db.insert(invoiceEvents).values({ id: `evt_${randomUlid()}`, invoiceId: id, status: "ACCEPTED", message: `in partition ${store.ordinal}`, createdAt: at.toISOString() }),
      ]);
      placed.push(id);
      if (placed.length === 1) await closePartition(env, issuer.companyId, store.ordinal, "MONTH_END", null);
    }
    const [lastMonth, current] = placed as [string, string];
    const ordinal = (id: string) => Number(/^inv_p(\d+)_/.exec(id)![1]);
    expect(ordinal(current)).toBe(ordinal(lastMonth) + 1);

    for (const [id, folio] of [[lastMonth, 901], [current, 902]] as const) {
      const got = await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body).toMatchObject({ id, folio, status: "ACCEPTED" });
    }
    const history = await call("GET", `${issuer.base}/invoices/${lastMonth}`, { key: issuer.owner.key });
    expect(JSON.stringify(history.body)).toContain(`in partition ${ordinal(lastMonth)}`);

    const all = await call("GET", `${issuer.base}/invoices?per_page=10`, { key: issuer.owner.key });
    expect(all.body.total).toBe(2);
    expect(all.body.data.map((d: { id: string }) => d.id)).toEqual([current, lastMonth]);
    // Each listed document is its GET, history and cancelling note included (the list reads them per partition, one query each).
    for (const item of all.body.data) {
      const { livemode: _mode, ...alone } = (await call("GET", `${issuer.base}/invoices/${item.id}`, { key: issuer.owner.key })).body;
      expect(item).toEqual(alone);
    }
    expect(JSON.stringify(all.body.data)).toContain(`in partition ${ordinal(lastMonth)}`);
    const second = await call("GET", `${issuer.base}/invoices?per_page=1&page=2`, { key: issuer.owner.key });
    expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([lastMonth]);
    expect(second.body.total).toBe(2);
    const byFolio = await call("GET", `${issuer.base}/invoices?folio=901`, { key: issuer.owner.key });
    expect(byFolio.body.data.map((d: { id: string }) => d.id)).toEqual([lastMonth]);
    // An id of a partition the company never had, and a malformed one: not found.
    for (const id of [partitionedId("inv", 7), "inv_nope"]) {
      const missing = await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe("INVOICE_NOT_FOUND");
    }
  });
});
