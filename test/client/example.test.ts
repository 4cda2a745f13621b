/**
 * examples/issue-invoice.ts, run as written against the Worker (its fetch handler, real D1/R2/queues
 * and the built-in SII simulator), with the typed client and a test key: the factura ends ACCEPTED
 * and the PDF is a PDF.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDteClient } from "../../clients/typescript";
import { issueInvoice } from "../../examples/issue-invoice";
import { newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";

describe("examples/issue-invoice.ts", () => {
  it("creates a company, uploads a certificate and a CAF, issues a factura, sees it ACCEPTED and gets its PDF", async () => {
    const owner = await newOwner("Example");
    const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
    const client = createDteClient({ baseUrl: "http://localhost", apiKey: owner.key, fetch: (req: Request) => exports.default.fetch(req) });
    const steps: string[] = [];
    const done = await issueInvoice({ client, pfx: makeFakePfx(cert, "secreto", "modern"), password: "secreto", log: (s) => steps.push(s) });
    expect(done.status).toBe("ACCEPTED");
    expect(done.folio).toBe(1);
    expect(new TextDecoder().decode(done.pdf.slice(0, 5))).toBe("%PDF-");
    expect(steps).toHaveLength(6);
  });
});
