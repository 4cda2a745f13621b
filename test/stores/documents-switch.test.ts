/**
 * The issued documents' group switching from D1 to the stores (issue 16): `documents` is in
 * SWITCHABLE_GROUPS, so the data migration with its defaults copies a document issued in D1 before
 * the move into the company's store 0 and switches the group. Nothing is lost or doubled: the
 * document is read there with its history, it can be cancelled there (its cancellation claimed in
 * store 0), a replayed Idempotency-Key answers the same document, and its external_reference stays
 * taken (before the switch through D1, after it through the claim the migration made).
 */
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { indexStore, storeFor, storeForId } from "../../src/db/document-store";
import { externalReferences } from "../../src/db/document-store/tables";
import { forgetLegacyState, legacyMoved, SWITCHABLE_GROUPS } from "../../src/db/document-store/legacy";
import { cancellations, invoiceEvents, invoices } from "../../src/db/schema";
import { randomUlid } from "../../src/lib/ids";
import { migrateToStores } from "../../src/operations/store-migration";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, nowLocal, readyIssuer, untilFinal } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

/** A note cancelling our sample 33 (total 9926) by folio. */
function cancelling(rut: string, folio: number) {
  return {
    ...invoiceBody(rut, "61"),
    invoice_type: "NCV",
    reason_code: "ANU",
    items: [{ quantity: 1, unit_price: 9926, description: "Anula factura", taxes: [{ type: "EXE" }] }],
    billing_reference: [{ number: folio, invoice_type: "33", invoice_date: nowLocal().slice(0, 10), reason: "Anula documento" }],
  };
}

describe("the documents group switches to the stores", () => {
  it("a document issued in D1: read, cancelled, its reference kept and an Idempotency-Key replayed after the data migration", async () => {
    expect(SWITCHABLE_GROUPS).toContain("documents");
    const issuer = await readyIssuer([33, 61], 10);
    const key = crypto.randomUUID();
    const first = invoiceBody(issuer.rut, "33", { external_reference: `NEW-${randomUlid()}` });
    const posted = await issue(issuer, first, { "Idempotency-Key": key });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const issued = await untilFinal(issuer, posted.body.id);
    expect(issued.status).toBe("ACCEPTED");

    // Fixture: a document issued before the move, in D1 (a legacy id, its own folio and reference).
    const [row] = await storeForId(env, issuer.companyId, issued.id)!.db.select().from(invoices).where(eq(invoices.id, issued.id));
    const legacyId = `inv_${randomUlid()}`;
    const reference = `OLD-${randomUlid()}`;
    const d1 = createDb(env.DB);
    await d1.insert(invoices).values({ ...row!, id: legacyId, folio: 900, externalReference: reference, envelopeId: null });
    await d1.insert(invoiceEvents).values({ id: `evt_${randomUlid()}`, invoiceId: legacyId, status: "ACCEPTED", message: "issued in D1", createdAt: row!.createdAt });
    // Nothing adds a legacy row in service: the isolate learns D1's legacy rows as one started after them would.
    forgetLegacyState();

    // Before the switch the old reference is held through D1 (it has no claim yet).
    const early = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: reference }));
    expectError(early, 409, "INVOICE_DUPLICATE_EXTERNAL_REFERENCE");
    expect(early.body.error.message).toContain(legacyId);

    // The data migration with its defaults copies everything and switches the group.
    let step;
    do step = await migrateToStores(env, 500);
    while (!step.done);
    expect(await legacyMoved(env, "documents")).toBe(true);
    expect(await env.DB.prepare("UPDATE invoices SET attempts = attempts + 1 WHERE id = ?").bind(legacyId).run().then(() => "written", (e: unknown) => String(e))).toContain("LEGACY_MOVED");
    const store0 = storeFor(env, issuer.companyId, 0).db;
    expect((await store0.select({ id: invoices.id }).from(invoices)).map((r) => r.id)).toEqual([legacyId]);
    const [claim] = await indexStore(env, issuer.companyId).select().from(externalReferences).where(eq(externalReferences.reference, reference));
    expect(claim?.invoiceId).toBe(legacyId);

    // Reads: the document and its history from store 0; the list holds each document once.
    const got = await call("GET", `${issuer.base}/invoices/${legacyId}`, { key: issuer.owner.key });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body).toMatchObject({ id: legacyId, folio: 900, status: "ACCEPTED", external_reference: reference });
    expect(JSON.stringify(got.body)).toContain("issued in D1");
    const list = await call("GET", `${issuer.base}/invoices?per_page=50`, { key: issuer.owner.key });
    expect(list.body.data.map((d: { id: string }) => d.id).sort()).toEqual([issued.id, legacyId].sort());

    // The replayed Idempotency-Key answers the same document, and nothing new is stored.
    const replay = await issue(issuer, first, { "Idempotency-Key": key });
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(issued.id);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");

    // The old reference stays taken, now through the migration's claim.
    const reused = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: reference }));
    expectError(reused, 409, "INVOICE_DUPLICATE_EXTERNAL_REFERENCE");
    expect(reused.body.error.message).toContain(legacyId);
    expect(await storeRows(issuer.companyId, sql`SELECT id FROM invoices WHERE external_reference = ${reference}`)).toEqual([{ id: legacyId }]);

    // Cancellation: found by folio in store 0, claimed there, once.
    const note = await issue(issuer, cancelling(issuer.rut, 900));
    expect(note.status, JSON.stringify(note.body)).toBe(202);
    expect(note.body.cancels_invoice_id).toBe(legacyId);
    expect(await store0.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, legacyId))).toMatchObject([{ creditNoteId: note.body.id }]);
    expectError(await issue(issuer, cancelling(issuer.rut, 900)), 409, "INVOICE_ALREADY_CANCELLED");
    expect((await untilFinal(issuer, note.body.id)).status).toBe("ACCEPTED");
    expect((await call("GET", `${issuer.base}/invoices/${legacyId}`, { key: issuer.owner.key })).body.cancelled_by).toBe(note.body.id);
    // Nothing of it went back to D1.
    expect((await env.DB.prepare("SELECT count(*) AS n FROM cancellations WHERE cancelled_invoice_id = ?").bind(legacyId).first<{ n: number }>())!.n).toBe(0);
  });
});
