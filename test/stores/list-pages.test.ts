/**
 * Lists at any size: totals come from the stores' counters (kept by triggers) when
 * the filters allow, pages from indexes in list order. Properties over random companies spread over
 * three partitions, with random inserts, status and date changes and deletes: every page of every
 * filter holds exactly the rows a plain query over all the rows gives, in order (pages concatenated
 * give every match exactly once), and each total equals a plain COUNT, also after writes between pages.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/storage/db/client";
import { openStore, partitionedId } from "../../src/storage/db/document-store";
import { INVOICE_COUNTERS, RECEIVED_COUNTERS, type CounterSpec } from "../../src/storage/db/document-store/counters";
import { invoices, receivedDocuments } from "../../src/storage/db/schema";
import { listInvoices, type InvoiceFilters } from "../../src/invoices/queries";
import { dayPageReads } from "../../src/invoices/day-pages";
import { listReceived, type ListFilter } from "../../src/reception/queries";
import { randomUlid } from "../../src/lib/ids";

const MONTHS = ["2026-05-15T12:00:00.000Z", "2026-06-15T12:00:00.000Z", "2026-07-15T12:00:00.000Z"];
const STATUSES = ["ACCEPTED", "REJECTED", "SENT"] as const;
const TYPES = [33, 39, 61] as const;
const DAYS = ["2026-05-01", "2026-05-02", "2026-06-01", "2026-07-03"] as const;
const STATES = ["PENDING", "ACCEPTED", "CLAIMED"] as const;

/** One generated document: its partition (0..2), a few creation instants (ties on purpose) and filter columns. */
const docArb = fc.record({
  partition: fc.integer({ min: 0, max: 2 }),
  second: fc.integer({ min: 0, max: 3 }),
  status: fc.constantFrom(...STATUSES),
  type: fc.constantFrom(...TYPES),
  day: fc.constantFrom(...DAYS),
  verification: fc.constantFrom(null, 0, 1, 2),
  state: fc.constantFrom(...STATES),
  receivedDay: fc.option(fc.constantFrom(...DAYS), { nil: null }),
});
type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;
type Doc = Of<typeof docArb> & { id: string; ordinal: number; createdAt: string };

/** A write between pages: a status (issued) or response state (received) change, an issue date change, or a delete. */
const writeArb = fc.record({ pick: fc.nat(), kind: fc.constantFrom("status", "day", "delete"), status: fc.constantFrom(...STATUSES), day: fc.constantFrom(...DAYS), state: fc.constantFrom(...STATES) });

