import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { storeForId } from "../../src/storage/db/document-store";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

/** Rules a new user broke without being stopped, now refused at POST. */
let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33], 10);
});

describe("dates and ranges refused at POST", () => {
  it("a due date before the issue date", async () => {
    const body = invoiceBody(issuer.rut, "33");
    const res = await issue(issuer, { ...body, payment_due_date: "2020-01-01" });
    expectError(res, 400, "INVOICE_INVALID_DATE");
    expect(res.body.error.details[0]).toEqual({ field: "payment_due_date", message: `payment_due_date 2020-01-01 is before the issue date ${body.invoice_date.slice(0, 10)} (expected ≥ ${body.invoice_date.slice(0, 10)})` });
  });

  it("an issue date far in the future", async () => {
    const res = await issue(issuer, { ...invoiceBody(issuer.rut, "33"), invoice_date: "2049-01-01 10:00:00", payment_due_date: undefined });
    expectError(res, 400, "INVOICE_INVALID_DATE");
    expect(res.body.error.details[0].field).toBe("invoice_date");
    expect(res.body.error.message).toContain("in the future");
  });

  it("a branch office beyond 9 digits, never silently dropped", async () => {
    const res = await issue(issuer, { ...invoiceBody(issuer.rut, "33"), branch_office: 1e12 });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(res.body.error.details.map((d: any) => d.field)).toEqual(["branch_office"]);
  });
});

describe("the XML of a FAILED document", () => {
  it("is a final 410, not 'not ready, retry'", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(res.status).toBe(202);
    await untilFinal(issuer, res.body.id);
    // State fixture: the document as the pipeline leaves one that FAILED before signing (no XML).
    const why = "No folio left for document type 33: load a new CAF and issue the document again.";
    await storeForId(env, issuer.companyId, res.body.id)!.db.run(sql`UPDATE invoices SET status = 'FAILED', xml_key = NULL, last_error = ${why} WHERE id = ${res.body.id}`);
    const xml = await call("GET", `${issuer.base}/invoices/${res.body.id}/xml`, { key: issuer.owner.key });
    expectError(xml, 410, "INVOICE_XML_UNAVAILABLE");
    expect(xml.body.error.message).toBe(`${res.body.id} FAILED before it was signed, so its XML will never exist: ${why} Issue a new document.`);
  });
});
