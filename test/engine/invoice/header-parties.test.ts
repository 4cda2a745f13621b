/** Golden tests of the IdDoc (header.ts) and Emisor/Receptor (parties.ts) builders. */
import { describe, expect, it } from "vitest";
import { body, doc, fails, foreign, plain, recipient } from "./helpers";

describe("header", () => {
  it("service indicator and period, payment terms and schedule, price marks", () => {
    const d = doc({ service_indicator: 1, service_period: { from: "2026-10-01", to: "2026-10-31" }, payment_terms: { code: "30D", description: "30 días", days: 30 }, payment_schedule: [{ date: "2026-12-20", amount: 1190 }], gross_prices: false });
    expect(plain({ s: d.serviceIndicator, p: d.servicePeriod, t: d.paymentTerms, pay: d.payments })).toEqual({ s: 1, p: { from: "2026-10-01", to: "2026-10-31" }, t: { code: "30D", description: "30 días", days: 30 }, pay: [{ date: "2026-12-20", amount: 1190 }] });
    expect(doc({ invoice_type: "39" }).serviceIndicator).toBe(3);
    expect(doc({ invoice_type: "39", net_amounts: true }).netAmounts).toBe(true);
    expect(doc({ gross_prices: true }).grossPrices).toBe(true);
  });
  it("guías: transfer kind defaults to 1 (sale); dispatch kind", () => {
    expect([doc({ invoice_type: "52" }).transferKind, doc({ invoice_type: "52", transfer_kind: 7, dispatch_kind: 3 }).dispatchKind]).toEqual([1, 3]);
  });
  it("precise errors", () => {
    expect(fails({ service_indicator: 4 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "service_indicator" });
    expect(fails({ invoice_type: "110", recipient: foreign, service_indicator: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "service_indicator" });
    expect(fails({ service_period: { from: "2026-10-31", to: "2026-10-01" } })).toMatchObject({ code: "INVALID_DATE", field: "service_period.to" });
    expect(fails({ payment_schedule: [{ date: "2026-12-20", amount: 1000 }] })).toEqual({ code: "TOTALS_MISMATCH", field: "payment_schedule", expected: "1190" });
    expect(fails({ invoice_type: "39", payment_terms: { days: 30 } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "payment_terms" });
    expect(fails({ invoice_type: "39", gross_prices: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "gross_prices" });
    expect(fails({ net_amounts: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "net_amounts" });
    expect(fails({ transfer_kind: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "transfer_kind" });
    expect(fails({ invoice_type: "61", reason_code: "COM", billing_reference: [{ number: 1, invoice_type: "33", invoice_date: "2026-11-01" }], dispatch_kind: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "dispatch_kind" });
    expect(fails({ invoice_type: "52", transfer_kind: 10 })).toMatchObject({ code: "INVALID_INPUT", field: "transfer_kind" });
  });
});

describe("parties", () => {
  it("recipient contact, e-mail, internal code, commune apart from city; the foreign block of exports", () => {
    const d = doc({ issuer: { ...body().issuer!, email: "dte@empresa.cl" }, recipient: { ...recipient, contact: "Ana", email: "a@b.cl", internal_code: "C-1", address: { city: "Santiago", commune: "Providencia" } } });
    expect({ ...d.receiver, activityCodes: undefined }).toMatchObject({ contact: "Ana", email: "a@b.cl", internalCode: "C-1", city: "Santiago", commune: "Providencia" });
    expect(d.issuer.email).toBe("dte@empresa.cl");
    const e = doc({ invoice_type: "110", currency: { code: "USD" }, recipient: { ...foreign, foreign: { nationality: "225", id: "EIN 99-123" } } }).receiver;
    expect([e.rut, e.foreignId, e.nationality]).toEqual(["55555555-5", "EIN 99-123", "225"]);
    // A factura de compra to a foreign supplier states it as an export does (Receptor/Extranjero).
    const supplier = doc({ invoice_type: "46", recipient: { ...recipient, document_number: "55555555-5", foreign: { nationality: "225", id: "EIN 99-1" } } }).receiver;
    expect([supplier.rut, supplier.foreignId, supplier.nationality]).toEqual(["55555555-5", "EIN 99-1", "225"]);
    expect(doc({ recipient: { ...recipient, foreign: { nationality: "225" } } }).receiver.nationality).toBe("225");
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "39", recipient: { ...recipient, foreign: { nationality: "225" } } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.foreign" });
    expect(fails({ issuer: { ...body().issuer!, foreign: { nationality: "225" } } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.foreign" });
    expect(fails({ invoice_type: "39", recipient: { ...recipient, email: "a@b.cl" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.email" });
    expect(fails({ issuer: { ...body().issuer!, contact: "x" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.contact" });
    expect(fails({ recipient: { ...recipient, contact: "x".repeat(81) } })).toMatchObject({ code: "FIELD_TOO_LONG", field: "recipient.contact" });
  });
});
