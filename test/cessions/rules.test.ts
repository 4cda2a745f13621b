/**
 * Every refusal of a cession at POST, with its own code and message, and nothing stored by one: a
 * boleta, a document the SII rejected, a factura whose receipt is not on record yet, one a credit note
 * cancels, another company's document, an amount out of range, fields the register's format refuses,
 * a second cession. Then the register's refusal (scenario reject) and a slow register (delay).
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { env } from "cloudflare:workers";
import { ordinalOfId, storeFor } from "../../src/storage/db/document-store";
import { afterAlarms, issuedAccepted } from "../reception/helpers";
import { ASSIGNEE, cede, cedibleFactura, cessionBody, untilCessionFinal } from "./helpers";

const count = async (issuer: Issuer) => (await storeRows<{ n: number }>(issuer.companyId, sql`SELECT count(*) AS n FROM cessions`)).reduce((s, r) => s + r.n, 0);

function refused(res: { status: number; body: any }, status: number, code: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (message) expect(res.body.error.message).toMatch(message);
}

describe("refusals at POST", () => {
  let issuer: Issuer;
  let cedible: any;
  beforeAll(async () => {
    issuer = await readyIssuer([33, 39, 61]);
    cedible = await cedibleFactura(issuer);
  });

  it("a boleta: only 33, 34, 43 and 46 go to the register", async () => {
    const boleta = await issuedAccepted(issuer, "39");
    refused(await cede(issuer, boleta.id), 409, "CESSION_TYPE_NOT_CEDIBLE", /takes only facturas \(33, 34\), liquidaciones-factura \(43\) and facturas de compra \(46\)/);
  });

  it("a factura the SII rejected", async () => {
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const doc = await untilFinal(issuer, res.body.id);
    expect(doc.status).toBe("REJECTED");
    refused(await cede(issuer, doc.id), 409, "CESSION_DOCUMENT_NOT_ACCEPTED", /is REJECTED: only a document the SII accepted can be ceded/);
  });

  it("a factura whose buyer has not acknowledged receipt and whose 8 days have not passed", async () => {
    const doc = await issuedAccepted(issuer);
    refused(await cede(issuer, doc.id), 409, "CESSION_RECEIPT_MISSING", /has not acknowledged receipt or accepted it at the SII, and its 8 days have not passed/);
  });

  it("a factura a credit note cancels", async () => {
    const doc = await cedibleFactura(issuer);
    const note = await issue(issuer, invoiceBody(issuer.rut, "61", { billing_reference: [{ number: doc.folio, invoice_type: "FAC", invoice_date: doc.issue_date }], items: [{ quantity: 1, unit_price: Number(doc.total), description: "Anula", taxes: [{ type: "EXE" }] }] }));
    expect(note.status, JSON.stringify(note.body)).toBe(202);
    refused(await cede(issuer, doc.id), 409, "CESSION_DOCUMENT_CANCELLED", /cancelled by a credit note/);
  });

  it("another company's document: not found", async () => {
    const other = await readyIssuer([33]);
    refused(await call("POST", `${other.base}/invoices/${cedible.id}/cessions`, { key: other.owner.key, json: cessionBody() }), 404, "INVOICE_NOT_FOUND");
    refused(await call("POST", `${issuer.base}/invoices/${cedible.id}/cessions`, { key: other.owner.key, json: cessionBody() }), 403, "AUTH_COMPANY_ACCESS_DENIED");
  });

  it("an amount above the total, or below 1", async () => {
    refused(await cede(issuer, cedible.id, cessionBody({ amount: String(BigInt(cedible.total) + 1n) })), 422, "CESSION_AMOUNT_OUT_OF_RANGE", new RegExp(`between 1 and the document's total, ${cedible.total}`));
    refused(await cede(issuer, cedible.id, cessionBody({ amount: 0 })), 422, "CESSION_AMOUNT_OUT_OF_RANGE");
  });

  it("fields the register's format refuses", async () => {
    refused(await cede(issuer, cedible.id, cessionBody({ assignee: { ...ASSIGNEE, tax_id: "76543210-4" } })), 400, "VALIDATION_FAILED", /assignee.tax_id/);
    refused(await cede(issuer, cedible.id, cessionBody({ assignee: { ...ASSIGNEE, address: "x" } })), 400, "VALIDATION_FAILED");
    refused(await cede(issuer, cedible.id, cessionBody({ assignee: { ...ASSIGNEE, tax_id: issuer.rut } })), 422, "CESSION_FIELDS_INVALID", /company itself/);
    refused(await cede(issuer, cedible.id, cessionBody({ last_due_date: "2003-01-01" })), 422, "CESSION_FIELDS_INVALID", /last_due_date/);
    refused(await cede(issuer, cedible.id, cessionBody({ assignee: { ...ASSIGNEE, legal_name: "FACTOR \u4e2d\u6587" } })), 422, "CESSION_FIELDS_INVALID", /ISO-8859-1/);
    refused(await cede(issuer, cedible.id, { ...cessionBody(), surprise: 1 }), 400, "VALIDATION_FAILED");
  });

  it("stored nothing for any refusal", async () => {
    expect(await count(issuer)).toBe(0);
  });
});

describe("the register's answers through the pipeline", () => {
  let issuer: Issuer;
  beforeAll(async () => {
    issuer = await readyIssuer([33]);
  });

  it("a refusal (scenario reject) ends REJECTED with the register's reason and cession.rejected; the document can be ceded again", async () => {
    const doc = await cedibleFactura(issuer);
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const first = await cede(issuer, doc.id);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const rejected = await untilCessionFinal(issuer, first.body.id);
    expect(rejected).toMatchObject({ status: "REJECTED", fiscal_status: "RCS" });
    expect(rejected.fiscal_message).toMatch(/RCS: Rechazado: cesión inválida .*SIM-RECHAZO/);
    const events = await storeRows<{ payload: string }>(issuer.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'cession.rejected'`);
    expect(events.map((e) => JSON.parse(e.payload).id)).toContain(first.body.id);
    const pdf = await call("GET", `${issuer.base}/cessions/${first.body.id}/pdf`, { key: issuer.owner.key });
    expect(pdf.status).toBe(409);
    expect(pdf.body.error.code).toBe("CESSION_PDF_NOT_READY");
    const second = await cede(issuer, doc.id);
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    expect((await untilCessionFinal(issuer, second.body.id)).status).toBe("REGISTERED");
  });

  it("a slow register (scenario delay) is followed until it answers", async () => {
    const doc = await cedibleFactura(issuer);
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "delay", count: 1, polls: 3, rut: issuer.rut } });
    const res = await cede(issuer, doc.id, cessionBody({ amount: "1000" }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilCessionFinal(issuer, res.body.id);
    expect(done).toMatchObject({ status: "REGISTERED", amount: "1000" });
    const [row] = await storeRows<{ polls: number }>(issuer.companyId, sql`SELECT polls FROM cessions WHERE id = ${res.body.id}`);
    expect(row!.polls).toBeGreaterThan(3);
  });
});

describe("a cession whose step message was lost", () => {
  it("is sent again by its store's sweep of stuck work and reaches the register", async () => {
    const issuer = await readyIssuer([33]);
    const doc = await cedibleFactura(issuer);
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const res = await cede(issuer, doc.id);
    expect((await untilCessionFinal(issuer, res.body.id)).status).toBe("REJECTED");
    // As if signed long ago and its message never delivered: only the sweep can move it now.
    const store = storeFor(env, issuer.companyId, ordinalOfId(res.body.id)!).db;
    await store.run(sql`UPDATE cessions SET status = 'SIGNED', fiscal_status = NULL, fiscal_message = NULL, polls = 0, updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ${res.body.id}`);
    const done = await afterAlarms(issuer.companyId, async () => (await call("GET", `${issuer.base}/cessions/${res.body.id}`, { key: issuer.owner.key })).body, (c) => c.status === "REGISTERED", "re-driven cession");
    expect(done.fiscal_status).toBe("EOK");
  });
});
