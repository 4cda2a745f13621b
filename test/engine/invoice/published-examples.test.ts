/**
 * Published DTEs expressed as our API body, issued through the engine (computed, stamped, signed,
 * verified), and compared section by section with the published XML: Totales, each Detalle's codes,
 * quantity, price and MontoItem, and the references. The published values are transcribed here as
 * facts (amounts and codes); no published file is committed (see test/fixtures/cl/README.md):
 *
 * - F60T33: the SII's official example EnvioDTE (factura 33, folio 60, 2003-10-13, RUT 97975000-5),
 *   read 2026-11-23 from LibreDTE/libredte-lib-core tests/fixtures/xml/sii/F60T33-ejemplo-oficial-SII.xml
 *   @ad6b6a7 (an AGPL repository: only its amounts and codes, as facts).
 * - Real DTEs downloaded from the SII portal, published in cordada/lib-cl-sii-python (MIT)
 *   src/tests/test_data/sii-dte/ @deb537c, read 2026-11-23: DTE--60910000-1--33--2336600.xml,
 *   DTE--96670340-7--61--110616.xml, DTE--76354771-K--33--170.xml, DTE--76399752-9--33--25568.xml.
 *   They name real people in Contacto, so only amounts, codes and references are used.
 *
 * Parties and dates are ours (the CAFs are the simulator's); what is compared is what the engine
 * computes and writes from the body.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { SignedDte } from "../../../src/countries/cl/documents/dte";
import type { InvoiceInput } from "../../../src/countries/cl/documents/invoice";
import { verifyInbound } from "../../../src/countries/cl/exchange/verify";
import { signInputs } from "../../helpers/cl-feature-samples";
import { buildSamples, issuer, recipient } from "../../helpers/cl-samples";

const date = "2026-11-20 10:30:00";
const base = { invoice_date: date, issuer, recipient };

interface Published {
  body: InvoiceInput;
  totales: Record<string, string>;
  detalle: Record<string, string>[];
  referencia?: Record<string, string>[];
}

const PUBLISHED: Record<string, Published> = {
  "SII F60T33": {
    body: {
      ...base, invoice_type: "33",
      items: [
        { quantity: 20, unit_price: 4500, description: "Parlantes Multimedia 180W.", item_codes: [{ type: "INT1", value: "011" }] },
        { quantity: 1, unit_price: 5000, description: "Mouse Inalambrico PS/2", item_codes: [{ type: "INT1", value: "0231" }] },
        { quantity: 5, unit_price: 1000, description: "Caja de Diskettes 10 Unidades", item_codes: [{ type: "INT1", value: "1515" }] },
      ],
    },
    totales: { MntNeto: "100000", TasaIVA: "19", IVA: "19000", MntTotal: "119000" },
    detalle: [
      { NroLinDet: "1", TpoCodigo: "INT1", VlrCodigo: "011", QtyItem: "20", PrcItem: "4500", MontoItem: "90000" },
      { NroLinDet: "2", TpoCodigo: "INT1", VlrCodigo: "0231", QtyItem: "1", PrcItem: "5000", MontoItem: "5000" },
      { NroLinDet: "3", TpoCodigo: "INT1", VlrCodigo: "1515", QtyItem: "5", PrcItem: "1000", MontoItem: "5000" },
    ],
  },
  "portal 33 #2336600 (a price with decimals)": {
    body: { ...base, invoice_type: "33", service_indicator: 2, payment_method: { code: "1" }, items: [{ quantity: 1, unit_price: "8942.86", description: "dominio fyndata/6895189/1" }] },
    totales: { MntNeto: "8943", TasaIVA: "19", IVA: "1699", MntTotal: "10642" },
    detalle: [{ NroLinDet: "1", QtyItem: "1.0", PrcItem: "8942.86", MontoItem: "8943" }],
  },
  "portal 61 #110616 (a credit note correcting amounts)": {
    body: {
      ...base, invoice_type: "61", reason_code: "COM", payment_method: { code: "2" }, payment_terms: { description: "Crédito" },
      billing_reference: [{ number: 115885, invoice_type: "33", invoice_date: "2019-08-02", reason: "Comision venta corner Hites" }],
      items: [{ quantity: 1, unit_price: 48190822, reference_price: 48190822, description: "Comision Corner", long_description: "Comision Venta Corner Hites Julio 2019" }],
    },
    totales: { MntNeto: "48190822", TasaIVA: "19", IVA: "9156256", MntTotal: "57347078" },
    detalle: [{ NroLinDet: "1", PrcRef: "48190822.0", QtyItem: "1.0", PrcItem: "48190822.0", MontoItem: "48190822" }],
    referencia: [{ NroLinRef: "1", TpoDocRef: "33", FolioRef: "115885", FchRef: "2019-08-02", CodRef: "3", RazonRef: "Comision venta corner Hites" }],
  },
  "portal 33 #170 (a purchase-order reference)": {
    body: {
      ...base, invoice_type: "33", payment_method: { code: "2" },
      billing_reference: [{ number: "4510083633", invoice_type: "801", invoice_date: "2019-03-22" }],
      items: [{ quantity: "2.00", unit_price: "1258950.00", code_unit_of_measure: "Unid", description: "Tableros electricos 3 tom", long_description: "as 3p + t; 380v; 50 hz; 32a; 3 tomas monofasicas 2p + t; 240v; 50 hz; 16a; proteccion ip, segun orden de compra de la referencia.-" }],
    },
    totales: { MntNeto: "2517900", TasaIVA: "19.00", IVA: "478401", MntTotal: "2996301" },
    detalle: [{ NroLinDet: "1", QtyItem: "2.00", UnmdItem: "Unid", PrcItem: "1258950.00", MontoItem: "2517900" }],
    referencia: [{ NroLinRef: "1", TpoDocRef: "801", FolioRef: "4510083633", FchRef: "2019-03-22" }],
  },
  "portal 33 #25568 (an item code and a purchase order)": {
    body: {
      ...base, invoice_type: "33", payment_method: { code: "2" },
      billing_reference: [{ number: "638370", invoice_type: "801", invoice_date: "2019-03-28" }],
      items: [{ quantity: "1.00", unit_price: "194111.00", code_unit_of_measure: "UN", description: "JUEGO_LIVI - CHOCOLATE", long_description: "ROMA 3.1.1", item_codes: [{ type: "SKU", value: "19586316" }] }],
    },
    totales: { MntNeto: "194111", TasaIVA: "19.00", IVA: "36881", MntTotal: "230992" },
    detalle: [{ NroLinDet: "1", TpoCodigo: "SKU", VlrCodigo: "19586316", QtyItem: "1.00", UnmdItem: "UN", PrcItem: "194111.00", MontoItem: "194111" }],
    referencia: [{ NroLinRef: "1", TpoDocRef: "801", FolioRef: "638370", FchRef: "2019-03-28" }],
  },
};

/** The inner text of every `name` element of the XML. */
function sections(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, "g"))].map((m) => m[1]!);
}

