/**
 * Golden and bad-path tests of the parts added last to the document model: IVATerc/IVAProp, CredEC,
 * the specific fuel taxes 28 and 35, Subcantidad, FchElabor/FchVencim, OtraMoneda on domestic
 * documents, per-line OtrMnda, the boleta show tickets, MntBase/MntMargenCom and ValorDROtrMnda
 * (line-extras.ts, totals.ts, currency.ts).
 */
import { describe, expect, it } from "vitest";
import { body, doc, fails, plain } from "./helpers";
import { computeDocument } from "../../../src/countries/cl/documents/invoice";

const line = { quantity: 1, unit_price: 1000, description: "a" };
const ticket = { kind: "TICKET" as const, folio: 7, generated_at: "2026-11-20 10:00:00", event_name: "Obra", ticket_type: "Adulto", event_code: "OB1", event_date: "2026-12-01 20:00:00", venue: "Teatro", section: "Platea" };

describe("IVA de terceros (IVATerc) and own IVA (IVAProp)", () => {
  it("IVATerc is the IVA of the third-party lines, moved by a taxed % discount; IVAProp the rest; the total is unchanged", () => {
    // taxed 3000 − 10 % = 2700, IVA 513; third party 1000 − 10 % = 900 → 171; own 342
    const d = doc({ items: [{ ...line, third_party: true }, { ...line, unit_price: 2000 }], global_adjustments: [{ kind: "DISCOUNT", percent: 10 }] });
    expect(plain([d.totals.iva, d.totals.ivaThirdParty, d.totals.ivaOwn, d.totals.total])).toEqual([513, 171, 342, 3213]);
  });
  it("rounds half away from zero at the boundary: 50 × 19 % = 9.5 → 10 third parties', the whole IVA", () => {
    const d = doc({ items: [{ ...line, unit_price: 50, third_party: true }] });
    expect(plain([d.totals.iva, d.totals.ivaThirdParty, d.totals.ivaOwn])).toEqual([10, 10, 0]);
  });
  it("on a credit note, a liquidación-factura, a factura de compra and a guía too", () => {
    expect(doc({ invoice_type: "61", reason_code: "COM", billing_reference: [{ number: 1, invoice_type: "33", invoice_date: "2026-11-01" }], items: [{ ...line, third_party: true }] }).totals.ivaThirdParty).toBe(190n);
    expect(doc({ invoice_type: "43", items: [{ ...line, settled_type: "33", third_party: true }] }).totals.ivaThirdParty).toBe(190n);
    expect(doc({ invoice_type: "46", items: [{ ...line, third_party: true }, line] }).totals.ivaThirdParty).toBe(190n);
    expect(doc({ invoice_type: "52", items: [{ ...line, third_party: true }] }).totals.ivaThirdParty).toBe(190n);
  });
  it("refused on a type that cannot carry it and on an exempt line", () => {
    expect(fails({ invoice_type: "34", items: [{ ...line, third_party: true }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].third_party" });
    expect(fails({ invoice_type: "39", items: [{ ...line, third_party: true }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].third_party" });
    expect(fails({ items: [{ ...line, taxes: [{ type: "EXE" }], third_party: true }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].third_party" });
  });
});

describe("construction companies' special credit (CredEC)", () => {
  it("65 % of the IVA, rounded half away from zero, deducted from the total", () => {
    // IVA 190 × 0.65 = 123.5 → 124; IVA 10 (50 net) × 0.65 = 6.5 → 7
    const d = doc({ construction_credit: {}, items: [line] });
    expect(plain([d.totals.iva, d.totals.constructionCredit, d.totals.total])).toEqual([190, 124, 1066]);
    expect(doc({ construction_credit: {}, items: [{ ...line, unit_price: 50 }] }).totals.constructionCredit).toBe(7n);
  });
  it("a smaller amount (the cap per dwelling) is taken; more than 65 % is refused", () => {
    expect(doc({ construction_credit: { amount: 100 }, items: [line] }).totals.total).toBe(1090n);
    expect(fails({ construction_credit: { amount: 125 }, items: [line] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "construction_credit.amount", expected: "1–124" });
    expect(fails({ construction_credit: { amount: 0 }, items: [line] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "construction_credit.amount", expected: "1–124" });
  });
  it("only on 33, 52, 56, 61 with IVA; the client's total is checked against the reduced one", () => {
    expect(fails({ invoice_type: "34", construction_credit: {} })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "construction_credit" });
    expect(fails({ invoice_type: "46", construction_credit: {} })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "construction_credit" });
    expect(doc({ invoice_type: "52", construction_credit: {}, items: [line] }).totals.total).toBe(1066n);
    expect(fails({ construction_credit: {}, items: [{ ...line, taxes: [{ type: "EXE" }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "construction_credit" });
    expect(fails({ construction_credit: {}, items: [line], totals: { total: 1190 } })).toEqual({ code: "TOTALS_MISMATCH", field: "totals.total", expected: "1066" });
  });
});

describe("specific fuel taxes (28 diesel, 35 gasolines)", () => {
  it("amount from m³ × sum per m³ (rounded at .5), added to the total, outside the IVA base, no rate", () => {
    // 2.5 m³ × 1,000.2 = 2,500.5 → 2,501
    const d = doc({ items: [{ quantity: 2500, unit_price: 700, description: "diesel", taxes: [{ type: "28", cubic_metres: 2.5, per_cubic_metre: 1000.2 }] }] });
    expect(plain(d.totals)).toMatchObject({ net: 1750000, iva: 332500, additional: [{ type: "28", kind: "A", amount: 2501 }], total: 2085001 });
    expect(d.totals.additional[0]!.rate).toBeUndefined();
    expect(d.lines[0]!.additionalTaxCodes).toEqual(["28"]);
  });
  it("do not count as withholdings: IVANoRet on a factura de compra is the IVA minus the withholdings only", () => {
    const d = doc({ invoice_type: "46", items: [{ ...line, taxes: [{ type: "34" }, { type: "35", amount: 300 }] }] });
    expect(plain([d.totals.iva, d.totals.ivaNotRetained, d.totals.total])).toEqual([190, 150, 1000 + 190 - 40 + 300]);
  });
  it("per-line amounts add up; client totals and line amounts are checked", () => {
    const items = [{ ...line, taxes: [{ type: "35", amount: 120 }] }, { ...line, taxes: [{ type: "35", amount: 80 }] }];
    expect(doc({ items, totals: { taxes: [{ type: "35", amount: 200 }], total: 2580 } }).totals.total).toBe(2580n);
    expect(fails({ items, totals: { taxes: [{ type: "35", amount: 199 }] } })).toEqual({ code: "TOTALS_MISMATCH", field: "totals.taxes[0].amount", expected: "200" });
    expect(fails({ items, totals: { taxes: [{ type: "35", rate: 5 }] } })).toEqual({ code: "TAX_RATE_MISMATCH", field: "totals.taxes[0].rate", expected: "absent" });
  });
  it("precise errors: no amount, half a volume, a rate, a volume on another tax, a boleta, gross prices", () => {
    expect(fails({ items: [{ ...line, taxes: [{ type: "28" }] }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].taxes[0].amount" });
    expect(fails({ items: [{ ...line, taxes: [{ type: "28", cubic_metres: 1 }] }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].taxes[0].per_cubic_metre" });
    expect(fails({ items: [{ ...line, taxes: [{ type: "28", cubic_metres: 1, per_cubic_metre: 10, amount: 11 }] }] })).toEqual({ code: "TOTALS_MISMATCH", field: "items[0].taxes[0].amount", expected: "10" });
    expect(fails({ items: [{ ...line, taxes: [{ type: "28", amount: 10, rate: 5 }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].taxes[0].rate" });
    expect(fails({ items: [{ ...line, taxes: [{ type: "27", cubic_metres: 1 }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].taxes[0].cubic_metres" });
    expect(fails({ invoice_type: "39", items: [{ ...line, taxes: [{ type: "35", amount: 10 }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
    expect(fails({ gross_prices: true, items: [{ ...line, taxes: [{ type: "35", amount: 10 }] }] })).toMatchObject({ code: "TAX_NOT_ALLOWED", field: "items[0].taxes[0].type" });
  });
});

describe("sub-quantities and item dates", () => {
  it("up to 5 sub-quantities whose sum does not exceed the quantity; TipCodSubQty on exports only", () => {
    const d = doc({ items: [{ ...line, quantity: 3, sub_quantities: [{ quantity: 1.5, code: "A" }, { quantity: 1.5, code: "B" }] }] });
    expect(d.lines[0]!.subQuantities).toEqual([{ qty: "1.5", code: "A" }, { qty: "1.5", code: "B" }]);
    expect(fails({ items: [{ ...line, quantity: 3, sub_quantities: [{ quantity: 2, code: "A" }, { quantity: 1.000001, code: "B" }] }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].sub_quantities", expected: "≤ 3" });
    expect(fails({ items: [{ ...line, sub_quantities: [{ quantity: 0, code: "A" }] }] })).toEqual({ code: "INVALID_NUMBER", field: "items[0].sub_quantities[0].quantity" });
    expect(fails({ items: [{ ...line, sub_quantities: [{ quantity: 1, code: "A", code_type: "LOTE" }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].sub_quantities[0].code_type" });
    expect(fails({ items: [{ ...line, sub_quantities: Array.from({ length: 6 }, (_, i) => ({ quantity: 0.1, code: `S${i}` })) }] })).toMatchObject({ code: "INVALID_INPUT", field: "items[0].sub_quantities" });
    expect(fails({ invoice_type: "39", items: [{ ...line, sub_quantities: [{ quantity: 1, code: "A" }] }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].sub_quantities" });
  });
  it("elaboration and expiry dates: calendar dates, expiry not before elaboration, not on boletas", () => {
    expect(doc({ items: [{ ...line, elaboration_date: "2026-11-01", expiry_date: "2026-11-01" }] }).lines[0]).toMatchObject({ elaborationDate: "2026-11-01", expiryDate: "2026-11-01" });
    expect(fails({ items: [{ ...line, elaboration_date: "2026-11-02", expiry_date: "2026-11-01" }] })).toEqual({ code: "INVALID_DATE", field: "items[0].expiry_date", expected: "≥ 2026-11-02" });
    expect(fails({ items: [{ ...line, expiry_date: "2026-02-30" }] })).toEqual({ code: "INVALID_DATE", field: "items[0].expiry_date" });
    expect(fails({ invoice_type: "41", items: [{ ...line, expiry_date: "2026-12-01" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].expiry_date" });
  });
});

describe("second currency on domestic documents (OtraMoneda)", () => {
  it("every Totales amount divided by the pesos per unit, rounded half away from zero to 4 decimals", () => {
    // 1000 / 3 = 333.33333 → 333.3333; 190 / 3 = 63.33333 → 63.3333; 1190 / 3 = 396.66666 → 396.6667
    const d = doc({ other_currency: { code: "USD", exchange_rate: 3 }, items: [line] });
    expect(plain(d.otherCurrency)).toEqual({ code: "USD", siiName: "DOLAR USA", rate: "3", scale: 4, exempt: 0, net: 3333333, iva: 633333, total: 3966667 });
    // 1 / 0.0002 = 5000 exactly; half: 1 / 8 = 0.125 at 4 decimals is exact, 1 / 16 = 0.0625, 1/ 32 = 0.03125 → 0.0313
    expect(doc({ other_currency: { code: "EUR", exchange_rate: 32 }, items: [{ ...line, unit_price: 1, taxes: [{ type: "EXE" }] }] }).otherCurrency!.total).toBe(313n);
  });
  it("withholdings and IVANoRet in the other currency on a factura de compra", () => {
    const d = doc({ invoice_type: "46", other_currency: { code: "USD", exchange_rate: 10 }, items: [{ ...line, taxes: [{ type: "34" }] }] });
    expect(plain(d.otherCurrency)).toMatchObject({ net: 1000000, iva: 190000, taxes: [{ type: "34", rate: "4", amount: 40000 }], ivaNotRetained: 150000, total: 1150000 });
  });
  it("precise errors: boletas and 43, CLP, an unknown currency, a zero rate, a zero total", () => {
    expect(fails({ invoice_type: "39", other_currency: { code: "USD", exchange_rate: 900 } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "other_currency" });
    expect(fails({ invoice_type: "43", other_currency: { code: "USD", exchange_rate: 900 }, items: [{ ...line, settled_type: "33" }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "other_currency" });
    expect(fails({ other_currency: { code: "CLP", exchange_rate: 1 } })).toEqual({ code: "CURRENCY_NOT_SUPPORTED", field: "other_currency.code" });
    expect(fails({ other_currency: { code: "XAU", exchange_rate: 1 } })).toEqual({ code: "CURRENCY_NOT_SUPPORTED", field: "other_currency.code" });
    expect(fails({ other_currency: { code: "USD", exchange_rate: 0 } })).toEqual({ code: "INVALID_NUMBER", field: "other_currency.exchange_rate" });
    expect(fails({ other_currency: { code: "USD", exchange_rate: 1000000 } })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "other_currency.exchange_rate", expected: "≤ 999999.9999" });
    // 10^15 pesos / 0.0001 = 10^19 units: beyond the 18 digits of MntTotOtrMnda
    expect(fails({ other_currency: { code: "USD", exchange_rate: 0.0001 }, items: [{ ...line, unit_price: 1e15, taxes: [{ type: "EXE" }] }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "other_currency.exchange_rate" });
    expect(fails({ invoice_type: "52", transfer_kind: 5, other_currency: { code: "USD", exchange_rate: 900 }, items: [{ ...line, unit_price: 0 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "other_currency" });
  });
});

describe("per-line price in another currency (OtrMnda)", () => {
  it("MontoItemOtrMnda = round(qty × price, 4) − discount (the line's %) + surcharge (sent)", () => {
    // 3 × 0.3333 = 0.9999; 2.5 % = 0.024997 → 0.025; + 0.1 = 1.0749
    const d = doc({ items: [{ ...line, quantity: 3, discount_percent: 2.5, other_currency: { code: "USD", unit_price: 0.3333, surcharge_amount: 0.1 } }] });
    expect(plain(d.lines[0]!.otherCurrency)).toEqual({ code: "USD", price: "0.3333", discount: 250, surcharge: 1000, amount: 10749 });
  });
  it("the conversion factor must give the line's unit price at the precision it is written with", () => {
    expect(doc({ items: [{ ...line, unit_price: 1020.5, other_currency: { code: "EUR", unit_price: 1.05, conversion_factor: 971.9048 } }] }).lines[0]!.otherCurrency!.factor).toBe("971.9048");
    expect(fails({ items: [{ ...line, unit_price: 1020, other_currency: { code: "EUR", unit_price: 1.05, conversion_factor: 971.9048 } }] })).toEqual({ code: "TOTALS_MISMATCH", field: "items[0].unit_price", expected: "1021" });
    expect(fails({ items: [{ ...line, other_currency: { code: "EUR", unit_price: 1, conversion_factor: 0 } }] })).toEqual({ code: "INVALID_NUMBER", field: "items[0].other_currency.conversion_factor" });
  });
  it("precise errors: a zero price, a discount over the line, boletas, 43", () => {
    expect(fails({ items: [{ ...line, other_currency: { code: "USD", unit_price: 0 } }] })).toEqual({ code: "INVALID_NUMBER", field: "items[0].other_currency.unit_price" });
    expect(fails({ items: [{ ...line, other_currency: { code: "USD", unit_price: 1, discount_amount: 2 } }] })).toEqual({ code: "AMOUNT_OUT_OF_RANGE", field: "items[0].other_currency.discount_amount" });
    expect(fails({ invoice_type: "39", items: [{ ...line, other_currency: { code: "USD", unit_price: 1 } }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].other_currency" });
    expect(fails({ invoice_type: "43", items: [{ ...line, settled_type: "33", other_currency: { code: "USD", unit_price: 1 } }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].other_currency" });
  });
});

describe("boleta show tickets (ItemEspectaculo, InfoTicket)", () => {
  it("a TICKET line carries its ticket; a SERVICE line only the mark", () => {
    const d = computeDocument(body({ invoice_type: "39", recipient: undefined, items: [{ ...line, ticket }, { ...line, ticket: { kind: "SERVICE" } }] }));
    expect(d.lines[0]!.show).toEqual({ kind: 1, ticket: { folio: 7, generatedAt: "2026-11-20T10:00:00", eventName: "Obra", ticketType: "Adulto", eventCode: "OB1", eventDate: "2026-12-01T20:00:00", venue: "Teatro", section: "Platea" } });
    expect(d.lines[1]!.show).toEqual({ kind: 2 });
  });
  it("precise errors: not a boleta, a missing ticket field, ticket data on a SERVICE line, a date before 2010-03-10, text too long", () => {
    expect(fails({ items: [{ ...line, ticket }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].ticket" });
    const b = { invoice_type: "41", recipient: undefined };
    expect(fails({ ...b, items: [{ ...line, ticket: { ...ticket, venue: undefined } }] })).toEqual({ code: "INVALID_INPUT", field: "items[0].ticket.venue" });
    expect(fails({ ...b, items: [{ ...line, ticket: { kind: "SERVICE", folio: 3 } }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].ticket.folio" });
    expect(fails({ ...b, items: [{ ...line, ticket: { ...ticket, event_date: "2009-12-31 20:00:00" } }] })).toEqual({ code: "INVALID_DATE", field: "items[0].ticket.event_date" });
    expect(fails({ ...b, items: [{ ...line, ticket: { ...ticket, event_code: "TOOLONG" } }] })).toMatchObject({ code: "FIELD_TOO_LONG", field: "items[0].ticket.event_code" });
  });
});

describe("MntBase, MntMargenCom and the global adjustments in the second currency", () => {
  it("MntBase and MntMargenCom are the sums of the retainer lines' bases and margins, outside the total", () => {
    const meat = { quantity: 1, unit_price: 1000, description: "Carne", taxes: [{ type: "17" }] };
    const d = doc({ items: [{ ...meat, retainer: { base_amount: 800, margin_amount: 100 } }, { ...meat, retainer: { base_amount: 700 } }, line] });
    expect(plain([d.totals.meatBase, d.totals.marginBase, d.totals.total])).toEqual([1500, 100, 3000 + 570 + 75]);
    expect(doc({ items: [line] }).totals.meatBase).toBeUndefined();
  });
  it("ValorDROtrMnda: a $ adjustment converted like the totals; a % one carries none; none without a second currency", () => {
    const exe = { ...line, unit_price: 10000, taxes: [{ type: "EXE" }] };
    const d = doc({ items: [exe], other_currency: { code: "USD", exchange_rate: 950 }, global_adjustments: [{ kind: "DISCOUNT", amount: 1000, applies_to: "EXEMPT" }, { kind: "SURCHARGE", percent: 5, applies_to: "EXEMPT" }] });
    // 1,000 / 950 = 1.052631… → 1.0526
    expect(d.adjustments.map((a) => a.otherValue)).toEqual([10526n, undefined]);
    expect(doc({ items: [exe], global_adjustments: [{ kind: "DISCOUNT", amount: 1000, applies_to: "EXEMPT" }] }).adjustments[0]!.otherValue).toBeUndefined();
  });
});