const invoiceFilterArb: fc.Arbitrary<InvoiceFilters> = fc.record(
  { invoice_type: fc.constantFrom(...TYPES), status: fc.constantFrom(...STATUSES), from_date: fc.constantFrom(...DAYS), to_date: fc.constantFrom(...DAYS), folio: fc.integer({ min: 1, max: 5 }) },
  { requiredKeys: [] },
);
const receivedFilterArb: fc.Arbitrary<ListFilter> = fc.record(
  {
    documentType: fc.constantFrom(...TYPES),
    verification: fc.constantFrom("VERIFIED", "FAILED", "PENDING"),
    responseState: fc.constantFrom(...STATES),
    issueDateFrom: fc.constantFrom(...DAYS),
    issueDateTo: fc.constantFrom(...DAYS),
    folio: fc.integer({ min: 1, max: 5 }),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<ListFilter>;

/** The company's three partition stores, oldest first (opened month after month). */
async function partitions(companyId: string): Promise<{ db: Db; ordinal: number }[]> {
  const out = [];
  for (const at of MONTHS) out.push(await openStore(env, companyId, new Date(at)));
  return out;
}

function placed(companyId: string, docs: Of<typeof docArb>[], stores: { ordinal: number }[], prefix: "inv" | "rcv"): Doc[] {
  void companyId;
  return docs.map((d, i) => {
    const ordinal = stores[d.partition]!.ordinal;
    return { ...d, id: partitionedId(prefix, ordinal), ordinal, createdAt: new Date(Date.parse(MONTHS[d.partition]!) + d.second * 1000).toISOString(), folio: (i % 5) + 1 } as Doc;
  });
}

const folioOf = (d: Doc) => (d as Doc & { folio: number }).folio;

/** The store's counters, as a GROUP BY over its rows would give them (zero counters left out). */
async function expectCountersMatchRows(db: Db, spec: CounterSpec): Promise<void> {
  const cols = spec.columns.map((c) => c.name).join(", ");
  const counters = await db.all(sql.raw(`SELECT ${cols}, sum(n) AS n FROM ${spec.counters} GROUP BY ${cols} HAVING sum(n) <> 0 ORDER BY ${cols}`));
  const rows = await db.all(sql.raw(`SELECT ${cols}, count(*) AS n FROM ${spec.table} GROUP BY ${cols} ORDER BY ${cols}`));
  expect(counters).toEqual(rows);
}

// ---------------------------------------------------------------------------------------------
// Issued documents

function invoiceRow(companyId: string, d: Doc) {
  return { id: d.id, companyId, documentType: d.type, status: d.status, folio: folioOf(d), issueDate: d.day, recipientRut: "1-9", recipientName: "x", currency: "CLP", total: "1", body: "{}", createdAt: d.createdAt };
}

function invoiceMatches(f: InvoiceFilters, d: Doc): boolean {
  return (f.invoice_type === undefined || d.type === f.invoice_type) && (!f.status || d.status === f.status) && (!f.from_date || d.day >= f.from_date) && (!f.to_date || d.day <= f.to_date) && (f.folio === undefined || folioOf(d) === f.folio);
}

/** Newest partition first, then newest first within it, id breaking ties: one table's order. */
const newestFirst = (a: Doc, b: Doc) => b.ordinal - a.ordinal || (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

async function applyInvoiceWrite(stores: Map<number, Db>, docs: Doc[], w: Of<typeof writeArb>): Promise<void> {
  if (docs.length === 0) return;
  const d = docs[w.pick % docs.length]!;
  const db = stores.get(d.ordinal)!;
  if (w.kind === "delete") {
    await db.run(sql`DELETE FROM invoices WHERE id = ${d.id}`);
    docs.splice(docs.indexOf(d), 1);
  } else if (w.kind === "status") {
    await db.run(sql`UPDATE invoices SET status = ${w.status} WHERE id = ${d.id}`);
    d.status = w.status;
  } else {
    await db.run(sql`UPDATE invoices SET issue_date = ${w.day} WHERE id = ${d.id}`);
    d.day = w.day;
  }
}

/** The stores' own COUNT(*) of the filter (the counters' reference), summed over the partitions. */
async function plainInvoiceCount(stores: Map<number, Db>, companyId: string, f: InvoiceFilters): Promise<number> {
  let n = 0;
  for (const db of stores.values()) {
    const [row] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM invoices WHERE company_id = ${companyId}
      AND (${f.invoice_type ?? null} IS NULL OR document_type = ${f.invoice_type ?? null}) AND (${f.status ?? null} IS NULL OR status = ${f.status ?? null})
      AND (${f.from_date ?? null} IS NULL OR issue_date >= ${f.from_date ?? null}) AND (${f.to_date ?? null} IS NULL OR issue_date <= ${f.to_date ?? null})
      AND (${f.folio ?? null} IS NULL OR folio = ${f.folio ?? null})`);
    n += row!.n;
  }
  return n;
}

describe("issued documents: pages and totals across partitions", () => {
  it("pages concatenated give every match once in order, totals equal a plain count (also after writes)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(docArb, { maxLength: 30, size: "max" }), fc.array(invoiceFilterArb, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 7 }), fc.array(writeArb, { maxLength: 12 }), async (generated, filters, perPage, writes) => {
        const companyId = `cmp_${randomUlid()}`;
        const parts = await partitions(companyId);
        const stores = new Map(parts.map((p) => [p.ordinal, p.db]));
        const docs = placed(companyId, generated, parts, "inv");
        for (const d of docs) await stores.get(d.ordinal)!.insert(invoices).values(invoiceRow(companyId, d));
        for (const f of [{}, ...filters]) {
          const expected = docs.filter((d) => invoiceMatches(f, d)).sort(newestFirst).map((d) => d.id);
          const seen: string[] = [];
          for (let offset = 0; offset < expected.length + perPage; offset += perPage) {
            const page = await listInvoices(env, companyId, f, { perPage, offset });
            expect(page.total).toBe(expected.length);
            seen.push(...page.rows.map((r) => r.id));
          }
          expect(seen).toEqual(expected);
        }
        // Writes between pages: each page still holds only matches in order, and the total follows every write.
        const f = writes.length % 2 ? filters[0]! : {}; // unfiltered or a generated filter while writing
        for (const [i, w] of writes.entries()) {
          await applyInvoiceWrite(stores, docs, w);
          const page = await listInvoices(env, companyId, f, { perPage, offset: i * perPage });
          const expected = docs.filter((d) => invoiceMatches(f, d)).sort(newestFirst).map((d) => d.id);
          expect(page.total).toBe(expected.length);
          expect(page.total).toBe(await plainInvoiceCount(stores, companyId, f));
          expect(page.rows.map((r) => r.id)).toEqual(expected.slice(i * perPage, (i + 1) * perPage));
        }
        for (const db of stores.values()) await expectCountersMatchRows(db, INVOICE_COUNTERS);
        for (const f of COUNTED_INVOICE_FILTERS) expect((await listInvoices(env, companyId, f, { perPage: 1, offset: 0 })).total).toBe(await plainInvoiceCount(stores, companyId, f));
      }),
      { numRuns: 15 },
    );
  });
});

/** Every single counted filter and a date range: after any writes, each total equals the plain count. */
const COUNTED_INVOICE_FILTERS: InvoiceFilters[] = [{}, ...TYPES.map((invoice_type) => ({ invoice_type })), ...STATUSES.map((status) => ({ status })), { from_date: DAYS[1], to_date: DAYS[2] }, { invoice_type: 33, status: "ACCEPTED" }];

describe("deep pages read from the nearer end of a partition", () => {
  it("every page of every size, at every offset, holds one table's rows (partitions of 9, 0 and 10)", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const parts = await partitions(companyId);
    const generated = [...Array.from({ length: 9 }, (_, i) => ({ partition: 0, second: i % 3 })), ...Array.from({ length: 10 }, (_, i) => ({ partition: 2, second: i % 4 }))];
    const docs = placed(companyId, generated.map((g) => ({ ...g, status: "SENT" as const, type: 33 as const, day: DAYS[0], verification: null, state: "PENDING" as const, receivedDay: null })), parts, "inv");
    for (const d of docs) await parts.find((p) => p.ordinal === d.ordinal)!.db.insert(invoices).values(invoiceRow(companyId, d));
    const expected = [...docs].sort(newestFirst).map((d) => d.id);
    for (const perPage of [1, 2, 3, 4, 7, 19, 25])
      for (let offset = 0; offset <= expected.length; offset++) {
        const page = await listInvoices(env, companyId, {}, { perPage, offset });
        expect(page.rows.map((r) => r.id), `${perPage} from ${offset}`).toEqual(expected.slice(offset, offset + perPage));
      }
  });
});

describe("an issue-date range read day by day", () => {
  it("gives one table's pages, newest and oldest first, whatever the days' order against creation (ties included)", async () => {
    const companyId = `cmp_${randomUlid()}`;
    const parts = await partitions(companyId);
    // 90 documents in two partitions, over three issue days unrelated to their creation order.
    const generated = Array.from({ length: 90 }, (_, i) => ({ partition: i % 3 === 0 ? 0 : 2, second: i % 4, status: "SENT" as const, type: TYPES[i % 2]!, day: DAYS[(i * 7) % 3]!, verification: null, state: "PENDING" as const, receivedDay: null }));
    const docs = placed(companyId, generated, parts, "inv");
    for (const d of docs) await parts.find((p) => p.ordinal === d.ordinal)!.db.insert(invoices).values(invoiceRow(companyId, d));
    const before = dayPageReads.count;
    for (const f of [{ from_date: DAYS[0], to_date: DAYS[1] }, { invoice_type: 33, from_date: DAYS[0], to_date: DAYS[1] }, { invoice_type: 39, from_date: DAYS[1], to_date: DAYS[1] }, { from_date: "2026-05-01", to_date: "2026-06-30" }] as InvoiceFilters[]) {
      const expected = docs.filter((d) => invoiceMatches(f, d)).sort(newestFirst).map((d) => d.id);
      for (const perPage of [1, 2, 5, 20])
        for (let offset = 0; offset <= expected.length; offset += perPage) {
          const page = await listInvoices(env, companyId, f, { perPage, offset });
          expect(page.total).toBe(expected.length);
          expect(page.rows.map((r) => r.id), `${JSON.stringify(f)} ${perPage} from ${offset}`).toEqual(expected.slice(offset, offset + perPage));
        }
    }
    // The shallow pages (and, from the partition's end, the deep ones) were read day by day.
    expect(dayPageReads.count - before).toBeGreaterThan(100);
  });
});

// ---------------------------------------------------------------------------------------------
// Received documents

function receivedRow(companyId: string, d: Doc) {
  return { id: d.id, companyId, issuerRut: "76086428-5", documentType: d.type, folio: folioOf(d), xmlSha256: d.id, channel: "UPLOAD", issueDate: d.receivedDay, receptionStatus: d.verification, responseState: d.state, createdAt: d.createdAt } as typeof receivedDocuments.$inferInsert;
}

function receivedMatches(f: ListFilter, d: Doc): boolean {
  const v = d.verification;
  const verification = f.verification === "VERIFIED" ? v === 0 : f.verification === "FAILED" ? v !== null && v >= 1 : f.verification === "PENDING" ? v === null : true;
  const day = d.receivedDay;
  return (f.documentType === undefined || d.type === f.documentType) && verification && (!f.responseState || d.state === f.responseState) && (!f.issueDateFrom || (day !== null && day >= f.issueDateFrom)) && (!f.issueDateTo || (day !== null && day <= f.issueDateTo)) && (f.folio === undefined || folioOf(d) === f.folio);
}

const oldestFirst = (a: Doc, b: Doc) => -newestFirst(a, b);

async function applyReceivedWrite(stores: Map<number, Db>, docs: Doc[], w: Of<typeof writeArb>): Promise<void> {
  if (docs.length === 0) return;
  const d = docs[w.pick % docs.length]!;
  const db = stores.get(d.ordinal)!;
  if (w.kind === "delete") {
    await db.run(sql`DELETE FROM received_documents WHERE id = ${d.id}`);
    docs.splice(docs.indexOf(d), 1);
  } else if (w.kind === "status") {
    // The response and the verification outcome change together, as a verification then a response would.
    const verification = d.verification === null ? 0 : null;
    await db.run(sql`UPDATE received_documents SET response_state = ${w.state}, reception_status = ${verification} WHERE id = ${d.id}`);
    d.state = w.state;
    d.verification = verification;
  } else {
    const day = d.receivedDay === null ? w.day : null;
    await db.run(sql`UPDATE received_documents SET issue_date = ${day} WHERE id = ${d.id}`);
    d.receivedDay = day;
  }
}

describe("received documents: pages and totals across partitions", () => {
  it("pages concatenated give every match once in order, totals equal a plain count (also after writes)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(docArb, { maxLength: 30, size: "max" }), fc.array(receivedFilterArb, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 7 }), fc.array(writeArb, { maxLength: 12 }), async (generated, filters, perPage, writes) => {
        const companyId = `cmp_${randomUlid()}`;
        const parts = await partitions(companyId);
        const stores = new Map(parts.map((p) => [p.ordinal, p.db]));
        const docs = placed(companyId, generated, parts, "rcv");
        for (const d of docs) await stores.get(d.ordinal)!.insert(receivedDocuments).values(receivedRow(companyId, d));
        for (const f of [{}, ...filters]) {
          const expected = docs.filter((d) => receivedMatches(f, d)).sort(oldestFirst).map((d) => d.id);
          const seen: string[] = [];
          for (let offset = 0; offset < expected.length + perPage; offset += perPage) {
            const page = await listReceived(env, companyId, f, { perPage, offset });
            expect(page.total).toBe(expected.length);
            seen.push(...page.rows.map((r) => r.id));
          }
          expect(seen).toEqual(expected);
        }
        const f = writes.length % 2 ? filters[0]! : {}; // unfiltered or a generated filter while writing
        for (const [i, w] of writes.entries()) {
          await applyReceivedWrite(stores, docs, w);
          const page = await listReceived(env, companyId, f, { perPage, offset: i * perPage });
          const expected = docs.filter((d) => receivedMatches(f, d)).sort(oldestFirst).map((d) => d.id);
          expect(page.total).toBe(expected.length);
          expect(page.rows.map((r) => r.id)).toEqual(expected.slice(i * perPage, (i + 1) * perPage));
        }
        for (const db of stores.values()) await expectCountersMatchRows(db, RECEIVED_COUNTERS);
      }),
      { numRuns: 15 },
    );
  });
});