/** The leaves of a section, name → text (the first of each name). */
function leaves(inner: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of inner.matchAll(/<(\w+)>([^<]*)<\/\1>/g)) out[m[1]!] ??= m[2]!;
  return out;
}

/** Codes compare as text; other numbers as numbers (the published "19.00" and "1.0" are our "19" and "1"). */
const TEXT = new Set(["VlrCodigo", "TpoCodigo", "FolioRef", "TpoDocRef"]);
function normalized(keys: Record<string, string>, values: Record<string, string>): Record<string, string | number | undefined> {
  return Object.fromEntries(Object.keys(keys).map((k) => {
    const v = values[k];
    return [k, v !== undefined && !TEXT.has(k) && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v];
  }));
}
const same = (published: Record<string, string>, ours: Record<string, string>) => normalized(published, ours);
const expectedOf = (published: Record<string, string>) => normalized(published, published);

let dtes: Record<string, SignedDte>;
beforeAll(async () => {
  dtes = await signInputs(await buildSamples(), Object.fromEntries(Object.entries(PUBLISHED).map(([n, p]) => [n, p.body])), 40);
}, 120_000);

describe("published DTEs, issued from our body, carry the published amounts and sections", () => {
  for (const [name, p] of Object.entries(PUBLISHED)) {
    it(name, async () => {
      const d = dtes[name]!;
      const verdict = await verifyInbound(d.xml, { mode: "simulator", fallbacks: false });
      expect(verdict.ok, verdict.message).toBe(true);
      const xml = d.xmlString;
      expect(same(p.totales, leaves(sections(xml, "Totales")[0]!))).toEqual(expectedOf(p.totales));
      const lines = sections(xml, "Detalle");
      expect(lines).toHaveLength(p.detalle.length);
      p.detalle.forEach((pl, i) => expect(same(pl, leaves(lines[i]!)), `Detalle ${i + 1}`).toEqual(expectedOf(pl)));
      const refs = sections(xml, "Referencia");
      expect(refs).toHaveLength(p.referencia?.length ?? 0);
      (p.referencia ?? []).forEach((pr, i) => expect(same(pr, leaves(refs[i]!)), `Referencia ${i + 1}`).toEqual(expectedOf(pr)));
      // The stamp carries the published total too (TED MNT).
      expect(sections(xml, "MNT")[0]).toBe(p.totales.MntTotal);
    });
  }
});
