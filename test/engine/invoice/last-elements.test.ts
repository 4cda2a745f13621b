/**
 * The last elements of the SII's DTE in the body: transaction kinds, the guía for export,
 * the additional identifiers, the period totals, the sub-totals' parts, the boletas' seller and cash
 * register. Amounts golden here, XML golden in features.test.ts; every bad input a precise error.
 */
import { describe, expect, it } from "vitest";
import { doc, fails, foreign, issuer, plain, recipient } from "./helpers";

const guide = { invoice_type: "52", transfer_kind: 8 } as const;
const ref = { number: "PO-1", invoice_type: "801", invoice_date: "2026-11-10" };

describe("transaction kinds (TpoTranCompra, TpoTranVenta)", () => {
  it("on Documento and Liquidacion types", () => {
    expect([doc({ purchase_transaction_kind: 7, sale_transaction_kind: 4 }).purchaseKind, doc({ invoice_type: "61", reason_code: "COM", billing_reference: [{ number: 1, invoice_type: "33", invoice_date: "2026-11-01" }], sale_transaction_kind: 3 }).saleKind]).toEqual([7, 3]);
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "39", purchase_transaction_kind: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "purchase_transaction_kind" });
    expect(fails({ invoice_type: "110", recipient: foreign, sale_transaction_kind: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "sale_transaction_kind" });
    expect(fails({ purchase_transaction_kind: 8 })).toMatchObject({ code: "INVALID_INPUT", field: "purchase_transaction_kind" });
    expect(fails({ sale_transaction_kind: 0 })).toMatchObject({ code: "INVALID_INPUT", field: "sale_transaction_kind" });
  });
});

