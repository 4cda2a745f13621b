import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { indexStore, openPartition, partitionsOf, storeFor } from "../../src/db/document-store";
import { receivedKeys } from "../../src/db/document-store/tables";
import { LEGACY_GROUPS, type LegacyGroup } from "../../src/db/document-store/legacy";
import { claimKeys } from "../../src/reception/keys";
import { randomUlid } from "../../src/lib/ids";
import { MOVED_TABLES, migrateToStores } from "../../src/operations/store-migration";
import { migrateDocumentStores } from "../../src/cron";
import { newCompany, newOwner } from "../helpers/api";

/** Every legacy group is switched in these tests (the issued documents too, which production does not switch yet). */
const ALL_GROUPS = Object.keys(LEGACY_GROUPS) as LegacyGroup[];

/**
 * The data migration of issue 16: rows seeded in the old D1 tables are copied into each company's
 * legacy store (partition 0) by runs interrupted every few rows, then run again, then run again from
 * a cursor set back (a crash after a chunk was written but before its cursor moved); every row is
 * compared, column by column, each time.
 */
const id = (prefix: string) => `${prefix}_${randomUlid()}`;
let companies: string[] = [];

async function run(sql: string, ...params: unknown[]) {
  await env.DB.prepare(sql).bind(...params).run();
}

async function seedCompany(companyId: string, n: number) {
  const envelope = id("env");
  const invoiceIds: string[] = [];
  for (let i = 0; i < n; i++) {
    const inv = id("inv");
    invoiceIds.push(inv);
    await run(
      `INSERT INTO invoices (id, company_id, document_type, status, fiscal_status, folio, external_reference, issue_date, recipient_rut, recipient_name, currency, total, body, envelope_id, attempts, last_error)
       VALUES (?, ?, 33, ?, ?, ?, ?, '2026-10-0${i + 1}', '77879240-0', 'Cliente Ñuñoa Ltda', 'CLP', ?, ?, ?, ?, ?)`,
      inv, companyId, i === 0 ? "ACCEPTED" : "SENT", i === 0 ? "DOK" : null, i + 1, i === 0 ? `ERP-${companyId}` : null, String(1190 * (i + 1)), JSON.stringify({ i, text: "Bebida €" }), envelope, i, i === 1 ? "SII down" : null,
    );
    for (const status of ["RECEIVED", "GENERATED"]) await run("INSERT INTO invoice_events (id, invoice_id, status, message) VALUES (?, ?, ?, ?)", `${id("evt")}:${inv}`, inv, status, `${status} ok`);
  }
  await run("INSERT INTO cancellations (cancelled_invoice_id, credit_note_id) VALUES (?, ?)", invoiceIds[0], invoiceIds[1]);
  await run("INSERT INTO envelopes (id, company_id, kind, xml_key, document_count, status, track_id, polls) VALUES (?, ?, 'EnvioDTE', ?, ?, 'SENT', '123', 2)", envelope, companyId, `companies/${companyId}/envelopes/${envelope}.xml`, n);
  const event = id("evt");
  await run("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, dispatched_at) VALUES (?, ?, 'invoice.accepted', ?, '{\"a\":1}', NULL)", event, companyId, `invoice:${invoiceIds[0]}:ACCEPTED`);
  await run("INSERT INTO event_outbox (id, company_id, type, dedupe_key, payload, dispatched_at) VALUES (?, ?, 'ENU', ?, '{}', '2026-11-01T00:00:00.000Z')", id("evt"), companyId, `ENU:${companyId}`);
  const delivery = id("dlv");
  await run("INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at) VALUES (?, ?, ?, ?, 'invoice.accepted', 'PENDING', 2, '2026-11-23T00:00:00.000Z')", delivery, companyId, id("whk"), event);
  for (const attempt of [1, 2]) {
    await run("INSERT INTO webhook_attempts (id, company_id, delivery_id, endpoint_id, event_id, event_type, attempt, started_at, duration_ms, response_status, response_body) VALUES (?, ?, ?, 'whk_x', ?, 'invoice.accepted', ?, '2026-11-22T00:00:00.000Z', 15, 500, 'oops')", id("att"), companyId, delivery, event, attempt);
  }
  const message = id("inm");
  await run("INSERT INTO inbound_messages (id, company_id, channel, sender, size, outcome, documents) VALUES (?, ?, 'EMAIL', 'proveedor@example.cl', 2048, 'ACCEPTED', 1)", message, companyId);
  await run("INSERT INTO received_documents (id, company_id, issuer_rut, document_type, folio, channel, message_id, xml_sha256, summary, responses) VALUES (?, ?, '76086428-5', 33, 77, 'EMAIL', ?, ?, '{\"total\":100}', '[]')", id("rcv"), companyId, message, `sha-${companyId}`);
}

/** Every D1 row that belongs to a company, and every row of that company's legacy store, per table (sorted by key). */
async function snapshot() {
  const out: Record<string, { d1: unknown[]; stores: unknown[] }> = {};
  for (const t of MOVED_TABLES) {
    const d1 = (await env.DB.prepare(`SELECT t.* FROM ${t.name} t WHERE ${t.company} IS NOT NULL ORDER BY t.${t.key}`).all()).results;
    const stores: Record<string, unknown>[] = [];
    for (const c of companies) stores.push(...((await storeFor(env, c, 0).db.$client.prepare(`SELECT * FROM ${t.name}`).all()).results as Record<string, unknown>[]));
    stores.sort((a, b) => String(a[t.key]).localeCompare(String(b[t.key])));
    out[t.name] = { d1, stores };
  }
  return out;
}

