import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { storeRows } from "../helpers/store";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, nowLocal, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { loadPdf } from "../pdf/helpers";
import { toLocalDateTime } from "../../src/lib/time";
import { documentKeys } from "../../src/storage/keys";

/**
 * SII rules refused at POST before a folio is reserved. Each test names
 * its rule id from docs/simulator-fidelity.md.
 */
let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33, 52, 61], 20);
});

const daysAgo = (n: number) => toLocalDateTime(new Date(Date.now() - n * 86_400_000), "America/Santiago").replace("T", " ");

async function folioStatus(iss: Issuer, type: string) {
  const list = await call("GET", `${iss.base}/enumeration/list`, { key: iss.owner.key });
  return list.body.data.find((e: any) => e.id_document_type === type);
}

/** A certificate valid since `days` ago becomes the company's active one. */
async function useCertificateFrom(iss: Issuer, days: number) {
  const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - days * 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
  const form = new FormData();
  form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "firma.pfx"));
  form.append("password", "pw");
  const up = await call("POST", `${iss.base}/certificates`, { key: iss.owner.key, body: form });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
}

describe("SII rules refused at POST, no folio used", () => {
  it("[ANU-AMOUNT] a cancelling note must total what our cancelled document totals", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const original = await untilFinal(issuer, res.body.id);
    expect(original.status).toBe("ACCEPTED");
    const ref = [{ number: original.folio, invoice_type: "33", invoice_date: nowLocal().slice(0, 10) }];
    const inflated = await issue(issuer, invoiceBody(issuer.rut, "61", { billing_reference: ref, items: [{ quantity: 100, unit_price: 9926, description: "Anula", taxes: [{ type: "EXE" }] }] }));
    expectError(inflated, 422, "INVOICE_CANCELLATION_AMOUNT_MISMATCH");
    expect(inflated.body.error.message).toContain(`totals: 9926, not 992600`);
    const exact = await issue(issuer, invoiceBody(issuer.rut, "61", { billing_reference: ref, items: [{ quantity: 1, unit_price: 9926, description: "Anula", taxes: [{ type: "EXE" }] }] }));
    expect(exact.status, JSON.stringify(exact.body)).toBe(202);
    expect(exact.body.cancels_invoice_id).toBe(original.id);
  });

  it("[REF-FOLIO-0] a reference to folio 0 without a global indicator", async () => {
    const before = (await folioStatus(issuer, "61")).folios_available;
    const body = invoiceBody(issuer.rut, "61-COM", { billing_reference: [{ number: 0, invoice_type: "33", invoice_date: nowLocal().slice(0, 10) }] });
    const res = await issue(issuer, body);
    expectError(res, 400, "INVOICE_REFERENCE_INVALID");
    expect(res.body.error.details[0].field).toBe("billing_reference[0].number");
    expect((await folioStatus(issuer, "61")).folios_available).toBe(before);
  });

  it("[GUIA-ZERO-SALE] a zero-amount guía de despacho declared as a sale", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "52", { items: [{ quantity: 5, unit_price: 0, description: "Cajas" }] }));
    expectError(res, 400, "INVOICE_ZERO_TOTAL");
    expect(res.body.error.message).toContain("IndTraslado 1");
    // A transfer between own premises (IndTraslado 5) is no sale: it may total 0.
    const move = await issue(issuer, invoiceBody(issuer.rut, "52", { transfer_kind: 5, items: [{ quantity: 5, unit_price: 0, description: "Cajas" }] }));
    expect(move.status).toBe(202);
  });

  it("[CERT-DATE] an issue date before the signing certificate was valid", async () => {
    const res = await issue(issuer, invoiceBody(issuer.rut, "33", { invoice_date: daysAgo(5) }));
    expectError(res, 400, "INVOICE_INVALID_DATE");
    expect(res.body.error.message).toMatch(/outside the validity of the signing certificate .*\[CERT-DATE\]$/);
  });

  it("[CAF-DATE] an issue date before the CAF's authorisation date", async () => {
    const own = await readyIssuer([33], 5);
    await useCertificateFrom(own, 30);
    const authorizedOn = (await folioStatus(own, "33")).ranges[0].authorized_at;
    const issued = daysAgo(3);
    const res = await issue(own, invoiceBody(own.rut, "33", { invoice_date: issued }));
    expectError(res, 400, "INVOICE_INVALID_DATE");
    expect(res.body.error.message).toBe(`invoice_date ${issued.slice(0, 10)} is before ${authorizedOn}, the date the SII authorised the folios (CAF) this document would use [CAF-DATE]`);
    expect((await folioStatus(own, "33")).folios_available).toBe(5);
  });
});

