import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids";
import { call, newCompany, type ApiResponse } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, type Issuer } from "../helpers/issuer";

/** Status and error envelope without the request id: what a prober can compare. */
function answer(res: ApiResponse): unknown {
  const { request_id: _ignored, ...error } = res.body.error;
  return { status: res.status, error };
}

let a: Issuer;
let b: Issuer;
let bCertificate: string;
let bInvoice: string;

beforeAll(async () => {
  [a, b] = [await readyIssuer([33]), await readyIssuer([33])];
  bCertificate = (await call("GET", `${b.base}/certificates`, { key: b.owner.key })).body.data[0].id;
  const posted = await issue(b, invoiceBody(b.rut, "33"));
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  bInvoice = posted.body.id;
});

describe("another client's resources answer exactly like missing ones", () => {
  it("a company of another client and one that does not exist: the same 403", async () => {
    for (const path of ["", "/settings", "/certificates", "/invoices", "/enumeration/list"]) {
      const theirs = await call("GET", `${b.base}${path}`, { key: a.owner.key });
      const none = await call("GET", `/api/companies/${newId("cmp")}${path}`, { key: a.owner.key });
      expect(theirs.status, path).toBe(403);
      expect(theirs.body.error.code).toBe("AUTH_COMPANY_ACCESS_DENIED");
      expect(answer(theirs), path).toEqual(answer(none));
    }
  });

  it("another company's certificate or invoice under my company: exactly a missing one, id aside", async () => {
    const cert = await call("GET", `${a.base}/certificates/${bCertificate}`, { key: a.owner.key });
    const noCert = await call("GET", `${a.base}/certificates/${newId("cer")}`, { key: a.owner.key });
    expect(cert.status).toBe(404);
    expect(cert.body.error.code).toBe("CERTIFICATE_NOT_FOUND");
    expect(JSON.stringify(answer(cert)).replace(bCertificate, "ID")).toBe(JSON.stringify(answer(noCert)).replace(/cer_[0-9A-Z]{26}/, "ID"));
    for (const suffix of ["", "/xml"]) {
      const inv = await call("GET", `${a.base}/invoices/${bInvoice}${suffix}`, { key: a.owner.key });
      const noInv = await call("GET", `${a.base}/invoices/${newId("inv")}${suffix}`, { key: a.owner.key });
      expect(inv.status, suffix).toBe(404);
      expect(inv.body.error.code).toBe("INVOICE_NOT_FOUND");
      expect(JSON.stringify(answer(inv)).replace(bInvoice, "ID")).toBe(JSON.stringify(answer(noInv)).replace(/inv_[0-9A-Z]{26}/, "ID"));
    }
  });

  it("my own deleted company stays 404 COMPANY_NOT_FOUND (DECISIONS 13)", async () => {
    const id = await newCompany(a.owner);
    expect((await call("DELETE", `/api/companies/${id}`, { key: a.owner.key })).status).toBe(200);
    const res = await call("GET", `/api/companies/${id}`, { key: a.owner.key });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("COMPANY_NOT_FOUND");
  });
});