beforeAll(async () => {
  const owner = await newOwner();
  companies = [await newCompany(owner), await newCompany(owner), await newCompany(owner)];
  for (const [i, c] of companies.entries()) await seedCompany(c, i + 2);
  // Rows of no company: they stay in D1.
  await run("INSERT INTO inbound_messages (id, company_id, channel, size, outcome) VALUES (?, NULL, 'EMAIL', 10, 'UNKNOWN_ADDRESS')", id("inm"));
  await run("INSERT INTO invoice_events (id, invoice_id, status) VALUES (?, 'inv_gone', 'RECEIVED')", id("evt"));
});

describe("copying the moved D1 tables into the document stores", () => {
  it("an interrupted run resumes and, once done, every row is in its company's legacy store", async () => {
    let steps = 0;
    for (;;) {
      const step = await migrateToStores(env, 7, ALL_GROUPS);
      steps++;
      expect(step.rows).toBeLessThanOrEqual(7);
      if (step.done) break;
      expect(steps).toBeLessThan(100);
    }
    expect(steps).toBeGreaterThan(5);
    const snap = await snapshot();
    for (const [table, { d1, stores }] of Object.entries(snap)) {
      expect(d1.length, table).toBeGreaterThan(0);
      expect(stores, table).toEqual(d1);
    }
    expect(snap.invoices!.d1).toHaveLength(2 + 3 + 4);
    const progress = (await env.DB.prepare("SELECT table_name, copied, skipped, finished_at FROM store_migration ORDER BY table_name").all<{ table_name: string; copied: number; skipped: number; finished_at: string | null }>()).results;
    expect(progress.map((p) => p.table_name).sort()).toEqual(MOVED_TABLES.map((t) => t.name).sort());
    expect(progress.every((p) => p.finished_at !== null)).toBe(true);
    const byTable = Object.fromEntries(progress.map((p) => [p.table_name, p]));
    expect(byTable.invoices).toMatchObject({ copied: 9, skipped: 0 });
    expect(byTable.inbound_messages).toMatchObject({ copied: 3, skipped: 1 });
    expect(byTable.invoice_events).toMatchObject({ copied: 18, skipped: 1 });
  });

  it("copied received documents hold their keys in the company's index store: the same XML received again is that document", async () => {
    for (const c of companies) {
      const legacy = (await env.DB.prepare("SELECT id, xml_sha256 FROM received_documents WHERE company_id = ?").bind(c).first<{ id: string; xml_sha256: string }>())!;
      const keys = await indexStore(env, c).select().from(receivedKeys);
      expect(keys.map((k) => [k.issuerRut, k.documentType, k.folio, k.xmlSha256, k.documentId])).toEqual([["76086428-5", 33, 77, legacy.xml_sha256, legacy.id]]);
      const [again, other] = await claimKeys(env, c, [{ issuerRut: "76086428-5", documentType: 33, folio: 77, sha: legacy.xml_sha256 }, { issuerRut: "76086428-5", documentType: 33, folio: 77, sha: "another" }], ["rcv_p1_01JZZZZZZZZZZZZZZZZZZZZZZ1", "rcv_p1_01JZZZZZZZZZZZZZZZZZZZZZZ2"]);
      expect(again).toEqual({ documentId: legacy.id, kind: "HELD", duplicate: false });
      expect(other).toMatchObject({ kind: "NEW", duplicate: true });
      await indexStore(env, c).delete(receivedKeys).where(eq(receivedKeys.xmlSha256, "another"));
    }
  });

  it("a second run copies nothing and changes nothing", async () => {
    const before = await snapshot();
    expect(await migrateToStores(env, 7, ALL_GROUPS)).toEqual({ done: true, rows: 0 });
    expect(await snapshot()).toEqual(before);
  });

  it("a run from a cursor set back (a chunk written, its cursor lost) rewrites the same rows and loses none", async () => {
    const before = await snapshot();
    await run("UPDATE store_migration SET cursor = '', copied_at = NULL, finished_at = NULL WHERE table_name IN ('invoices', 'webhook_attempts')");
    let step;
    do step = await migrateToStores(env, 5, ALL_GROUPS);
    while (!step.done);
    expect(await snapshot()).toEqual(before);
  });

  it("records each company's legacy partition, closed, and new documents open partition 1", async () => {
    for (const c of companies) {
      expect((await partitionsOf(env, c)).map((p) => [p.ordinal, p.closedReason, p.closedAt !== null])).toEqual([[0, "LEGACY", true]]);
      expect((await openPartition(env, c)).ordinal).toBe(1);
    }
  });

  it("the cron step copies only while DOCUMENT_STORE_MIGRATION is on", async () => {
    await run("DELETE FROM store_migration");
    const late = id("inv");
    await run(
      `INSERT INTO invoices (id, company_id, document_type, status, issue_date, recipient_rut, recipient_name, currency, total, body) VALUES (?, ?, 39, 'RECEIVED', '2026-11-23', '66666666-6', 'Boleta', 'CLP', '990', '{}')`,
      late, companies[0],
    );
    const inStore = async () => (await storeFor(env, companies[0]!, 0).db.$client.prepare("SELECT id FROM invoices WHERE id = ?").bind(late).all()).results.length;
    await migrateDocumentStores({ ...env, DOCUMENT_STORE_MIGRATION: "off" }, new Date());
    expect(await inStore()).toBe(0);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM store_migration").first<{ n: number }>())!.n).toBe(0);
    await migrateDocumentStores({ ...env, DOCUMENT_STORE_MIGRATION: "on" }, new Date());
    expect(await inStore()).toBe(1);
    const after = await snapshot();
    for (const [table, { d1, stores }] of Object.entries(after)) expect(stores, table).toEqual(d1);
  });
});