describe("[RESOLUTION] the company's SII resolution", () => {
  it("is set in the settings (both halves), used in the envelope and the PDF legend, and a body may not contradict it", async () => {
    const own = await readyIssuer([33], 5);
    const half = await call("PATCH", `${own.base}/settings`, { key: own.owner.key, json: { sii_resolution_number: 80 } });
    expectError(half, 400, "VALIDATION_FAILED");
    expect(half.body.error.details[0].field).toBe("sii_resolution_date");
    const set = await call("PATCH", `${own.base}/settings`, { key: own.owner.key, json: { sii_resolution_number: 80, sii_resolution_date: "2014-08-22" } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ sii_resolution_number: 80, sii_resolution_date: "2014-08-22" });

    const contradicting = await issue(own, invoiceBody(own.rut, "33"));
    expectError(contradicting, 400, "INVOICE_RESOLUTION_MISMATCH");
    expect(contradicting.body.error.details.map((d: any) => d.field)).toEqual(["issuer.tax_information.resolution_number", "issuer.tax_information.resolution_date"]);

    const body = invoiceBody(own.rut, "33");
    delete body.issuer.tax_information.resolution_number;
    delete body.issuer.tax_information.resolution_date;
    const res = await issue(own, body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(own, res.body.id);
    expect(done.status).toBe("ACCEPTED");
    // The document's own verdict (DOK), not its envelope's processing code (EPR).
    expect(done.fiscal_status).toBe("DOK");
    const [row] = await storeRows<{ envelope_id: string }>(own.companyId, sql`SELECT envelope_id FROM invoices WHERE id = ${res.body.id}`);
    const envelope = await env.FILES.get(documentKeys.envelopeXml(own.companyId, row!.envelope_id));
    const xml = new TextDecoder("latin1").decode(await envelope!.arrayBuffer());
    expect(xml).toContain("<FchResol>2014-08-22</FchResol>\n<NroResol>80</NroResol>");

    const pdf = await call("POST", `${own.base}/invoices/${res.body.id}/download-pdf/A4`, { key: own.owner.key });
    expect(pdf.status).toBe(200);
    const loaded = await loadPdf(new Uint8Array(await pdf.raw.arrayBuffer()));
    expect(loaded.pages[0]!.texts.join(" ")).toContain("Res. N° 80 de 2014");
  });
});

describe("rules the engine enforces at POST, before any folio (one per row of docs/simulator-fidelity.md)", () => {
  const today = () => nowLocal().slice(0, 10);
  const line = { quantity: 1, unit_price: 100, description: "Item" };
  const cases: [string, () => any, number, string][] = [
    ["[LINES-MAX] 61 detail lines", () => invoiceBody(issuer.rut, "33", { items: Array(61).fill(line), totals: undefined }), 400, "INVOICE_TOO_MANY_LINES"],
    ["[REFS-MAX] 41 references", () => invoiceBody(issuer.rut, "61-COM", { billing_reference: Array.from({ length: 41 }, (_, i) => ({ number: i + 1, invoice_type: "33", invoice_date: today() })) }), 400, "VALIDATION_FAILED"],
    ["[DATE-RANGE] an issue date outside 2000-01-01..2050-12-31", () => invoiceBody(issuer.rut, "33", { invoice_date: "1999-12-31 10:00:00", payment_due_date: undefined }), 400, "INVOICE_INVALID_DATE"],
    ["[DATE-FUTURE] an issue date in the future", () => invoiceBody(issuer.rut, "33", { invoice_date: "2049-01-01 10:00:00", payment_due_date: undefined }), 400, "INVOICE_INVALID_DATE"],
    ["[NOTE-REF] a credit note without a reference", () => invoiceBody(issuer.rut, "61-COM", { billing_reference: undefined }), 400, "INVOICE_REFERENCE_REQUIRED"],
    ["[COT-AMOUNT] a text correction with an amount", () => invoiceBody(issuer.rut, "61-COT", { items: [line] }), 400, "INVOICE_TOTALS_MISMATCH"],
    ["[RUT-FORMAT] a recipient RUT with a wrong check digit", () => invoiceBody(issuer.rut, "33", { recipient: { ...invoiceBody(issuer.rut, "33").recipient, document_number: "77879240-1" } }), 400, "INVOICE_INVALID_RUT"],
    ["[LATIN1] a character ISO-8859-1 cannot carry", () => invoiceBody(issuer.rut, "33", { items: [{ ...line, description: "Precio en €" }], totals: undefined }), 400, "INVOICE_CHARACTER_NOT_LATIN1"],
    ["[FIELD-LEN] an item name over 80 characters (the request schema, VALIDATION_FAILED naming the field)", () => invoiceBody(issuer.rut, "33", { items: [{ ...line, description: "x".repeat(81) }], totals: undefined }), 400, "VALIDATION_FAILED"],
    ["[AMOUNTS] totals that differ from the engine's", () => invoiceBody(issuer.rut, "33", { totals: { total: 1 } }), 400, "INVOICE_TOTALS_MISMATCH"],
    ["[DTE-EMISOR] an issuer that is not the company", () => invoiceBody("77879240-0", "33"), 400, "INVOICE_ISSUER_MISMATCH"],
  ];
  it("[NOTE-TARGET] an export credit note whose coded reference is to a domestic factura", async () => {
    const base = invoiceBody(issuer.rut, "33");
    const body = {
      invoice_type: "NCE",
      invoice_date: base.invoice_date,
      issuer: base.issuer,
      recipient: { legal_name: "ACME TRADING INC", document_number: "US-99-1234567", address: { country: "US", address: "1 Main St, Springfield" } },
      currency: { code: "USD" },
      reason_code: "ANU",
      billing_reference: [{ number: 99_999, invoice_type: "33", invoice_date: nowLocal().slice(0, 10), reason_code: "ANU" }],
      items: [{ quantity: 1, unit_price: 123.45, description: "Anula" }],
    };
    const res = await issue(issuer, body);
    expectError(res, 400, "INVOICE_REFERENCE_INVALID");
    expect(res.body.error.details[0].field).toBe("billing_reference[0].invoice_type");
    expect(res.body.error.message).toMatch(/\[NOTE-TARGET\]/);
  });

  it("[SCH-XSD] values the engine computes with but the SII's schema refuses: a quantity or a price over 12 integer digits", async () => {
    const before = await folioStatus(issuer, "33");
    const over: [Record<string, unknown>, string, RegExp][] = [
      [{ quantity: 1e13, unit_price: 1, description: "Tornillos" }, "items[0].quantity", /Detalle\[1\]\/QtyItem: '10000000000000' is above 999999999999\.999999/],
      [{ quantity: 1, unit_price: 1e17, description: "Planta" }, "items[0].unit_price", /Detalle\[1\]\/PrcItem: '100000000000000000' is above 999999999999\.999999/],
    ];
    for (const [item, field, why] of over) {
      const res = await issue(issuer, invoiceBody(issuer.rut, "33", { items: [item], totals: undefined }));
      expectError(res, 400, "INVOICE_INVALID_NUMBER");
      expect(res.body.error.details[0].field).toBe(field);
      expect(res.body.error.message).toMatch(why);
      expect(res.body.error.message).toMatch(/reject its whole envelope \(RSC\).*\[SCH-XSD\]/);
    }
    expect(await folioStatus(issuer, "33")).toEqual(before);
  });

  it.each(cases)("%s", async (_name, body, status, code) => {
    const before = await folioStatus(issuer, "33");
    const res = await issue(issuer, body());
    expectError(res, status, code);
    expect(await folioStatus(issuer, "33")).toEqual(before);
  });
});
