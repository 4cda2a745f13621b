import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { sql } from "drizzle-orm";

/**
 * The issuance pipeline end to end, through the real queue consumer and the SII simulator over its
 * wire protocol: POST -> RECEIVED -> GENERATED -> SIGNED -> SENT -> final.
 */
const ALL = ["33", "34", "39", "41", "46", "52", "56", "61", "110", "111", "112"];
let issuer: Issuer;

beforeAll(async () => {
  issuer = await readyIssuer(ALL, 50);
});

describe("POST /invoices -> ACCEPTED for every document type", () => {
  it.each(ALL)("type %s", async (type) => {
    const res = await issue(issuer, invoiceBody(issuer.rut, type));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: "RECEIVED", fiscal_status: null, folio: null, invoice_type: type });
    expect(res.body.id).toMatch(/^inv_/);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status, JSON.stringify(done)).toBe("ACCEPTED");
    expect(done.folio).toBeGreaterThanOrEqual(1);
    expect(done.fiscal_status).toMatch(/^(EPR|DOK)$/);
    expect(done.track_id).toMatch(/^\d+$/);
    expect(done.history.map((h: { status: string }) => h.status)).toEqual(expect.arrayContaining(["RECEIVED", "GENERATED", "SIGNED", "SENT", "ACCEPTED"]));
    const statuses = done.history.map((h: { status: string }) => h.status);
    expect(statuses.indexOf("GENERATED")).toBeLessThan(statuses.indexOf("SIGNED"));
    expect(statuses.indexOf("SIGNED")).toBeLessThan(statuses.indexOf("SENT"));
    // the signed XML, ISO-8859-1, with this folio
    const xml = await call("GET", `${issuer.base}/invoices/${done.id}/xml`, { key: issuer.owner.key });
    expect(xml.status).toBe(200);
    expect(xml.headers.get("Content-Type")).toBe("application/xml; charset=ISO-8859-1");
    const text = new TextDecoder("latin1").decode(await xml.raw.arrayBuffer());
    expect(text).toMatch(/^<\?xml version="1.0" encoding="ISO-8859-1"\?>/);
    expect(text).toContain(`<Folio>${done.folio}</Folio>`);
    expect(text).toContain(`<TipoDTE>${type}</TipoDTE>`);
  });
});

describe("listing", () => {
  it("filters by type, status, date and external reference", async () => {
    const ext = `ERP-${crypto.randomUUID()}`;
    const res = await issue(issuer, invoiceBody(issuer.rut, "34", { external_reference: ext }));
    await untilFinal(issuer, res.body.id);
    const byRef = await call("GET", `${issuer.base}/invoices?external_reference=${ext}`, { key: issuer.owner.key });
    expect(byRef.body.data.map((d: { id: string }) => d.id)).toEqual([res.body.id]);
    const byType = await call("GET", `${issuer.base}/invoices?invoice_type=FEX&status=ACCEPTED&per_page=100`, { key: issuer.owner.key });
    expect(byType.body.data.length).toBeGreaterThanOrEqual(2);
    expect(byType.body.data.every((d: { invoice_type: string }) => d.invoice_type === "34")).toBe(true);
    const none = await call("GET", `${issuer.base}/invoices?from_date=2049-01-01`, { key: issuer.owner.key });
    expect(none.body.total).toBe(0);
    expectError(await call("GET", `${issuer.base}/invoices?from_date=2026-02-30`, { key: issuer.owner.key }), 400, "VALIDATION_FAILED");
    expectError(await call("GET", `${issuer.base}/invoices?invoice_type=ZZZ`, { key: issuer.owner.key }), 400, "VALIDATION_FAILED");
  });

  it("a repeated external_reference is 409 naming the first document", async () => {
    const ext = `ERP-${crypto.randomUUID()}`;
    const first = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ext }));
    const second = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: ext }));
    expectError(second, 409, "INVOICE_DUPLICATE_EXTERNAL_REFERENCE");
    expect(second.body.error.message).toContain(first.body.id);
  });

  it("Idempotency-Key replays the first answer and issues once", async () => {
    const body = invoiceBody(issuer.rut, "33");
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const a = await issue(issuer, body, headers);
    const b = await issue(issuer, body, headers);
    expect(b.status).toBe(202);
    expect(b.body.id).toBe(a.body.id);
    expect(b.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await storeRows(issuer.companyId, sql`SELECT id FROM invoices WHERE id = ${a.body.id}`)).toEqual([{ id: a.body.id }]);
  });
});

