import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeForId } from "../../src/storage/db/document-store";
import { call, expectError } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";

/** Folio exhaustion is a synchronous 422 at POST, never an accepted document that FAILS later. */
describe("folio exhaustion at POST", () => {
  it("27 folios left, 60 concurrent POSTs: 27 × 202 and 33 × 422, and every accepted one gets its folio", async () => {
    const issuer = await readyIssuer([33], 27);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: `EXH-${i}` }))),
    );
    const accepted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status !== 202);
    expect(accepted).toHaveLength(27);
    expect(refused).toHaveLength(33);
    for (const r of refused) expectError(r, 422, "INVOICE_NO_FOLIOS");
    // "every folio left is reserved by the N documents accepted before this one" (N as the pipeline
    // has not yet allocated), or "every active folio range is used up" once it allocated all 27.
    for (const r of refused) expect(r.body.error.message).toMatch(/^No folio of document type 33 is left for this document: (every folio left is reserved by the \d+ documents accepted before this one|every active folio range is used up)\. Load a new CAF\.$/);
    const finals = await Promise.all(accepted.map((r) => untilFinal(issuer, r.body.id)));
    expect(finals.map((f) => f.status)).toEqual(Array(27).fill("ACCEPTED"));
    expect(new Set(finals.map((f) => f.folio)).size).toBe(27);
    // A refused document stored nothing: its external_reference is not taken (the answer is about folios).
    const again = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: `EXH-${results.findIndex((r) => r.status !== 202)}` }));
    expectError(again, 422, "INVOICE_NO_FOLIOS");
  });

  it("a FAILED document frees its external_reference", async () => {
    const issuer = await readyIssuer([33], 5);
    const first = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: "ERP-77" }));
    expect(first.status).toBe(202);
    await untilFinal(issuer, first.body.id);
    const taken = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: "ERP-77" }));
    expectError(taken, 409, "INVOICE_DUPLICATE_EXTERNAL_REFERENCE");
    // State fixture: the document as the pipeline leaves one that FAILED.
    await storeForId(env, issuer.companyId, first.body.id)!.db.run(sql`UPDATE invoices SET status = 'FAILED', last_error = 'test' WHERE id = ${first.body.id}`);
    const retry = await issue(issuer, invoiceBody(issuer.rut, "33", { external_reference: "ERP-77" }));
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect((await untilFinal(issuer, retry.body.id)).status).toBe("ACCEPTED");
    const list = await call("GET", `${issuer.base}/invoices?external_reference=ERP-77`, { key: issuer.owner.key });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain(retry.body.id);
  });
});
