/** Golden tests of Transporte/Aduana (transport.ts), OtraMoneda (currency.ts) and Comisiones (commissions.ts). */
import { describe, expect, it } from "vitest";
import { doc, fails, foreign, plain } from "./helpers";

const exp = { invoice_type: "110", recipient: foreign, currency: { code: "USD" } };

describe("transport", () => {
  it("plate, carrier, driver and destination, RUTs normalised", () => {
    const d = doc({ invoice_type: "52", transport: { plate: "AB1234", carrier_rut: "77.879.240-0", driver: { rut: "11.111.111-1", name: "Pedro" }, destination: { address: "Ruta 5 km 20", city: "Buin" } } });
    expect(d.transport).toEqual({ plate: "AB1234", carrierRut: "77879240-0", driver: { rut: "11111111-1", name: "Pedro" }, destination: { address: "Ruta 5 km 20", city: "Buin" } });
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "39", transport: { plate: "X" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "transport" });
    expect(fails({ invoice_type: "52", transport: { driver: { rut: "1-2", name: "x" } } })).toMatchObject({ code: "INVALID_RUT", field: "transport.driver.rut" });
    expect(fails({ invoice_type: "52", transport: { plate: "123456789" } })).toMatchObject({ code: "FIELD_TOO_LONG", field: "transport.plate" });
  });
});

describe("customs", () => {
  it("codes, weights, packages (total defaults to their sum), freight and insurance in the document currency", () => {
    const d = doc({ ...exp, customs: { sale_modality: "1", sale_clause: "2", transport_mode: "4", port_of_loading: "901", port_of_unloading: "111", gross_weight: 10.5, net_weight: "9.25", gross_weight_unit: "6", packages: [{ type: "75", quantity: 3 }, { type: "75", quantity: 2, marks: "X" }], freight: 12.5, insurance: 1, destination_country: "225", payment_form: "1" } });
    expect(plain(d.customs)).toEqual({ saleModality: 1, saleClause: 2, transportMode: 4, portOfLoading: 901, portOfUnloading: 111, grossWeight: "10.5", netWeight: "9.25", grossWeightUnit: 6, totalPackages: 5, packages: [{ type: 75, quantity: 3 }, { type: 75, quantity: 2, marks: "X" }], freight: 1250, insurance: 100, destinationCountry: 225 });
    expect(d.exportPaymentForm).toBe(1);
  });
  it("precise errors", () => {
    expect(fails({ customs: { sale_clause: "1" } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "customs" });
    expect(fails({ ...exp, customs: { port_of_loading: "AB" } })).toMatchObject({ code: "INVALID_INPUT", field: "customs.port_of_loading" });
    expect(fails({ ...exp, customs: { gross_weight: 5, net_weight: 6 } })).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", field: "customs.net_weight" });
  });
});

describe("second currency", () => {
  it("USD export with CLP: round(total × rate) to whole pesos, at the .5 boundary", () => {
    // 10.00 USD × 945.35 = 9453.5 → 9454; 10.00 × 945.3449 = 9453.449 → 9453
    expect(plain(doc({ ...exp, items: [{ quantity: 1, unit_price: 10, description: "a" }], other_currency: { code: "CLP", exchange_rate: 945.35 } }).otherCurrency)).toEqual({ code: "CLP", siiName: "PESO CL", rate: "945.35", scale: 0, exempt: 9454, total: 9454 });
    expect(doc({ ...exp, items: [{ quantity: 1, unit_price: 10, description: "a" }], other_currency: { code: "CLP", exchange_rate: 945.3449 } }).otherCurrency!.total).toBe(9453n);
    // currency.exchange_rate alone: pesos, as before
    expect(doc({ ...exp, currency: { code: "USD", exchange_rate: 900 }, items: [{ quantity: 1, unit_price: 1.5, description: "a" }] }).otherCurrency!.total).toBe(1350n);
  });
  it("EUR export with USD second currency keeps 4 decimals", () => {
    const o = doc({ ...exp, currency: { code: "EUR" }, items: [{ quantity: 1, unit_price: 99.99, description: "a" }], other_currency: { code: "USD", exchange_rate: 1.0837 } }).otherCurrency!;
    expect(plain(o)).toEqual({ code: "USD", siiName: "DOLAR USA", rate: "1.0837", scale: 4, exempt: 1083592, total: 1083592 }); // 108.359163 → 108.3592
  });
  it("precise errors", () => {
    expect(fails({ invoice_type: "39", other_currency: { code: "USD", exchange_rate: 900 } })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "other_currency" });
    expect(fails({ ...exp, other_currency: { code: "USD", exchange_rate: 1 } })).toMatchObject({ code: "CURRENCY_NOT_SUPPORTED", field: "other_currency.code" });
    expect(fails({ ...exp, other_currency: { code: "XXX", exchange_rate: 1 } })).toMatchObject({ code: "CURRENCY_NOT_SUPPORTED", field: "other_currency.code" });
  });
});

describe("liquidación-factura commissions", () => {
  const items = [{ quantity: 1, unit_price: 100005, description: "venta", settled_type: "33" }];
  it("a percentage of the settled net rounds half away from zero; IVA 19 % of it; the total deducts them", () => {
    const d = doc({ invoice_type: "43", items, commissions: [{ kind: "COMMISSION", description: "Comisión", percent: 2.5 }] });
    // 100005 × 2.5 % = 2500.125 → 2500; IVA 475
    expect(plain(d.commissions)).toEqual([{ lineNo: 1, kind: "C", description: "Comisión", rate: "2.5", net: 2500, exempt: 0, iva: 475 }]);
    expect(d.totals.total).toBe(100005n + 19001n - 2975n);
  });
  it("precise errors", () => {
    expect(fails({ commissions: [{ kind: "OTHER", description: "x", net_amount: 1 }] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "commissions" });
    expect(fails({ invoice_type: "43", items, commissions: [{ kind: "OTHER", description: "x" }] })).toMatchObject({ code: "INVALID_INPUT", field: "commissions[0].net_amount" });
    expect(fails({ invoice_type: "43", items, commissions: [{ kind: "COMMISSION", description: "x", percent: 5, net_amount: 1 }] })).toMatchObject({ code: "TOTALS_MISMATCH", field: "commissions[0].net_amount", expected: "5000" });
  });
});
