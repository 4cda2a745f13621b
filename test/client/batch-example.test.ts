/**
 * examples/issue-batch.ts, run as written against the Worker with the typed client and a test key:
 * a batch of facturas with one bad row ends with every good row ACCEPTED and the bad one refused,
 * naming its field.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDteClient } from "../../clients/typescript";
import { issueBatch } from "../../examples/issue-batch";
import { issueInvoice } from "../../examples/issue-invoice";
import { newOwner } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";

describe("examples/issue-batch.ts", () => {
  it("issues a batch: the good rows ACCEPTED, the bad row refused with its field", async () => {
    const owner = await newOwner("Batch example");
    const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
    const client = createDteClient({ baseUrl: "http://localhost", apiKey: owner.key, fetch: (req: Request) => exports.default.fetch(req) });
    // A company with a certificate and folios of type 33 (10, one used by this factura).
    const issued = await issueInvoice({ client, pfx: makeFakePfx(cert, "secreto", "modern"), password: "secreto" });
    const rows = Array.from({ length: 4 }, (_, i) => ({ ...issued.body, external_reference: `LOTE-${i}-${crypto.randomUUID()}` }));
    rows.push({ ...issued.body, external_reference: `LOTE-bad-${crypto.randomUUID()}`, totals: { total: 1 } });
    const steps: string[] = [];
    const done = await issueBatch({ client, companyId: issued.companyId, rows, log: (s) => steps.push(s) });
    expect(done.counts).toMatchObject({ ACCEPTED: 4, REFUSED: 1 });
    expect(done.refused).toEqual([{ row: 4, code: "INVOICE_TOTALS_MISMATCH", fields: ["rows[4].totals.total"] }]);
    expect(steps.filter((s) => /^\d\/3/.test(s))).toHaveLength(3);
  });
});
