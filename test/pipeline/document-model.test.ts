/**
 * Every feature of the document model (issue #14) through the real pipeline: POST, folio, stamp,
 * signature, the simulated SII's verdict ACCEPTED, and the PDF.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { issue, nowLocal, readyIssuer, untilFinal, type Issuer } from "../helpers/issuer";

let issuer: Issuer;
beforeAll(async () => {
  issuer = await readyIssuer([33, 34, 39, 41, 43, 46, 52, 61, 110], 20);
});

describe("the whole SII document end to end", () => {
  it.each(Object.keys(FEATURE_INPUTS))("%s is ACCEPTED and printed", async (name) => {
    const input = structuredClone(FEATURE_INPUTS[name]!);
    const body = { ...input, invoice_date: nowLocal(), issuer: { ...input.issuer, document_number: issuer.rut } };
    const res = await issue(issuer, body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status, JSON.stringify(done)).toBe("ACCEPTED");
    const pdf = await call("POST", `${issuer.base}/invoices/${done.id}/download-pdf/A4`, { key: issuer.owner.key });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
  }, 90_000);
});