describe("validation before anything is used", () => {
  it("bad bodies are refused with the field named, and nothing is stored", async () => {
    const before = (await storeRows(issuer.companyId, sql`SELECT id FROM invoices WHERE company_id = ${issuer.companyId}`)).length;
    const cases: [unknown, number, string, string?][] = [
      [{ ...invoiceBody(issuer.rut, "33"), totals: { total: 1 } }, 400, "INVOICE_TOTALS_MISMATCH", "totals.total"],
      [invoiceBody(issuer.rut, "33", { invoice_type: "99" }), 400, "INVOICE_DOCUMENT_TYPE_UNKNOWN", "invoice_type"],
      [invoiceBody(issuer.rut, "33", { items: Array.from({ length: 61 }, () => ({ quantity: 1, unit_price: 1, description: "x" })) }), 400, "INVOICE_TOO_MANY_LINES"],
      [invoiceBody(issuer.rut, "33", { items: [{ quantity: 1, unit_price: 10, description: "Emoji 😀" }] }), 400, "INVOICE_CHARACTER_NOT_LATIN1"],
      [invoiceBody(issuer.rut, "33", { items: [{ quantity: 1, unit_price: 10, description: "x".repeat(81) }] }), 400, "VALIDATION_FAILED", "items[0].description"],
      [invoiceBody(issuer.rut, "33", { issuer: { ...invoiceBody(issuer.rut, "33").issuer, tax_information: { activity: "x".repeat(81) } } }), 400, "VALIDATION_FAILED", "issuer.tax_information.activity"],
      [invoiceBody("76086428-5", "33"), 400, "INVOICE_ISSUER_MISMATCH", "issuer.document_number"],
      [{ invoice_type: "33" }, 400, "VALIDATION_FAILED"],
      [invoiceBody(issuer.rut, "61", { billing_reference: [] }), 400, "INVOICE_REFERENCE_REQUIRED"],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await issue(issuer, body);
      expectError(res, status, code);
      if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const after = (await storeRows(issuer.companyId, sql`SELECT id FROM invoices WHERE company_id = ${issuer.companyId}`)).length;
    expect(after).toBe(before);
  });

  it("without a certificate or without folios, nothing is issued and no folio is used", async () => {
    const bare = await readyIssuer([], 10);
    const noCaf = await issue(bare, invoiceBody(bare.rut, "33"));
    expectError(noCaf, 422, "INVOICE_NO_FOLIOS");
    expect(noCaf.body.error.message).toContain("No CAF is loaded for document type 33");
    const certs = (await call("GET", `${bare.base}/certificates`, { key: bare.owner.key })).body.data;
    await call("DELETE", `${bare.base}/certificates/${certs[0].id}`, { key: bare.owner.key });
    await call("POST", `${bare.base}/enumeration/refetch`, { key: bare.owner.key, json: { document_type: "33", quantity: 5 } });
    const noCert = await issue(bare, invoiceBody(bare.rut, "33"));
    expectError(noCert, 422, "CERTIFICATE_REQUIRED");
    // neither a certificate nor a CAF: the certificate is named first
    expectError(await issue(bare, invoiceBody(bare.rut, "34")), 422, "CERTIFICATE_REQUIRED");
    const list = (await call("GET", `${bare.base}/enumeration/list`, { key: bare.owner.key })).body.data[0];
    expect(list).toMatchObject({ folios_available: 5, next_folio: 1 });
  });

  it("an unknown document is 404; the XML before signing is 409; PDFs before acceptance are 409", async () => {
    expectError(await call("GET", `${issuer.base}/invoices/inv_nope`, { key: issuer.owner.key }), 404, "INVOICE_NOT_FOUND");
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const [row] = await storeRows<{ xml_key: string | null }>(issuer.companyId, sql`SELECT xml_key FROM invoices WHERE id = ${res.body.id}`);
    if (row!.xml_key === null) expectError(await call("GET", `${issuer.base}/invoices/${res.body.id}/xml`, { key: issuer.owner.key }), 409, "INVOICE_XML_NOT_READY");
    const pending = await call("GET", `${issuer.base}/invoices/${res.body.id}`, { key: issuer.owner.key });
    if (pending.body.status !== "ACCEPTED") {
      expectError(await call("POST", `${issuer.base}/invoices/${res.body.id}/download-pdf/A4`, { key: issuer.owner.key }), 409, "INVOICE_NOT_ACCEPTED");
    }
    await untilFinal(issuer, res.body.id);
  });
});
