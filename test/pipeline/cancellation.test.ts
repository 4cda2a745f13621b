import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { closePartition, indexStore, openStore, partitionedId, storeForId } from "../../src/storage/db/document-store";
import { creditClaims } from "../../src/storage/db/document-store/tables";
import { cancellations, invoices } from "../../src/storage/db/schema";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, nowLocal, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";

/** §4.9: cancelling (and correcting) documents with notes through POST /invoices. */
let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33, 52, 56, 61, 110, 112], 100);
});
afterEach(async () => {
  await call("DELETE", "/simulator/sii/scenario", { key: issuer.owner.key });
});

async function accepted(name: string) {
  const res = await issue(issuer, invoiceBody(issuer.rut, name));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const done = await untilFinal(issuer, res.body.id);
  expect(done.status).toBe("ACCEPTED");
  return done;
}

/** A cancellation of our sample 33 carries its exact total (9926): one exempt line of that amount. */
const CANCELS_SAMPLE_33 = [{ quantity: 1, unit_price: 9926, description: "Anula factura", taxes: [{ type: "EXE" }] }];

function note(type: string, reason: string, ref: { folio: number; type: string }, extra: Record<string, unknown> = {}) {
  const base = invoiceBody(issuer.rut, type === "NCE" || type === "112" ? "112" : "61");
  if (reason === "ANU" && ref.type === "33") base.items = CANCELS_SAMPLE_33;
  return {
    ...base,
    invoice_type: type,
    reason_code: reason,
    billing_reference: [{ number: ref.folio, invoice_type: ref.type, invoice_date: nowLocal().slice(0, 10), reason: "Anula documento" }],
    ...extra,
  };
}

