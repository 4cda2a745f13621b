import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";
import { decodeBarcodesInContent, loadPdf } from "../pdf/helpers";
import { tedFromSignedXml } from "../../src/countries/cl/printed/issued";

/** §4.8 downloads of the printed representation, for documents that went through the pipeline. */
let issuer: Issuer;
const accepted: Record<string, any> = {};

const PNG_1x1 = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));

beforeAll(async () => {
  issuer = await readyIssuer([33, 39, 61], 20);
  for (const t of ["33", "39", "61"]) {
    const res = await issue(issuer, invoiceBody(issuer.rut, t));
    accepted[t] = await untilFinal(issuer, res.body.id);
    expect(accepted[t].status).toBe("ACCEPTED");
  }
});

async function pdf(id: string, format: string) {
  return call("POST", `${issuer.base}/invoices/${id}/download-pdf/${format}`, { key: issuer.owner.key });
}

describe("PDF downloads", () => {
  for (const type of ["33", "39", "61"]) {
    for (const format of ["A4", "80mm", "58mm"]) {
      it(`type ${type} in ${format}: a PDF with the folio, the RUT and the timbre that decodes to the TED`, async () => {
        const doc = accepted[type];
        const res = await pdf(doc.id, format);
        expect(res.status).toBe(200);
        expect(res.headers.get("Content-Type")).toBe("application/pdf");
        expect(res.headers.get("Content-Disposition")).toContain(`_T${type}_F${doc.folio}_${format}.pdf`);
        const bytes = new Uint8Array(await res.raw.arrayBuffer());
        expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe("%PDF-");
        const loaded = await loadPdf(bytes);
        const text = loaded.pages.flatMap((p) => p.texts).join(" ");
        expect(text).toContain(`${doc.folio}`);
        expect(text).toContain("Timbre Electrónico SII");
        expect(text).toContain("S.I.I. - SANTIAGO CENTRO"); // the issuer's commune, Santiago, in the communes catalog
        const dotted = issuer.rut.replace(/^(\d{2})(\d{3})(\d{3})/, "$1.$2.$3");
        expect(text).toContain(dotted);
        const xml = new Uint8Array(await (await call("GET", `${issuer.base}/invoices/${doc.id}/xml`, { key: issuer.owner.key })).raw.arrayBuffer());
        const ted = tedFromSignedXml(xml);
        const codes = await decodeBarcodesInContent(loaded.pages[0]!.content, format === "A4" ? 300 : 203);
        expect(codes.length).toBeGreaterThan(0);
        expect(new TextDecoder("latin1").decode(codes[0]!.bytes)).toBe(ted);
      });
    }
  }

  it("Base64: the documented JSON with the same bytes, served from the cache", async () => {
    const doc = accepted["33"];
    const raw = new Uint8Array(await (await pdf(doc.id, "A4")).raw.arrayBuffer());
    const res = await call("POST", `${issuer.base}/invoices/${doc.id}/download-base64/A4`, { key: issuer.owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ content_type: "application/pdf", format: "A4", size: raw.length });
    expect(res.body.file_name).toMatch(/_T33_F\d+_A4\.pdf$/);
    expect(Uint8Array.from(atob(res.body.data), (c) => c.charCodeAt(0))).toEqual(raw);
    const cached = await env.FILES.list({ prefix: `companies/${issuer.companyId}/invoices/${doc.id}/pdf/` });
    expect(cached.objects.map((o) => o.key).some((k) => k.includes("A4-nologo"))).toBe(true);
  });

  it("an unknown format is 400 naming the allowed ones; format names are case-insensitive", async () => {
    const res = await pdf(accepted["33"].id, "letter");
    expectError(res, 400, "INVOICE_PDF_FORMAT_UNKNOWN");
    expect(res.body.error.message).toContain("A4, 80mm, 58mm");
    expect((await pdf(accepted["33"].id, "a4")).status).toBe(200);
  });

  it("a logo change makes new renders that carry the logo", async () => {
    const doc = accepted["61"];
    const before = new Uint8Array(await (await pdf(doc.id, "A4")).raw.arrayBuffer());
    const form = new FormData();
    form.append("logo", new File([PNG_1x1 as Uint8Array<ArrayBuffer>], "logo.png", { type: "image/png" }));
    expect((await call("POST", `${issuer.base}/logo`, { key: issuer.owner.key, body: form })).status).toBe(201);
    const after = new Uint8Array(await (await pdf(doc.id, "A4")).raw.arrayBuffer());
    expect(after).not.toEqual(before);
    const loaded = await loadPdf(after);
    expect(loaded.pages[0]!.xobjects.some((x) => x.includes("Image"))).toBe(true);
  });

  it("a document that is not accepted has no PDF", async () => {
    await call("POST", "/simulator/sii/scenario", { key: issuer.owner.key, json: { mode: "reject", count: 1, rut: issuer.rut } });
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("REJECTED");
    expectError(await pdf(done.id, "A4"), 409, "INVOICE_NOT_ACCEPTED");
    expectError(await call("POST", `${issuer.base}/invoices/${done.id}/download-base64/80mm`, { key: issuer.owner.key }), 409, "INVOICE_NOT_ACCEPTED");
    await call("DELETE", "/simulator/sii/scenario", { key: issuer.owner.key });
  });
});