describe("the issuer of a guía for export (GuiaExport) and the additional identifiers", () => {
  it("builds them", () => {
    const d = doc({ ...guide, issuer: { ...issuer, export_guide: { authorization_number: 0, authorization_date: "2026-10-01" }, additional_id: "X-1" } });
    expect([d.issuer.exportGuide, d.issuer.additionalId]).toEqual([{ authorizationNumber: 0, authorizationDate: "2026-10-01" }, "X-1"]);
    const e = doc({ invoice_type: "110", issuer: { ...issuer, additional_branch_code: "B-9" }, recipient: { ...foreign, foreign: { additional_id: "EIN 1" } } });
    expect([e.issuer.additionalBranchCode, e.receiver.additionalId, e.receiver.foreignId]).toEqual(["B-9", "EIN 1", "US-99-1234567"]);
  });
  it("precise errors", () => {
    const eg = { transfer_code: 1 };
    expect(fails({ issuer: { ...issuer, export_guide: eg } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.export_guide" });
    expect(fails({ invoice_type: "52", transfer_kind: 1, issuer: { ...issuer, export_guide: eg } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.export_guide" });
    expect(fails({ ...guide, issuer: { ...issuer, export_guide: {} } })).toEqual({ code: "INVALID_INPUT", field: "issuer.export_guide" });
    expect(fails({ ...guide, issuer: { ...issuer, export_guide: { transfer_code: 5 } } })).toMatchObject({ code: "INVALID_INPUT", field: "issuer.export_guide.transfer_code" });
    expect(fails({ ...guide, issuer: { ...issuer, export_guide: { authorization_number: 1_000_000 } } })).toMatchObject({ code: "INVALID_INPUT", field: "issuer.export_guide.authorization_number" });
    expect(fails({ ...guide, issuer: { ...issuer, export_guide: { authorization_date: "2026-02-30" } } })).toMatchObject({ code: "INVALID_DATE", field: "issuer.export_guide.authorization_date" });
    expect(fails({ ...guide, recipient: { ...recipient, export_guide: eg } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.export_guide" });
    expect(fails({ invoice_type: "39", issuer: { ...issuer, additional_id: "X" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.additional_id" });
    expect(fails({ invoice_type: "43", issuer: { ...issuer, additional_id: "X" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.additional_id" });
    expect(fails({ recipient: { ...recipient, additional_id: "X" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.additional_id" });
    expect(fails({ issuer: { ...issuer, additional_branch_code: "B" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "issuer.additional_branch_code" });
    expect(fails({ invoice_type: "110", recipient: foreign, issuer: { ...issuer, additional_id: "X".repeat(21) } })).toMatchObject({ code: "FIELD_TOO_LONG", field: "issuer.additional_id" });
    expect(fails({ ...guide, recipient: { ...recipient, foreign: { additional_id: "EIN 1" } } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.foreign.additional_id" });
    expect(fails({ invoice_type: "43", recipient: { ...recipient, foreign: { nationality: "225" } } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "recipient.foreign" });
  });
});

describe("customs on a guía for export and the customs' additional identifiers", () => {
  it("a 52 with transfer_kind 8 or 9 carries the customs block", () => {
    expect(doc({ invoice_type: "52", transfer_kind: 9, customs: { port_of_loading: "906", port_of_loading_additional_id: "CLVAP", payment_form: "1" } }).customs).toMatchObject({ portOfLoading: 906, portOfLoadingAdditionalId: "CLVAP" });
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "52", transfer_kind: 5, customs: { port_of_loading: "906" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "customs" });
    const exp = { invoice_type: "110", recipient: foreign } as const;
    expect(fails({ ...exp, customs: { port_of_loading_additional_id: "CLVAP" } })).toEqual({ code: "INVALID_INPUT", field: "customs.port_of_loading_additional_id", expected: "port_of_loading too" });
    expect(fails({ ...exp, customs: { port_of_unloading_additional_id: "USLAX" } })).toEqual({ code: "INVALID_INPUT", field: "customs.port_of_unloading_additional_id", expected: "port_of_unloading too" });
    expect(fails({ ...exp, customs: { carrier_company_additional_id: "IMO 1" } })).toMatchObject({ code: "INVALID_INPUT", field: "customs.carrier_company_additional_id" });
    expect(fails({ ...exp, customs: { port_of_loading: "906", port_of_loading_additional_id: "" } })).toMatchObject({ code: "INVALID_INPUT", field: "customs.port_of_loading_additional_id" });
  });
});

describe("period totals (MontoPeriodo/TotalPeriodo, SaldoAnterior, VlrPagar)", () => {
  it("the period amount is the total plus MontoNF; the amount to pay adds the previous balance", () => {
    // 1,000 + IVA 190 = 1,190; not billable 300
    const items = [{ quantity: 1, unit_price: 1000, description: "Servicio" }, { quantity: 1, unit_price: 300, description: "Informativo", exempt_indicator: 2 }];
    expect(plain(doc({ items, period_totals: {} }).periodTotals)).toEqual({ periodAmount: 1490, amountToPay: 1490 });
    expect(plain(doc({ items, period_totals: { previous_balance: "-1490", period_amount: 1490, amount_to_pay: 0 } }).periodTotals)).toEqual({ periodAmount: 1490, previousBalance: -1490, amountToPay: 0 });
    expect(plain(doc({ invoice_type: "41", items: [{ quantity: 1, unit_price: 5000, description: "Matrícula" }], period_totals: { previous_balance: 2500 } }).periodTotals)).toEqual({ periodAmount: 5000, previousBalance: 2500, amountToPay: 7500 });
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "110", recipient: foreign, period_totals: {} })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "period_totals" });
    expect(fails({ period_totals: { period_amount: 1000 } })).toEqual({ code: "TOTALS_MISMATCH", field: "period_totals.period_amount", expected: "1190" });
    expect(fails({ period_totals: { previous_balance: 10, amount_to_pay: 1190 } })).toEqual({ code: "TOTALS_MISMATCH", field: "period_totals.amount_to_pay", expected: "1200" });
    expect(fails({ period_totals: { previous_balance: "10.5" } })).toMatchObject({ code: "INVALID_INPUT", field: "period_totals.previous_balance" });
    expect(fails({ period_totals: { previous_balance: "999999999999999999" } })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "period_totals.amount_to_pay" });
    // a boleta's TotalPeriodo cannot be negative: 1,000 − 3,000 not billable (IndExe 6)
    const negative = [{ quantity: 1, unit_price: 1000, description: "Consumo" }, { quantity: 1, unit_price: 3000, description: "Bonificación", exempt_indicator: 6 }];
    expect(fails({ invoice_type: "39", items: negative, period_totals: {} })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "period_totals.period_amount" });
  });
});

describe("sub-total parts (SubTotNetoSTI, SubTotIVASTI, SubTotAdicSTI, SubTotExeSTI)", () => {
  it("computed from the sub-total's lines, only when asked; gross prices split like Totales", () => {
    const items = [{ quantity: 10, unit_price: 800, description: "Bebidas", taxes: [{ type: "IVA" }, { type: "27" }] }, { quantity: 1, unit_price: 999, description: "Exento", taxes: [{ type: "EXE" }] }];
    expect(plain(doc({ items, subtotals: [{ description: "Todo", lines: [1, 2], breakdown: true }] }).subtotals[0])).toEqual({ no: 1, description: "Todo", lines: [1, 2], value: 8999, breakdown: { net: 8000, iva: 1520, additional: 800, exempt: 999 } });
    expect(doc({ items, subtotals: [{ description: "Todo", lines: [1, 2] }] }).subtotals[0]!.breakdown).toBeUndefined();
    // boleta 39, gross: 11,900 → 10,000 + 1,900
    expect(plain(doc({ invoice_type: "39", items: [{ quantity: 1, unit_price: 11900, description: "Consumo" }], subtotals: [{ description: "C", lines: [1], breakdown: true }] }).subtotals[0]!.breakdown)).toEqual({ net: 10000, iva: 1900, additional: 0, exempt: 0 });
  });
  it("precise errors", () => {
    expect(fails({ subtotals: [{ description: "X", lines: [2], breakdown: true }] })).toEqual({ code: "INVALID_INPUT", field: "subtotals[0].lines[0]", expected: "1–1" });
  });
});

describe("references: IdAdicOtr (exports); boletas' CodVndor and CodCaja", () => {
  it("builds them", () => {
    const d = doc({ invoice_type: "110", recipient: foreign, billing_reference: [{ ...ref, other_issuer: "55555555-5", other_issuer_additional_id: "ACME" }] });
    expect(d.references[0]).toMatchObject({ otherIssuer: "55555555-5", otherIssuerAdditionalId: "ACME" });
    expect(doc({ invoice_type: "39", point_of_sale: { register_code: "CAJA-1" } }).pointOfSale).toEqual({ registerCode: "CAJA-1" });
  });
  it("precise errors", () => {
    expect(fails({ billing_reference: [{ ...ref, other_issuer: "77879240-0", other_issuer_additional_id: "X" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "billing_reference[0].other_issuer_additional_id" });
    expect(fails({ invoice_type: "110", recipient: foreign, billing_reference: [{ ...ref, other_issuer_additional_id: "X" }] })).toEqual({ code: "REFERENCE_INVALID", field: "billing_reference[0].other_issuer_additional_id", expected: "other_issuer too" });
    expect(fails({ point_of_sale: { seller_code: "V1" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "point_of_sale" });
    expect(fails({ invoice_type: "39", point_of_sale: {} })).toEqual({ code: "INVALID_INPUT", field: "point_of_sale" });
    expect(fails({ invoice_type: "39", point_of_sale: { seller_code: "123456789" } })).toMatchObject({ code: "FIELD_TOO_LONG", field: "point_of_sale.seller_code" });
    const forty = Array.from({ length: 40 }, (_, i) => ({ number: i + 1, invoice_type: "39", invoice_date: "2026-11-01" }));
    expect(fails({ invoice_type: "39", billing_reference: forty, point_of_sale: { seller_code: "V1" } })).toEqual({ code: "INVALID_INPUT", field: "point_of_sale", expected: "≤ 39 billing_reference" });
  });
});