describe("cancellation (NCV + ANU + billing_reference)", () => {
  it("cancels our accepted factura once; a second cancellation is refused", async () => {
    const original = await accepted("33");
    const first = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.cancels_invoice_id).toBe(original.id);
    expect((await untilFinal(issuer, first.body.id)).status).toBe("ACCEPTED");
    const after = (await call("GET", `${issuer.base}/invoices/${original.id}`, { key: issuer.owner.key })).body;
    expect(after.cancelled_by).toBe(first.body.id);
    const again = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expectError(again, 409, "INVOICE_ALREADY_CANCELLED");
    expect(again.body.error.message).toContain(first.body.id);
    // the signed note carries the reference with CodRef 1
    const xml = new TextDecoder("latin1").decode(await (await call("GET", `${issuer.base}/invoices/${first.body.id}/xml`, { key: issuer.owner.key })).raw.arrayBuffer());
    expect(xml).toMatch(new RegExp(`<TpoDocRef>33</TpoDocRef>[\\s\\S]*<FolioRef>${original.folio}</FolioRef>[\\s\\S]*<CodRef>1</CodRef>`));
  });

  it("two concurrent cancellations of one document: exactly one is accepted", async () => {
    const original = await accepted("33");
    const [a, b] = await Promise.all([issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" })), issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }))]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    await untilFinal(issuer, (a.status === 202 ? a : b).body.id);
  });

  it("a note of the wrong type is refused: export invoices are cancelled by 112, not 61", async () => {
    const exportInvoice = await accepted("110");
    const wrong = await issue(issuer, note("NCV", "ANU", { folio: exportInvoice.folio, type: "110" }));
    expectError(wrong, 422, "INVOICE_CANCELLATION_TYPE_MISMATCH");
    expect(wrong.body.error.message).toContain("112");
    const right = await issue(issuer, note("NCE", "ANU", { folio: exportInvoice.folio, type: "110" }, { currency: { code: "USD" } }));
    expect(right.status, JSON.stringify(right.body)).toBe(202);
    expect((await untilFinal(issuer, right.body.id)).status).toBe("ACCEPTED");
  });

  it("a guía de despacho (52) is not cancellable", async () => {
    const guia = await accepted("52");
    expectError(await issue(issuer, note("NCV", "ANU", { folio: guia.folio, type: "52" })), 422, "INVOICE_NOT_CANCELLABLE");
  });

  it("a rejected document of ours is not cancellable", async () => {
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const rejected = await untilFinal(issuer, res.body.id);
    expect(rejected.status).toBe("REJECTED");
    expectError(await issue(issuer, note("NCV", "ANU", { folio: rejected.folio, type: "33" })), 422, "INVOICE_NOT_CANCELLABLE");
  });

  it("documents in store partitions are found by folio: a rejected one and one already cancelled there are refused", async () => {
    const done = await accepted("33");
    const [issued] = await storeForId(env, issuer.companyId, done.id)!.db.select().from(invoices).where(eq(invoices.id, done.id));
    // Fixtures: copies under unused folios in last month's (closed) partition and the open one.
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 10, 12));
    const old = await openStore(env, issuer.companyId, lastMonth);
    const rejectedId = partitionedId("inv", old.ordinal);
    await old.db.insert(invoices).values({ ...issued!, id: rejectedId, externalReference: null, folio: 90_001, status: "REJECTED", createdAt: lastMonth.toISOString() });
    await closePartition(env, issuer.companyId, old.ordinal, "MONTH_END", null);
    const current = await openStore(env, issuer.companyId);
    expect(current.ordinal).toBeGreaterThan(old.ordinal);
    const cancelledId = partitionedId("inv", current.ordinal);
    const noteId = partitionedId("inv", current.ordinal);
    await current.db.batch([
      current.db.insert(invoices).values({ ...issued!, id: cancelledId, externalReference: null, folio: 90_002 }),
      current.db.insert(cancellations).values({ cancelledInvoiceId: cancelledId, creditNoteId: noteId, createdAt: new Date().toISOString() }),
    ]);
    const refused = await issue(issuer, note("NCV", "ANU", { folio: 90_001, type: "33" }));
    expectError(refused, 422, "INVOICE_NOT_CANCELLABLE");
    expect(refused.body.error.message).toContain(rejectedId);
    const twice = await issue(issuer, note("NCV", "ANU", { folio: 90_002, type: "33" }));
    expectError(twice, 409, "INVOICE_ALREADY_CANCELLED");
    expect(twice.body.error.message).toContain(noteId);
  });

  it("a document issued elsewhere passes unchanged to the SII", async () => {
    const res = await issue(issuer, note("NCV", "ANU", { folio: 987654, type: "33" }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.cancels_invoice_id).toBeNull();
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("ACCEPTED");
    const xml = new TextDecoder("latin1").decode(await (await call("GET", `${issuer.base}/invoices/${done.id}/xml`, { key: issuer.owner.key })).raw.arrayBuffer());
    expect(xml).toContain("<FolioRef>987654</FolioRef>");
  });

  it("when the cancelling note is rejected, the document can be cancelled again", async () => {
    const original = await accepted("33");
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const first = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expect((await untilFinal(issuer, first.body.id)).status).toBe("REJECTED");
    const second = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    expect((await untilFinal(issuer, second.body.id)).status).toBe("ACCEPTED");
  });

  it("a note's cancellation is claimed in the cancelled document's store, and released there when the note is rejected", async () => {
    const done = await accepted("33");
    const [issued] = await storeForId(env, issuer.companyId, done.id)!.db.select().from(invoices).where(eq(invoices.id, done.id));
    const store = await openStore(env, issuer.companyId);
    const targetId = partitionedId("inv", store.ordinal);
    await store.db.insert(invoices).values({ ...issued!, id: targetId, externalReference: null, folio: 90_003 });
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const first = await issue(issuer, note("NCV", "ANU", { folio: 90_003, type: "33" }));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.cancels_invoice_id).toBe(targetId);
    const claim = await store.db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId));
    expect(claim.map((c) => c.creditNoteId)).toEqual([first.body.id]);
    expect((await untilFinal(issuer, first.body.id)).status).toBe("REJECTED");
    expect(await store.db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, targetId))).toEqual([]);
    const again = await issue(issuer, note("NCV", "ANU", { folio: 90_003, type: "33" }));
    expect(again.status, JSON.stringify(again.body)).toBe(202);
  });

  it("text (COT) and amount (COM) corrections, and a debit note cancelling a credit note", async () => {
    const original = await accepted("33");
    const cot = await issue(issuer, {
      ...note("NCV", "COT", { folio: original.folio, type: "33" }),
      items: [{ quantity: 1, unit_price: 0, description: "Corrige giro del receptor" }],
    });
    expect(cot.status, JSON.stringify(cot.body)).toBe(202);
    expect((await untilFinal(issuer, cot.body.id)).status).toBe("ACCEPTED");
    const com = await issue(issuer, { ...note("NCV", "COM", { folio: original.folio, type: "33" }), items: [{ quantity: 1, unit_price: 500, description: "Descuento posterior" }] });
    expect((await untilFinal(issuer, com.body.id)).status).toBe("ACCEPTED");
    const credit = await untilFinal(issuer, com.body.id);
    const debit = await issue(issuer, { ...note("NDV", "ANU", { folio: credit.folio, type: "61" }), items: [{ quantity: 1, unit_price: 500, description: "Anula nota de crédito" }] });
    expect(debit.status, JSON.stringify(debit.body)).toBe(202);
    expect((await untilFinal(issuer, debit.body.id)).status).toBe("ACCEPTED");
    // corrections do not cancel: the original is still not cancelled
    expect((await call("GET", `${issuer.base}/invoices/${original.id}`, { key: issuer.owner.key })).body.cancelled_by).toBeNull();
    expect(await storeRows(issuer.companyId, sql`SELECT * FROM cancellations WHERE cancelled_invoice_id = ${original.id}`)).toEqual([]);
  });
});

