/**
 * Golden and bad-path tests of the elements the body now carries on every type the SII's Formato
 * allows (docs/format-coverage.md): Comisiones on a factura de compra and its notes, TipoDespacho on
 * facturas, MntBruto on 34 and 43, IndMntNeto on 41, IndExe 5 on a guía that is not a sale,
 * GuiaExport and Aduana on a guía returning exported goods.
 */
import { describe, expect, it } from "vitest";
import { buildDteXml } from "../../../src/countries/cl/documents/dte";
import type { Ted } from "../../../src/countries/cl/documents/ted";
import { body, doc, fails, issuer, plain } from "./helpers";
import { computeDocument, type InvoiceInput } from "../../../src/countries/cl/documents/invoice";

const line = { quantity: 1, unit_price: 10000, description: "Uva" };
const ref46 = { number: 7, invoice_type: "FCO", invoice_date: "2026-11-10" };
const ref33 = { number: 1, invoice_type: "33", invoice_date: "2026-11-10" };
const TED: Ted = { xml: '<TED version="1.0"/>', flattened: "", bytes: new Uint8Array(), frmt: "" };
const xml = (over: Partial<InvoiceInput>) => buildDteXml(computeDocument(body(over)), 1, TED, "2026-11-20T10:30:05");

describe("commissions (Comisiones) on a factura de compra and the notes that modify one", () => {
  it("46: a percentage of the taxed net and an amount, with their IVA, deducted from the total", () => {
    // 10000 + IVA 1900 = 11900; 2 % = 200 + IVA 38; 500 + exempt 100 + IVA 95 → 11900 − 933 = 10967
    const d = doc({ invoice_type: "46", items: [line], commissions: [{ kind: "COMMISSION", description: "Comisión 2 %", percent: 2 }, { kind: "OTHER", description: "Flete", net_amount: 500, exempt_amount: 100 }] });
    expect(plain(d.totals.commissions)).toEqual({ net: 700, exempt: 100, iva: 133 });
    expect(d.totals.total).toBe(10967n);
    const x = xml({ invoice_type: "46", items: [line], commissions: [{ kind: "COMMISSION", description: "Comisión 2 %", percent: 2 }] });
    expect(x).toMatch(/<Comisiones>\n<ValComNeto>200<\/ValComNeto>\n<ValComExe>0<\/ValComExe>\n<ValComIVA>38<\/ValComIVA>\n<\/Comisiones>\n<MntTotal>11662<\/MntTotal>/);
    expect(x).toContain("<Comisiones>\n<NroLinCom>1</NroLinCom>\n<TipoMovim>C</TipoMovim>\n<Glosa>Comisión 2 %</Glosa>\n<TasaComision>2</TasaComision>");
  });
  it("56 and 61 that reference a factura de compra (46, or 45 on paper)", () => {
    for (const t of ["56", "61"]) {
      const d = doc({ invoice_type: t, reason_code: "COM", billing_reference: [ref46], items: [line], commissions: [{ kind: "COMMISSION", description: "c", net_amount: 1000 }] });
      expect(d.totals.total).toBe(11900n - 1190n);
    }
    expect(doc({ invoice_type: "61", reason_code: "COM", billing_reference: [ref33, { ...ref46, invoice_type: "45" }], items: [line], commissions: [{ kind: "OTHER", description: "c", net_amount: 1 }] }).commissions).toHaveLength(1);
  });
  it("refused on a note of a sale, on 33, 34, 52 and exports", () => {
    const c = { commissions: [{ kind: "OTHER" as const, description: "c", net_amount: 1 }] };
    expect(fails({ invoice_type: "61", reason_code: "COM", billing_reference: [ref33], items: [line], ...c })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "commissions" });
    for (const t of ["33", "34", "52"]) expect(fails({ invoice_type: t, items: [line], ...c })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "commissions" });
  });
});

