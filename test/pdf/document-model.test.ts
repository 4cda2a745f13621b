/**
 * The PDF shows what the XML says (issue #14): discounts and surcharges, withholdings, transport,
 * customs, the second currency, the guía's transfer kind and "CEDIBLE CON SU FACTURA" copy, the
 * liquidación-factura's commissions, the payment status and the principal; and a very long roll
 * document is cut into pages.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { printableOf, tedFromSignedXml } from "../../src/countries/cl/printed/issued";
import { renderPdf, type PdfFormat } from "../../src/countries/cl/printed/pdf/render";
import { ROLL_PAGE_MAX } from "../../src/countries/cl/printed/pdf/render/roll";
import { buildFeatureDtes, FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { buildSamples, issuer } from "../helpers/cl-samples";
import { loadPdf } from "./helpers";

let dtes: Record<string, SignedDte>;
beforeAll(async () => {
  dtes = await buildFeatureDtes(await buildSamples());
}, 120_000);

async function texts(name: string, format: PdfFormat, input: InvoiceInput = FEATURE_INPUTS[name]!): Promise<{ all: string; pages: number }> {
  const d = dtes[name]!;
  const bytes = await renderPdf(printableOf(computeDocument(input), d.folio, tedFromSignedXml(d.xml)), format);
  const { pages } = await loadPdf(bytes);
  return { all: pages.flatMap((p) => p.texts).join(" "), pages: pages.length };
}

describe("the PDF shows every section of the document", () => {
  for (const format of ["A4", "80mm"] as const) {
    it(`${format}: line and global discounts and surcharges, codes, long descriptions, recipient contact`, async () => {
      const { all } = await texts("33-mixed-global", format);
      for (const t of ["Recargo: 40% + 250", "-5% 500", "+50% 1.250", "Cliente frecuente 10%", "-1.325", "Promoción curso (exento)", "-500", "Soporte 8x5 por correo y teléfono, noviembre 2026.", "SOP-01", "pagos@cliente.cl", "Servicios (líneas 1, 2)", "$ 13.250", "$ 18.691"]) expect(all, t).toContain(t);
    });
    it(`${format}: withholdings as deductions, IVA not withheld, deposit, not billable`, async () => {
      const w = (await texts("46-withholdings", format)).all;
      for (const t of ["IVA retenido ganado 8%", "-73.600", "IVA retenido total 19%", "-11.400", "IVA no retenido", "101.200"]) expect(w, t).toContain(t);
      const i = (await texts("33-indicators", format)).all;
      for (const t of ["Garantía por envases", "1.500", "Monto no facturable", "$ 1.600"]) expect(i, t).toContain(t);
    });
    it(`${format}: guía transfer kind and transport; CEDIBLE CON SU FACTURA on a sale`, async () => {
      const { all } = await texts("52-transfer", format);
      for (const t of ["Solicitado por (RUT)", "Traslados internos", "Transporte", "ABCD12", "Pedro Soto (11111111-1)", "Camino a Melipilla 1234, Maipú, Santiago"]) expect(all, t).toContain(t);
      expect(all).not.toContain("CEDIBLE CON SU FACTURA");
      const sale = await texts("52-transfer", format, { ...FEATURE_INPUTS["52-transfer"]!, transfer_kind: 1 });
      expect(sale.all).toContain("Operación constituye venta");
      expect(sale.all).toContain("CEDIBLE CON SU FACTURA");
    });
    it(`${format}: export customs data with names and the total in the second currency`, async () => {
      const { all } = await texts("110-customs", format);
      for (const t of ["Aduana", "Forma de pago exportación", "1 Cobranza hasta 1 año", "1 CIF USD 1.234,50", "MSC ALINA", "906", "111 MONTREAL", "820.5 KN", "60 × 75", "(ACME-2026)", "225", "Total en PESO CL (T/C 945,37)", "$ 1.165.878", "USD 1.233,25", "-25,75"]) expect(all, t).toContain(t);
    });
    it(`${format}: fuel taxes, IVA propio and de terceros, the total in USD; CredEC deducted`, async () => {
      const f = (await texts("33-fuel-third-party", format)).all;
      for (const t of ["Impuesto específico diesel", "987.654", "Impuesto específico gasolinas", "450.000", "IVA propio", "2.375.000", "IVA terceros", "19.000", "Total en DOLAR USA (T/C 950,25)", "17.291,9274", "$ 16.431.654"]) expect(f, t).toContain(t);
      const c = (await texts("33-construction", format)).all;
      for (const t of ["Crédito 65% empresas constructoras", "-6.175.000", "$ 53.325.000"]) expect(c, t).toContain(t);
    });
    it(`${format}: sub-quantities, elaboration and expiry dates, the price in another currency, show tickets`, async () => {
      const l = (await texts("52-lots", format)).all.replace(/\s+/g, " ");
      for (const t of ["Descuento: 5% + 6123", "Subcantidades: 70 L2026-311, 50 L2026-312", "Elaboración: 2026-11-02", "Vencimiento: 2027-02-02", "EUR 1.05 c/u (factor 971.9048), desc. 12.6: EUR 113.4"]) expect(l, t).toContain(t);
      const s = (await texts("39-show", format)).all.replace(/\s+/g, " ");
      for (const t of ["Ticket N° 1201 Adulto: Concierto de Primavera (CP26), 2026-12-05 21:00:00", "Platea Alta, fila F, asiento 12", "Valor servicio (espectáculo)"]) expect(s, t).toContain(t);
    });
    it(`${format}: payment status and account, the principal (document and boleta line), the credit note without debit reduction, MntBase and MntMargenCom`, async () => {
      const p = (await texts("34-surcharge", format)).all.replace(/\s+/g, " ");
      for (const t of ["Pago", "Depósito o transferencia", "2026-11-19", "$ 20.000", "$ 10.450", "Cuenta vista N° 12-345-678 BancoEstado", "RUT mandante", "11111111-1", "+56 2 2345 6789, +56 9 8765 4321", "V-17", "81234567", "Casilla 123, Providencia, Santiago"]) expect(p, t).toContain(t);
      const e = (await texts("110-customs", format)).all.replace(/\s+/g, " ");
      for (const t of ["USD 1.000,00", "USD 233,00", "Cuenta corriente N° 0012345678 Banco de Chile"]) expect(e, t).toContain(t);
      expect((await texts("39-features", format)).all.replace(/\s+/g, " ")).toContain("77879240-0");
      expect((await texts("61-references", format)).all.replace(/\s+/g, " ")).toContain("sin derecho a descontar débito");
      const m = (await texts("33-meat-usd", format)).all.replace(/\s+/g, " ");
      for (const t of ["Base faenamiento carne", "$ 340.000", "Base márgenes de comercialización", "$ 40.000"]) expect(m, t).toContain(t);
    });
    it(`${format}: transaction kinds, period totals and amount to pay, sub-total parts, the export guide's authorisation, additional and foreign ids, seller and cash register`, async () => {
      const p = (await texts("33-period", format)).all.replace(/\s+/g, " ");
      for (const t of ["Tipo de transacción (compra)", "1 Compras del giro", "Tipo de transacción (venta)", "1 Ventas del giro", "Id. adicional del emisor", "EORI-CL-7608", "(neto $ 28.000, IVA $ 5.320, imp. adicionales $ 800, exento $ 3.000)"]) expect(p, t).toContain(t);
      expect(p).not.toMatch(/CLP \d/);
      const g = (await texts("52-export-guide", format)).all.replace(/\s+/g, " ");
      for (const t of ["Guía de exportación, autorización SII", "Res. N° 123456 del 2026-10-01 (código traslado 2)", "Traslado para exportación (no venta)"]) expect(g, t).toContain(t);
      const x = (await texts("110-additional-ids", format)).all.replace(/\s+/g, " ");
      for (const t of ["Código adicional sucursal", "SUC-VALPO", "Receptor extranjero", "Id. US-99-1234567", "id. adicional EIN 12-3456789", "NAVIERA SUR, RUT 77879240-0, id. IMO 9876543", "(CLVAP)", "(USLAX)", "Referencia 1, emisor", "55555555-5 (id. adicional ACME-PO)"]) expect(x, t).toContain(t);
      const b = (await texts("39-period", format)).all.replace(/\s+/g, " ");
      for (const t of ["Vendedor", "INTERNET", "Caja", "CAJA-07"]) expect(b, t).toContain(t);
    });
    it(`${format}: the period's amount, the previous balance and the amount to pay are printed with the totals, after the total, as money`, async () => {
      for (const [name, rows] of [
        ["33-period", [["Monto del período", "$ 37.620"], ["Saldo anterior", "$ 15.000"], ["TOTAL A PAGAR", "$ 52.620"]]],
        ["39-period", [["Monto del período", "$ 12.900"], ["Saldo anterior", "$ -2.000"], ["TOTAL A PAGAR", "$ 10.900"]]],
      ] as const) {
        const d = dtes[name]!;
        const { pages } = await loadPdf(await renderPdf(printableOf(computeDocument(FEATURE_INPUTS[name]!), d.folio, tedFromSignedXml(d.xml)), format));
        const last = pages.at(-1)!.texts.map((t) => t.replace(/:$/, ""));
        expect(pages.flatMap((p) => p.texts)).not.toContain("Totales del período");
        const total = last.indexOf("TOTAL");
        expect(total, name).toBeGreaterThan(-1);
        let at = total;
        for (const [label, value] of rows) {
          const i = last.indexOf(label);
          expect(i, `${name} ${label}`).toBeGreaterThan(at);
          expect(last[i + 1], `${name} ${label}`).toBe(value);
          at = i;
        }
      }
    });
    it(`${format}: liquidación-factura commissions deducted`, async () => {
      const { all } = await texts("43-commission", format);
      expect(all).toContain("Comisiones y otros cargos");
      expect(all).toContain("-21.658");
    });
  }
});

describe("long roll documents", () => {
  it("a 1,000-line boleta on an 80 mm roll is cut into pages no longer than the page limit, the timbre on the last", async () => {
    const input: InvoiceInput = { invoice_type: "39", invoice_date: "2026-11-20 10:30:00", issuer, items: Array.from({ length: 1000 }, (_, i) => ({ quantity: 1, unit_price: 100 + i, description: `Producto ${i + 1}` })) };
    const d = dtes["39-features"]!;
    const bytes = await renderPdf(printableOf(computeDocument(input), d.folio, tedFromSignedXml(d.xml)), "80mm");
    const { pages } = await loadPdf(bytes);
    expect(pages.length).toBeGreaterThan(5);
    for (const p of pages) expect(p.height).toBeLessThanOrEqual(Math.ceil(ROLL_PAGE_MAX));
    const lines = pages.flatMap((p) => p.texts.filter((t) => /^Producto \d+$/.test(t)));
    expect(lines).toHaveLength(1000);
    expect(new Set(lines).size).toBe(1000);
    expect(pages.at(-1)!.texts).toContain("Timbre Electrónico SII");
    for (const p of pages.slice(0, -1)) expect(p.texts).toContain("Continúa en la página siguiente");
  }, 60_000);
});
