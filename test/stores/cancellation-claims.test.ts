/**
 * A note's cancellation lives in the cancelled document's partition: the POST claims it
 * there before it stores the note in the open partition, the pipeline releases it there when the note
 * is REJECTED, and a claim whose note was never stored (its request died after the claim) blocks the
 * document only while that request could still store it.
 */
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { closePartition, openStore, partitionedId, storeForId } from "../../src/storage/db/document-store";
import { cancellations, invoices } from "../../src/storage/db/schema";
import { UNSTORED_CLAIM_GRACE_MS } from "../../src/invoices/cancellation-claims";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, nowLocal, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33, 61], 20);
});
afterEach(async () => {
  await call("DELETE", "/simulator/sii/scenario", { key: issuer.owner.key });
});

/** A note cancelling our sample 33 (total 9926) by folio. */
function cancelling(folio: number) {
  return {
    ...invoiceBody(issuer.rut, "61"),
    invoice_type: "NCV",
    reason_code: "ANU",
    items: [{ quantity: 1, unit_price: 9926, description: "Anula factura", taxes: [{ type: "EXE" }] }],
    billing_reference: [{ number: folio, invoice_type: "33", invoice_date: nowLocal().slice(0, 10), reason: "Anula documento" }],
  };
}

/** An accepted 33 copied under `folio` into the partition `store` (a fixture standing for a document issued there). */
async function placeCopy(store: Awaited<ReturnType<typeof openStore>>, folio: number, createdAt: string) {
  const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
  const done = await untilFinal(issuer, res.body.id);
  expect(done.status).toBe("ACCEPTED");
  const [row] = await storeForId(env, issuer.companyId, done.id)!.db.select().from(invoices).where(eq(invoices.id, done.id));
  const id = partitionedId("inv", store.ordinal);
  await store.db.insert(invoices).values({ ...row!, id, folio, externalReference: null, createdAt });
  return id;
}

describe("cancellation claims in the cancelled document's partition", () => {
  it("a document in last month's closed store: the note in the open store claims there, a rejection releases there", async () => {
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 10, 12));
    const old = await openStore(env, issuer.companyId, lastMonth);
    const targetId = await placeCopy(old, 91_001, lastMonth.toISOString());
    await closePartition(env, issuer.companyId, old.ordinal, "MONTH_END", null);
    const current = await openStore(env, issuer.companyId);
    expect(current.ordinal).toBeGreaterThan(old.ordinal);

    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const note = await issue(issuer, cancelling(91_001));
    expect(note.status, JSON.stringify(note.body)).toBe(202);
    expect(note.body.id).toMatch(new RegExp(`^inv_p${current.ordinal}_`));
    expect(note.body.cancels_invoice_id).toBe(targetId);
    // The claim is in the old store only.
    expect((await old.db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId))).map((c) => c.creditNoteId)).toEqual([note.body.id]);
    expect(await current.db.select().from(cancellations).where(eq(cancellations.creditNoteId, note.body.id))).toEqual([]);
    // A second note while the first holds it: refused.
    const second = await issue(issuer, cancelling(91_001));
    expectError(second, 409, "INVOICE_ALREADY_CANCELLED");
    expect(second.body.error.message).toContain(note.body.id);

    expect((await untilFinal(issuer, note.body.id)).status).toBe("REJECTED");
    expect(await storeRows(issuer.companyId, `SELECT * FROM cancellations WHERE cancelled_invoice_id = '${targetId}'`)).toEqual([]);
    const again = await issue(issuer, cancelling(91_001));
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect((await untilFinal(issuer, again.body.id)).status).toBe("ACCEPTED");
    expect((await call("GET", `${issuer.base}/invoices/${targetId}`, { key: issuer.owner.key })).body.cancelled_by).toBe(again.body.id);
  });

  it("a claim whose note was never stored blocks the document only within its grace, then is taken over", async () => {
    const store = await openStore(env, issuer.companyId);
    const targetId = await placeCopy(store, 91_002, new Date().toISOString());
    const ghost = partitionedId("inv", store.ordinal); // a note whose POST died after its claim
    const claim = (ageMs: number) => store.db.insert(cancellations).values({ cancelledInvoiceId: targetId, creditNoteId: ghost, createdAt: new Date(Date.now() - ageMs).toISOString() });
    await claim(60_000);
    const blocked = await issue(issuer, cancelling(91_002));
    expectError(blocked, 409, "INVOICE_ALREADY_CANCELLED");
    expect(blocked.body.error.message).toContain(ghost);

    await store.db.delete(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId));
    await claim(UNSTORED_CLAIM_GRACE_MS + 60_000);
    const note = await issue(issuer, cancelling(91_002));
    expect(note.status, JSON.stringify(note.body)).toBe(202);
    expect((await store.db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId))).map((c) => c.creditNoteId)).toEqual([note.body.id]);
  });
});