describe("price marks and TipoDespacho on every type the Formato allows", () => {
  it("TipoDespacho on 33, 34 and 46; not on notes", () => {
    for (const t of ["33", "34", "46"]) expect(doc({ invoice_type: t, dispatch_kind: 2 }).dispatchKind).toBe(2);
    expect(xml({ dispatch_kind: 3 })).toContain("<FchEmis>2026-11-20</FchEmis>\n<TipoDespacho>3</TipoDespacho>");
    expect(fails({ invoice_type: "56", reason_code: "COM", billing_reference: [ref33], dispatch_kind: 1 })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "dispatch_kind" });
  });
  it("MntBruto on 34 (the mark only) and 43 (the commission applies to the net)", () => {
    const e = doc({ invoice_type: "34", gross_prices: true, items: [line] });
    expect([e.grossPrices, e.totals.exempt, e.totals.total]).toEqual([true, 10000n, 10000n]);
    // 11900 gross → net 10000, IVA 1900; 10 % of the net = 1000 + IVA 190
    const l = doc({ invoice_type: "43", gross_prices: true, items: [{ ...line, unit_price: 11900, settled_type: "33" }], commissions: [{ kind: "COMMISSION", description: "c", percent: 10 }] });
    expect(plain([l.totals.net, l.totals.iva, l.totals.commissions, l.totals.total])).toEqual([10000, 1900, { net: 1000, exempt: 0, iva: 190 }, 10710]);
    expect(xml({ invoice_type: "43", gross_prices: true, items: [{ ...line, settled_type: "33" }] })).toContain("<MntBruto>1</MntBruto>");
    expect(fails({ invoice_type: "110", gross_prices: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "gross_prices" });
  });
  it("IndMntNeto on 41 (the mark only)", () => {
    const d = doc({ invoice_type: "41", net_amounts: true, items: [line] });
    expect([d.netAmounts, d.totals.total]).toEqual([true, 10000n]);
    expect(fails({ net_amounts: true })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "net_amounts" });
  });
});

describe("guías: IndExe 5 and the return of exported goods", () => {
  const reduced = { quantity: 2, unit_price: 1000, description: "Devuelto", exempt_indicator: 5 };
  const ref52 = { number: 9, invoice_type: "GDE", invoice_date: "2026-11-15" };
  it("IndExe 5 on a guía that is not a sale: an item taken back, outside the totals (not a deposit)", () => {
    const d = doc({ invoice_type: "52", transfer_kind: 5, billing_reference: [ref52], items: [line, reduced] });
    expect(plain([d.lines[1]!.indicator, d.totals.net, d.totals.deposit, d.totals.total])).toEqual([5, 10000, null, 11900]);
    expect(xml({ invoice_type: "52", transfer_kind: 5, billing_reference: [ref52], items: [line, reduced] })).toContain("<IndExe>5</IndExe>");
    // on a credit note IndExe 5 stays a deposit returned
    expect(doc({ invoice_type: "61", reason_code: "COM", billing_reference: [ref33], items: [reduced] }).totals.deposit).toBe(2000n);
  });
  it("refused on a sale guía and without the earlier guía referenced", () => {
    expect(fails({ invoice_type: "52", billing_reference: [ref52], items: [line, reduced] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[1].exempt_indicator" });
    expect(fails({ invoice_type: "52", transfer_kind: 9, billing_reference: [ref52], items: [line, reduced] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[1].exempt_indicator" });
    expect(fails({ invoice_type: "52", transfer_kind: 5, billing_reference: [ref33], items: [line, reduced] })).toEqual({ code: "REFERENCE_REQUIRED", field: "billing_reference" });
    expect(fails({ invoice_type: "46", items: [reduced] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "items[0].exempt_indicator" });
  });
  it("GuiaExport and Aduana on a guía returning exported goods (transfer_kind 7)", () => {
    const d = doc({ invoice_type: "52", transfer_kind: 7, issuer: { ...issuer, export_guide: { transfer_code: 2 } }, customs: { port_of_loading: "906" }, items: [line] });
    expect([d.issuer.exportGuide, d.customs?.portOfLoading]).toEqual([{ transferCode: 2 }, 906]);
    expect(fails({ invoice_type: "52", transfer_kind: 6, customs: { port_of_loading: "906" }, items: [line] })).toEqual({ code: "FIELD_NOT_ALLOWED", field: "customs" });
  });
});
