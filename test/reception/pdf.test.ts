/**
 * The PDF of a received document prints what its XML carries, the last elements of the document
 * model included, as the issued document's PDF prints them: for every feature sample the XML reader
 * of src/countries/cl/printed/received.ts gives the issued printable (the global adjustments too: a `%` one's amount,
 * which the XML does not carry, computed from the lines as the engine does), and a feature sample
 * issued, then received through the API, prints its transaction kinds, sub-total parts and period
 * totals under the total, and the issuer's resolution from the envelope's Caratula (a DTE received
 * alone says the resolution was not stated).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { childElements, decodeXmlBytes, parseXml, type XElement } from "../../src/countries/cl";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { extrasOf } from "../../src/countries/cl/printed/extras";
import { printableOf, tedFromSignedXml } from "../../src/countries/cl/printed/issued";
import { extrasOfXml, printableOfReceived } from "../../src/countries/cl/printed/received";
import { caratulaResolution } from "../../src/countries/cl/reception/inbound";
import { verifyInbound } from "../../src/countries/cl";
import { call } from "../helpers/api";
import { buildFeatureDtes, FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { buildSamples } from "../helpers/cl-samples";
import type { PrintableDocument } from "../../src/countries/cl/printed/pdf";
import { loadPdf } from "../pdf/helpers";
import { envelope } from "../sii/helpers";
import { receiver, upload, type Receiver } from "./helpers";

let dtes: Record<string, SignedDte>;
let signer: SigningCredentials;
let r: Receiver;
beforeAll(async () => {
  const set = await buildSamples();
  signer = set.signer;
  dtes = await buildFeatureDtes(set);
  r = await receiver();
}, 120_000);

const branchOf = (xml: Uint8Array) => childElements(parseXml(decodeXmlBytes(xml), "DTE").documentElement as XElement).find((c) => ["Documento", "Exportaciones", "Liquidacion"].includes(c.localName ?? ""))!;

describe("received PDFs read the last elements from the XML", () => {
  it("for every feature sample, the XML reader reads what the computed document holds (kinds, guide, ids, references' issuers, point of sale, sub-totals and parts, period)", () => {
    expect(Object.keys(FEATURE_INPUTS).length).toBeGreaterThan(20);
    for (const [name, input] of Object.entries(FEATURE_INPUTS)) {
      expect(extrasOfXml(branchOf(dtes[name]!.xml)), name).toEqual(extrasOf(computeDocument(input)));
    }
  });

  it("for every feature sample, the received printable's header, parties, blocks (transport, customs, sub-totals, payment, other data), totals, references and lines are the issued one's", () => {
    for (const [name, input] of Object.entries(FEATURE_INPUTS)) {
      const d = dtes[name]!;
      const issued = printableOf(computeDocument(input), d.folio, tedFromSignedXml(d.xml)).totals;
      const received = printableOfReceived(d.xml)!.totals;
      expect({ ...received, currency: received.currency ?? "CLP" }, name).toEqual(issued);
      const issuedDoc = printableOf(computeDocument(input), d.folio, "");
      const head = ({ issuer, recipient, paymentMethod, transferType, dueDate, issueDate, folio, type }: PrintableDocument) => ({ issuer, recipient, paymentMethod, transferType, dueDate, issueDate, folio, type });
      expect(head(printableOfReceived(d.xml)!), name).toEqual(head(issuedDoc));
      expect(printableOfReceived(d.xml)!.references, name).toEqual(issuedDoc.references);
      expect(printableOfReceived(d.xml)!.blocks, name).toEqual(issuedDoc.blocks);
      expect(printableOfReceived(d.xml)!.lines, name).toEqual(issuedDoc.lines);
    }
  });

  it("for every feature sample, the received printable's global discounts and surcharges are the issued ones (a percentage's amount computed from the lines)", () => {
    const norm = (a: PrintableDocument["adjustments"]) => (a ?? []).map((x) => ({ ...x, amount: String(x.amount), description: x.description ?? undefined }));
    let withPercent = 0;
    for (const [name, input] of Object.entries(FEATURE_INPUTS)) {
      const d = dtes[name]!;
      const issued = printableOf(computeDocument(input), d.folio, "").adjustments;
      expect(norm(printableOfReceived(d.xml)!.adjustments), name).toEqual(norm(issued));
      withPercent += (issued ?? []).filter((a) => a.percent !== undefined).length;
    }
    expect(withPercent).toBeGreaterThan(0);
  });

  it("reads the issuer's resolution from its envelope's parsed Caratula, and nothing from anything else", async () => {
    const e = await envelope([dtes["33-mixed-global"]!], signer, { resolution: { number: 80, date: "2014-08-22" } });
    const report = await verifyInbound(e.xml, { mode: "simulator" });
    expect(caratulaResolution(report.caratula)).toEqual({ issuerRut: expect.stringMatching(/^\d+-[\dK]$/), number: 80, date: "2014-08-22" });
    expect(caratulaResolution((await verifyInbound(dtes["33-mixed-global"]!.xml, { mode: "simulator" })).caratula)).toBeNull();
    for (const broken of [{ nroResol: "8a0" }, { fchResol: "22-08-2014" }, { rutEmisor: undefined }]) {
      expect(caratulaResolution({ ...report.caratula, ...broken })).toBeNull();
    }
  });

  it("the PDF of a DTE received in its issuer's envelope prints that resolution and its global adjustments; received alone, it says the resolution was not stated", async () => {
    const d = dtes["33-mixed-global"]!;
    const inEnvelope = await upload(r, (await envelope([d], signer, { resolution: { number: 80, date: "2014-08-22" } })).xml);
    expect(inEnvelope.status, JSON.stringify(inEnvelope.body)).toBe(201);
    const textOf = async (id: string) => {
      const pdf = await call("POST", `/api/reception/invoices/${id}/download/pdf?company_id=${r.companyId}`, { key: r.owner.key });
      expect(pdf.status).toBe(200);
      return (await loadPdf(new Uint8Array(await pdf.raw.arrayBuffer()))).pages.flatMap((p) => p.texts).join(" ").replace(/\s+/g, " ");
    };
    const first = await textOf(inEnvelope.body.documents[0].id);
    expect(first).toContain("Res. N° 80 de 2014");
    const issued = printableOf(computeDocument(FEATURE_INPUTS["33-mixed-global"]!), d.folio, "").adjustments!;
    for (const a of issued) expect(first).toContain(a.description ?? (a.kind === "discount" ? "Descuento" : "Recargo"));
    const alone = await upload(r, dtes["33-gross"]!.xml, "dte.xml");
    expect(alone.status, JSON.stringify(alone.body)).toBe(201);
    const second = await textOf(alone.body.documents[0].id);
    expect(second).toContain("Res. SII del emisor no informada");
    expect(second).not.toContain("Res. N°");
  });

  it("a feature sample issued, then received: its PDF prints the transaction kinds, the sub-total parts and the period totals under the total", async () => {
    const res = await upload(r, (await envelope([dtes["33-period"]!, dtes["52-export-guide"]!], signer)).xml);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const texts: Record<number, string[]> = {};
    for (const doc of res.body.documents) {
      const pdf = await call("POST", `/api/reception/invoices/${doc.id}/download/pdf?company_id=${r.companyId}`, { key: r.owner.key });
      expect(pdf.status).toBe(200);
      texts[doc.document_type === "52" ? 52 : 33] = (await loadPdf(new Uint8Array(await pdf.raw.arrayBuffer()))).pages.flatMap((p) => p.texts);
    }
    const all = texts[33]!.join(" ").replace(/\s+/g, " ");
    for (const t of ["Tipo de transacción (compra)", "1 Compras del giro", "1 Ventas del giro", "Id. adicional del emisor", "EORI-CL-7608", "(neto $ 28.000, IVA $ 5.320, imp. adicionales $ 800, exento $ 3.000)"]) expect(all, t).toContain(t);
    const total = texts[33]!.indexOf("TOTAL");
    expect(total).toBeGreaterThan(-1);
    let at = total;
    for (const [label, value] of [["Monto del período", "$ 37.620"], ["Saldo anterior", "$ 15.000"], ["TOTAL A PAGAR", "$ 52.620"]]) {
      const i = texts[33]!.indexOf(label!);
      expect(i, label).toBeGreaterThan(at);
      expect(texts[33]![i + 1], label).toBe(value);
      at = i;
    }
    const guide = texts[52]!.join(" ").replace(/\s+/g, " ");
    for (const t of ["Guía de exportación, autorización SII", "Res. N° 123456 del 2026-10-01 (código traslado 2)", "Traslado para exportación (no venta)", "EXP-0042"]) expect(guide, t).toContain(t);
  });
});
