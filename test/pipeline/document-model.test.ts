/**
 * Every feature of the document model (issue #14) through the real pipeline: POST, folio, stamp,
 * signature, the simulated SII's verdict ACCEPTED, and the PDF.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, type ApiResponse } from "../helpers/api";
import { COVERAGE_INPUTS } from "../helpers/cl-coverage-samples";
import { FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { TYPE_INPUTS } from "../helpers/cl-type-samples";
import { datedNow, invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

const ALL = { ...FEATURE_INPUTS, ...COVERAGE_INPUTS, ...TYPE_INPUTS };
let issuer: Issuer;
/** Every sample is posted at once, so they go through the pipeline together; each test follows its own. */
const posted = new Map<string, Promise<ApiResponse>>();
beforeAll(async () => {
  issuer = await readyIssuer([33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112], 20);
  for (const name of Object.keys(ALL)) {
    const input = structuredClone(ALL[name]!);
    posted.set(name, issue(issuer, { ...datedNow(input), issuer: { ...input.issuer, document_number: issuer.rut } }));
  }
  await Promise.allSettled(posted.values());
});

describe("the whole SII document end to end", () => {
  it.each(Object.keys(ALL))("%s is ACCEPTED and printed", async (name) => {
    const res = await posted.get(name)!;
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status, JSON.stringify(done)).toBe("ACCEPTED");
    const pdf = await call("POST", `${issuer.base}/invoices/${done.id}/download-pdf/A4`, { key: issuer.owner.key });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
  }, 90_000);
});

describe("inconsistent input for the last parts of the model: 400 in our envelope, naming the field", () => {
  const line = { quantity: 1, unit_price: 1000, description: "a" };
  it.each([
    ["a show ticket on a factura", "33", { items: [{ ...line, ticket: { kind: "SERVICE" } }] }, "INVOICE_FIELD_NOT_ALLOWED", "items[0].ticket"],
    ["CredEC above 65 % of the IVA", "33", { items: [line], construction_credit: { amount: 125 } }, "INVOICE_AMOUNT_OUT_OF_RANGE", "construction_credit.amount"],
    ["a fuel tax with half its volume", "33", { items: [{ ...line, taxes: [{ type: "28", cubic_metres: 1 }] }] }, "INVOICE_INVALID_INPUT", "items[0].taxes[0].per_cubic_metre"],
    ["IVA de terceros on an exempt factura", "34", { items: [{ ...line, third_party: true }] }, "INVOICE_FIELD_NOT_ALLOWED", "items[0].third_party"],
    ["commissions on a factura of a sale", "33", { items: [line], totals: undefined, commissions: [{ kind: "OTHER", description: "c", net_amount: 1 }] }, "INVOICE_FIELD_NOT_ALLOWED", "commissions"],
    ["an item taken back on a guía that is a sale", "52", { items: [{ ...line, exempt_indicator: 5 }], totals: undefined, billing_reference: [{ number: 1, invoice_type: "52", invoice_date: "2026-11-01" }] }, "INVOICE_FIELD_NOT_ALLOWED", "items[0].exempt_indicator"],
    ["sub-quantities beyond the quantity", "33", { items: [{ ...line, sub_quantities: [{ quantity: 2, code: "L1" }] }] }, "INVOICE_AMOUNT_OUT_OF_RANGE", "items[0].sub_quantities"],
    ["expiry before elaboration", "33", { items: [{ ...line, elaboration_date: "2026-11-02", expiry_date: "2026-11-01" }] }, "INVOICE_INVALID_DATE", "items[0].expiry_date"],
    ["a second currency on a boleta", "39", { items: [line], other_currency: { code: "USD", exchange_rate: 950 } }, "INVOICE_FIELD_NOT_ALLOWED", "other_currency"],
    ["a transaction kind on a boleta", "39", { items: [line], purchase_transaction_kind: 1 }, "INVOICE_FIELD_NOT_ALLOWED", "purchase_transaction_kind"],
    ["an amount to pay that is not the period amount plus the balance", "33", { items: [line], totals: undefined, period_totals: { previous_balance: 100, amount_to_pay: 1190 } }, "INVOICE_TOTALS_MISMATCH", "period_totals.amount_to_pay"],
    ["a guía for export that is not for export", "52", { items: [line], transfer_kind: 5, customs: { port_of_loading: "906" } }, "INVOICE_FIELD_NOT_ALLOWED", "customs"],
    ["a seller and cash register on a factura", "33", { items: [line], totals: undefined, point_of_sale: { seller_code: "V1" } }, "INVOICE_FIELD_NOT_ALLOWED", "point_of_sale"],
    ["a port's additional id without the port", "110", { items: [line], customs: { port_of_unloading_additional_id: "USLAX" } }, "INVOICE_INVALID_INPUT", "customs.port_of_unloading_additional_id"],
  ] as const)("%s", async (_what, type, over, code, field) => {
    const res = await issue(issuer, { ...invoiceBody(issuer.rut, type), ...over });
    expectError(res, 400, code);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });
});
