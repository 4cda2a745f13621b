/**
 * examples/cancel-with-credit-note.ts, run as written against the Worker with the typed client and
 * a test key: a factura issued by examples/issue-invoice.ts is cancelled by an ANU credit note that
 * the simulated SII accepts, and the factura then names the note that cancels it.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDteClient } from "../../clients/typescript";
import { cancelWithCreditNote } from "../../examples/cancel-with-credit-note";
import { issueInvoice } from "../../examples/issue-invoice";
import { newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";

describe("examples/cancel-with-credit-note.ts", () => {
  it("cancels an accepted factura with an ANU credit note the SII accepts; a note that is not accepted is refused first", async () => {
    const owner = await newOwner("Cancel example");
    const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
    const client = createDteClient({ baseUrl: "http://localhost", apiKey: owner.key, fetch: (req: Request) => exports.default.fetch(req) });
    const issued = await issueInvoice({ client, pfx: makeFakePfx(cert, "secreto", "modern"), password: "secreto" });
    // Credit notes have folios of their own (a CAF of type 61), as the README's curl tour loads them.
    const caf = await client.POST("/simulator/sii/caf", { body: { rut: issued.body.issuer!.document_number, document_type: 61, from: 1, to: 10 }, parseAs: "arrayBuffer" });
    const loaded = await client.POST("/api/companies/{idCompany}/enumeration/upload", {
      params: { path: { idCompany: issued.companyId } },
      body: { file: "" },
      bodySerializer: () => {
        const form = new FormData();
        form.append("file", new Blob([caf.data as ArrayBuffer], { type: "application/xml" }), "caf61.xml");
        return form;
      },
    });
    expect(loaded.response.status).toBe(201);
    const steps: string[] = [];
    const note = await cancelWithCreditNote({ client, companyId: issued.companyId, invoiceId: issued.invoiceId, issued: issued.body, log: (s) => steps.push(s) });
    expect(note).toMatchObject({ invoice_type: "61", status: "ACCEPTED", cancels_invoice_id: issued.invoiceId });
    expect(steps).toHaveLength(3);
    const factura = await client.GET("/api/companies/{company_id}/invoices/{invoice_id}", { params: { path: { company_id: issued.companyId, invoice_id: issued.invoiceId } } });
    expect(factura.data?.cancelled_by).toBe(note.id);
    // Cancelling it again is refused by the API (the note's own rules), not silently issued twice.
    await expect(cancelWithCreditNote({ client, companyId: issued.companyId, invoiceId: issued.invoiceId, issued: issued.body })).rejects.toThrow(/issue credit note: HTTP 4\d\d/);
  });
});
