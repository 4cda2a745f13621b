/**
 * The issuance pipeline against a document store (issue 16): a document whose id names a store
 * partition is moved RECEIVED → ACCEPTED in that store (its history and its envelope with it, the
 * envelope's id naming the same partition), nothing of it is written to D1, and the cron sweep finds
 * it there when its queue message was lost. Until the POST writes new documents to the open store,
 * the fixture is a document issued without its queue message and moved into the store by hand.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { sweepStuckDocuments } from "../../src/cron";
import { createDb } from "../../src/db/client";
import { openStore, partitionedId } from "../../src/db/document-store";
import { invoiceEvents, invoices } from "../../src/db/schema";
import { findCompanyForClient } from "../../src/domain/companies/repository";
import { allocator } from "../../src/domain/folios/cafs";
import { issueInvoice } from "../../src/domain/invoices/issue";
import { invoiceBody, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33], 10);
});

/** A RECEIVED document (with its first history row and folio reservation) in the company's open store, never queued. */
async function receivedInStore(updatedAt = new Date().toISOString()) {
  const company = (await findCompanyForClient(createDb(env.DB), issuer.companyId))!;
  const silentEnv = { ...env, ISSUANCE_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  const d1Row = await issueInvoice(createDb(env.DB), silentEnv, company, invoiceBody(issuer.rut, "33"), "req_test");
  await env.DB.batch([env.DB.prepare("DELETE FROM invoice_events WHERE invoice_id = ?").bind(d1Row.id), env.DB.prepare("DELETE FROM invoices WHERE id = ?").bind(d1Row.id)]);
  const folios = allocator(env, issuer.companyId, 33);
  await folios.release(d1Row.id);
  const store = await openStore(env, issuer.companyId);
  const id = partitionedId("inv", store.ordinal);
  expect(await folios.reserve(id, { issueDate: d1Row.issueDate })).toMatchObject({ ok: true });
  await store.db.batch([
    store.db.insert(invoices).values({ ...d1Row, id, updatedAt }),
    store.db.insert(invoiceEvents).values({ id: `evt_${crypto.randomUUID().replace(/-/g, "").slice(0, 26).toUpperCase()}`, invoiceId: id, status: "RECEIVED", message: "Received", createdAt: d1Row.createdAt }),
  ]);
  return { id, ordinal: store.ordinal };
}

describe("the pipeline in a document store", () => {
  it("a lost queue message: the sweep finds the document in its store, which takes it to ACCEPTED with its envelope, D1 untouched", async () => {
    const { id, ordinal } = await receivedInStore(new Date(Date.now() - 11 * 60_000).toISOString());
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const done = await untilFinal(issuer, id);
    expect(done.status).toBe("ACCEPTED");
    expect(done.folio).toBeGreaterThan(0);

    const [row] = await storeRows<{ status: string; envelope_id: string }>(issuer.companyId, sql`SELECT status, envelope_id FROM invoices WHERE id = ${id}`);
    expect(row).toMatchObject({ status: "ACCEPTED" });
    expect(row!.envelope_id).toMatch(new RegExp(`^env_p${ordinal}_[0-9A-Z]{26}$`));
    const envelopes = await storeRows<{ status: string; document_count: number }>(issuer.companyId, sql`SELECT status, document_count FROM envelopes WHERE id = ${row!.envelope_id}`);
    expect(envelopes).toEqual([{ status: "DONE", document_count: 1 }]);
    const history = (await storeRows<{ status: string }>(issuer.companyId, sql`SELECT status FROM invoice_events WHERE invoice_id = ${id} ORDER BY created_at, id`)).map((e) => e.status);
    // Polls record the SII's intermediate codes as further SENT rows.
    expect(history.filter((s, i) => s !== history[i - 1])).toEqual(["RECEIVED", "GENERATED", "SIGNED", "SENT", "ACCEPTED"]);

    const d1 = createDb(env.DB);
    expect(await d1.select().from(invoices).where(eq(invoices.id, id))).toEqual([]);
    expect(await d1.select().from(invoiceEvents).where(eq(invoiceEvents.invoiceId, id))).toEqual([]);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM envelopes WHERE id = ?").bind(row!.envelope_id).first<{ n: number }>())!.n).toBe(0);
  });

  it("the sweep re-drives a stale document of a store and leaves a fresh one alone", async () => {
    const stale = await receivedInStore(new Date(Date.now() - 11 * 60_000).toISOString());
    const fresh = await receivedInStore();
    const sent: { body: { invoice_id?: string } }[] = [];
    const capture = { send: async () => undefined, sendBatch: async (m: typeof sent) => void sent.push(...m) } as unknown as Queue;
    await sweepStuckDocuments({ ...env, ISSUANCE_QUEUE: capture }, new Date());
    const ids = sent.map((m) => m.body.invoice_id);
    expect(ids).toContain(stale.id);
    expect(ids).not.toContain(fresh.id);
  });
});
