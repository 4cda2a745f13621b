/**
 * The simulated SII's register filled by a real issuance: a company issues a factura through the API
 * (queue consumer, DTEUpload to the simulator, polls to ACCEPTED); the recipient then finds it with
 * listReceived and accepts it through siiReception(env), the Worker's own factory.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { normalizeRut } from "../../src/countries/cl/documents/rut";
import { siiReception } from "../../src/countries/cl/sii/authority";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { fakeCredentials } from "./helpers";

const RECIPIENT = "77879240-0";

describe("register filled by issuance", () => {
  it("an accepted factura shows in the recipient's register and takes ACD; not the issuer's", async () => {
    const issuer = await readyIssuer([33]);
    const res = await issue(issuer, invoiceBody(issuer.rut, "33"));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await untilFinal(issuer, res.body.id);
    expect(done.status).toBe("ACCEPTED");
    const sii = siiReception(env);
    const signer = await fakeCredentials();
    const listed = await sii.listReceived({ companyRut: RECIPIENT, signer });
    expect(listed.supported).toBe(true);
    const mine = listed.documents.find((d) => d.issuerRut === normalizeRut(issuer.rut) && d.folio === done.folio);
    expect(mine).toMatchObject({ documentType: 33, folio: done.folio, total: done.total, issueDate: done.issue_date });
    const key = { companyRut: RECIPIENT, signer, issuerRut: issuer.rut, documentType: 33, folio: done.folio as number };
    expect(await sii.receptionTime(key)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-0[34]:00$/);
    expect(await sii.recordAction({ ...key, action: "ACD" })).toEqual({ code: 0, message: "Acción Completada OK" });
    expect((await sii.listEvents(key)).map((e) => e.action)).toEqual(["ACD"]);
    expect((await sii.recordAction({ ...key, companyRut: issuer.rut, action: "ERM" })).code).toBe(14);
  });
});