/** Note lines that total exactly `amount` (one exempt line). */
const totalling = (amount: number, description = "Corrige montos") => [{ quantity: 1, unit_price: amount, description, taxes: [{ type: "EXE" }] }];

/** A credit (or debit) note of `amount` with `reason` against our sample 33 of folio `folio` (total 9926). */
function credit(amount: number, folio: number, { type = "NCV", reason = "COM" } = {}) {
  return { ...note(type, reason, { folio, type: "33" }), items: totalling(amount) };
}

describe("credit notes never credit one of our documents for more than it totals", () => {
  it("a COM for more than the total is refused naming the document and what can still be credited", async () => {
    const original = await accepted("33");
    const inflated = await issue(issuer, credit(992_600, original.folio));
    expectError(inflated, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(inflated.body.error.message).toContain(`Document ${original.id} (33 N° ${original.folio}) totals 9926`);
    expect(inflated.body.error.message).toContain("at most 9926 can still be credited to it, not 992600");
    // The claims of the index store name what each note credits; the refused one left none.
    const claims = await indexStore(env, issuer.companyId).select().from(creditClaims).where(eq(creditClaims.creditedInvoiceId, original.id));
    expect(claims).toEqual([]);
  });

  it("export notes are capped in the document's currency, amounts as the API writes them", async () => {
    const exportInvoice = await accepted("110");
    expect(exportInvoice.total).toBe("123.45");
    const over = await issue(issuer, { ...note("NCE", "COM", { folio: exportInvoice.folio, type: "110" }, { currency: { code: "USD" } }), items: [{ quantity: 1, unit_price: 123.46, description: "Corrige montos" }] });
    expectError(over, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(over.body.error.message).toContain("at most 123.45 can still be credited to it, not 123.46");
  });

  it("COM notes add up: one still in the pipeline counts, the next is refused past the total and accepted up to exactly it", async () => {
    const original = await accepted("33");
    const first = await issue(issuer, credit(6000, original.folio));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    // Not waited for: a note in the pipeline already counts.
    const over = await issue(issuer, credit(4000, original.folio));
    expectError(over, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(over.body.error.message).toContain("of which earlier credit notes credit 6000: at most 3926 can still be credited to it, not 4000");
    const rest = await issue(issuer, credit(3926, original.folio));
    expect(rest.status, JSON.stringify(rest.body)).toBe(202);
    const more = await issue(issuer, credit(1, original.folio));
    expectError(more, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(more.body.error.message).toContain("at most 0 can still be credited to it, not 1");
    expect((await untilFinal(issuer, first.body.id)).status).toBe("ACCEPTED");
    expect((await untilFinal(issuer, rest.body.id)).status).toBe("ACCEPTED");
    const claims = await indexStore(env, issuer.companyId).select().from(creditClaims).where(eq(creditClaims.creditedInvoiceId, original.id));
    expect(claims.map((c) => [c.creditNoteId, c.amount]).sort()).toEqual([[first.body.id, 6000], [rest.body.id, 3926]].sort());
  });

  it("two concurrent COM notes that together exceed the total: exactly one is accepted", async () => {
    const original = await accepted("33");
    const [a, b] = await Promise.all([issue(issuer, credit(6000, original.folio)), issue(issuer, credit(6000, original.folio))]);
    expect([a.status, b.status].sort()).toEqual([202, 422]);
    const [won, lost] = a.status === 202 ? [a, b] : [b, a];
    expect(lost.body.error.code).toBe("INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(lost.body.error.message).toContain("at most 3926 can still be credited to it, not 6000");
    expect((await untilFinal(issuer, won.body.id)).status).toBe("ACCEPTED");
  });

  it("an ANU after a partial COM would credit more than the total: refused, and the document is not left cancelled", async () => {
    const original = await accepted("33");
    const partial = await issue(issuer, credit(500, original.folio));
    expect(partial.status, JSON.stringify(partial.body)).toBe(202);
    const anu = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expectError(anu, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(anu.body.error.message).toContain("at most 9426 can still be credited to it, not 9926");
    // The cancellation the ANU claimed first was given back.
    expect(await storeRows(issuer.companyId, sql`SELECT * FROM cancellations WHERE cancelled_invoice_id = ${original.id}`)).toEqual([]);
    expect((await untilFinal(issuer, partial.body.id)).status).toBe("ACCEPTED");
    expect((await call("GET", `${issuer.base}/invoices/${original.id}`, { key: issuer.owner.key })).body.cancelled_by).toBeNull();
  });

  it("after an ANU nothing more can be credited", async () => {
    const original = await accepted("33");
    const anu = await issue(issuer, note("NCV", "ANU", { folio: original.folio, type: "33" }));
    expect(anu.status, JSON.stringify(anu.body)).toBe(202);
    const com = await issue(issuer, credit(100, original.folio));
    expectError(com, 422, "INVOICE_CREDIT_EXCEEDS_REMAINING");
    expect(com.body.error.message).toContain("of which earlier credit notes credit 9926: at most 0 can still be credited to it, not 100");
    expect((await untilFinal(issuer, anu.body.id)).status).toBe("ACCEPTED");
  });

  it("a debit note is not capped", async () => {
    const original = await accepted("33");
    const debit = await issue(issuer, credit(992_600, original.folio, { type: "NDV" }));
    expect(debit.status, JSON.stringify(debit.body)).toBe(202);
    expect((await untilFinal(issuer, debit.body.id)).status).toBe("ACCEPTED");
  });

  it("a rejected earlier note does not count", async () => {
    const original = await accepted("33");
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const rejected = await issue(issuer, credit(9926, original.folio));
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(202);
    expect((await untilFinal(issuer, rejected.body.id)).status).toBe("REJECTED");
    const whole = await issue(issuer, credit(9926, original.folio));
    expect(whole.status, JSON.stringify(whole.body)).toBe(202);
    expect((await untilFinal(issuer, whole.body.id)).status).toBe("ACCEPTED");
    // The rejected note's claim was dropped when it stood in the way.
    const claims = await indexStore(env, issuer.companyId).select().from(creditClaims).where(eq(creditClaims.creditedInvoiceId, original.id));
    expect(claims.map((c) => c.creditNoteId)).toEqual([whole.body.id]);
  });
});
