/**
 * external_reference claimed in the company's index store by the POST: one winner under
 * concurrency, a claim given back when the POST stores nothing, and released when the pipeline ends
 * the document FAILED.
 */
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { indexStore, storeForId } from "../../src/storage/db/document-store";
import { externalReferences } from "../../src/storage/db/document-store/tables";
import { invoices } from "../../src/storage/db/schema";
import { fail, type StepDeps } from "../../src/invoices/pipeline/steps";
import { companyControlChanged } from "../../src/accounts/companies/control-cache";
import { expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

const holderOf = async (companyId: string, reference: string) =>
  (await indexStore(env, companyId).select().from(externalReferences).where(eq(externalReferences.reference, reference)))[0]?.invoiceId ?? null;

describe("external_reference claims at POST", () => {
  it("12 concurrent POSTs with one reference: one 202, eleven 409 naming it, and the index holds it", async () => {
    const issuer = await readyIssuer([33], 30);
    const ref = `ERP-${crypto.randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 12 }, () => issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref }))));
    const accepted = results.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    const winner = accepted[0]!.body.id as string;
    for (const r of results.filter((x) => x.status !== 202)) {
      expectError(r, 409, "INVOICE_DUPLICATE_EXTERNAL_REFERENCE");
      expect(r.body.error.message).toContain(winner);
    }
    expect(await holderOf(issuer.companyId, ref)).toBe(winner);
    const stored = await storeRows<{ id: string }>(issuer.companyId, sql`SELECT id FROM invoices WHERE company_id = ${issuer.companyId} AND external_reference = ${ref}`);
    expect(stored.map((r) => r.id)).toEqual([winner]);
    expect((await untilFinal(issuer, winner)).status).toBe("ACCEPTED");
  });

  it("a POST refused after its claim gives the reference back", async () => {
    const issuer = await readyIssuer([33], 5);
    const ref = `ERP-${crypto.randomUUID()}`;
    // Refused by the folio reservation (a date before the CAF's authorisation): before any claim.
    const early = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref, invoice_date: "2001-01-01 10:00:00" }));
    expect(early.status).toBeGreaterThanOrEqual(400);
    expect(await holderOf(issuer.companyId, ref)).toBeNull();
    // Refused by the D1 check (no active certificate), before the claim: nothing is held.
    await env.DB.prepare("UPDATE certificates SET active = 0 WHERE company_id = ?").bind(issuer.companyId).run();
    await companyControlChanged(env, issuer.companyId); // changed behind the API's back: the caches are told
    const refused = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref }));
    expectError(refused, 422, "CERTIFICATE_REQUIRED");
    expect(await holderOf(issuer.companyId, ref)).toBeNull();
    await env.DB.prepare("UPDATE certificates SET active = 1 WHERE company_id = ?").bind(issuer.companyId).run();
    await companyControlChanged(env, issuer.companyId);
    const ok = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect(await holderOf(issuer.companyId, ref)).toBe(ok.body.id);
  });

  it("the pipeline's FAIL releases the reference, and the next document takes it", async () => {
    const issuer = await readyIssuer([33], 5);
    const ref = `ERP-${crypto.randomUUID()}`;
    const first = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref }));
    expect(first.status).toBe(202);
    await untilFinal(issuer, first.body.id);
    // State fixture: the document back in a state the pipeline fails from, then the pipeline's own fail step.
    const store = storeForId(env, issuer.companyId, first.body.id)!;
    await store.db.update(invoices).set({ status: "SIGNED" }).where(eq(invoices.id, first.body.id));
    const [row] = await store.db.select().from(invoices).where(eq(invoices.id, first.body.id));
    const deps = { db: createDb(env.DB), store: store.db, ordinal: store.ordinal, env, authority: undefined as never, now: () => new Date() } satisfies StepDeps;
    expect((await fail(deps, row!, "test failure"))?.status).toBe("FAILED");
    expect(await holderOf(issuer.companyId, ref)).toBeNull();
    const next = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ref }));
    expect(next.status, JSON.stringify(next.body)).toBe(202);
    expect(await holderOf(issuer.companyId, ref)).toBe(next.body.id);
  });
});
