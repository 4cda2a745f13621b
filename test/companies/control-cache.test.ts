import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { siiAuthority } from "../../src/countries/cl";
import { createDb } from "../../src/storage/db/client";
import { companyEntry, forgetInDirectory } from "../../src/storage/db/control-directory";
import { CONTROL_CACHE_MS, forgetCompanyControl } from "../../src/accounts/companies/control-cache";
import { companyContext, RetryableStepError, signerFor, type StepDeps } from "../../src/invoices/pipeline/steps";
import { call, expectError, newCompany, newOwner, nextRut } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";

/**
 * The per-isolate control cache: a company's settings, active certificate and CAF
 * presence are read once per CONTROL_CACHE_MS (then from the company's control directory object,
 * which holds what it read from D1 until told to forget); a write through the API drops them at once
 * in the isolate and the object; a change behind the API's back shows when the entry expires and the
 * object forgets; an expired certificate is never used. The pipeline's clock is the `now` of its deps, so expiry needs no waiting.
 */
const deps = (at: Date): StepDeps => {
  const db = createDb(env.DB);
  return { db, store: db, ordinal: 0, env, authority: siiAuthority(env), now: () => at };
};

async function activeCertificateId(base: string, key: string): Promise<string> {
  const list = await call("GET", `${base}/certificates`, { key });
  return list.body.data.find((c: { active: boolean }) => c.active).id as string;
}

describe("the control cache bounds staleness", () => {
  it("a certificate deleted behind the API's back still signs until the entry expires and the object forgets, then not", async () => {
    const issuer = await readyIssuer([33], 5);
    const certificateId = await activeCertificateId(issuer.base, issuer.owner.key);
    forgetCompanyControl(issuer.companyId);
    const t0 = new Date();
    expect((await signerFor(deps(t0), issuer.companyId)).certificateId).toBe(certificateId);
    await env.DB.prepare("UPDATE certificates SET status = 'DELETED', active = 0 WHERE id = ?").bind(certificateId).run();
    // The documented bound: an isolate that read it may sign with it for up to CONTROL_CACHE_MS.
    expect((await signerFor(deps(new Date(t0.getTime() + CONTROL_CACHE_MS - 1)), issuer.companyId)).certificateId).toBe(certificateId);
    // Expired in the isolate: the company's object still holds it (the bound when a forget is lost: its TTL).
    expect((await signerFor(deps(new Date(t0.getTime() + CONTROL_CACHE_MS + 1)), issuer.companyId)).certificateId).toBe(certificateId);
    await forgetInDirectory(env, [companyEntry(issuer.companyId)]);
    await expect(signerFor(deps(new Date(t0.getTime() + 2 * CONTROL_CACHE_MS + 2)), issuer.companyId)).rejects.toThrow(RetryableStepError);
  });

  it("settings changed behind the API's back show when the entry expires and the object forgets", async () => {
    const { companyId } = await readyIssuer([33], 5); // kept only while the company has an active certificate
    forgetCompanyControl(companyId);
    const t0 = new Date();
    expect((await companyContext(deps(t0), companyId)).timeZone).toBe("America/Santiago");
    await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
    expect((await companyContext(deps(new Date(t0.getTime() + 1)), companyId)).timeZone).toBe("America/Santiago");
    expect((await companyContext(deps(new Date(t0.getTime() + CONTROL_CACHE_MS + 1)), companyId)).timeZone).toBe("America/Santiago");
    await forgetInDirectory(env, [companyEntry(companyId)]);
    expect((await companyContext(deps(new Date(t0.getTime() + 2 * CONTROL_CACHE_MS + 2)), companyId)).timeZone).toBe("America/Punta_Arenas");
  });
});

describe("absence is never cached", () => {
  it("a company without an active certificate is read again: one activated behind the API's back signs at once", async () => {
    const issuer = await readyIssuer([33], 5);
    await env.DB.prepare("UPDATE certificates SET active = 0 WHERE company_id = ?").bind(issuer.companyId).run();
    forgetCompanyControl(issuer.companyId);
    const t0 = new Date();
    await expect(signerFor(deps(t0), issuer.companyId)).rejects.toThrow(RetryableStepError);
    await env.DB.prepare("UPDATE certificates SET active = 1 WHERE company_id = ?").bind(issuer.companyId).run();
    expect((await signerFor(deps(t0), issuer.companyId)).certificateId).toBe(await activeCertificateId(issuer.base, issuer.owner.key));
  });
});

describe("one entry per company for the POST and the pipeline", () => {
  it("a CAF missing from the cached entry is read again: a type activated behind the API's back issues at once", async () => {
    const issuer = await readyIssuer([33, 39], 5);
    await env.DB.prepare("UPDATE cafs SET active = 0 WHERE company_id = ? AND document_type = 39").bind(issuer.companyId).run();
    forgetCompanyControl(issuer.companyId);
    const first = await issue(issuer, invoiceBody(issuer.rut, "33")); // fills the entry: CAFs of 33 only
    expect(first.status).toBe(202);
    await env.DB.prepare("UPDATE cafs SET active = 1 WHERE company_id = ? AND document_type = 39").bind(issuer.companyId).run();
    const second = await issue(issuer, invoiceBody(issuer.rut, "39"));
    expect(second.status).toBe(202);
    // Both are numbered and end; nothing of theirs is left running when the file ends.
    for (const res of [first, second]) expect((await untilFinal(issuer, res.body.id)).status).toBe("ACCEPTED");
  });

  it("what the POST read is what the pipeline uses: a settings change behind the API's back shows in neither until the entry expires", async () => {
    const issuer = await readyIssuer([33], 5);
    const { companyId, rut } = issuer;
    forgetCompanyControl(companyId);
    const issued = await issue(issuer, invoiceBody(rut, "33"));
    expect(issued.status).toBe(202);
    // The POST filled the entry at its handler's own clock, no later than now.
    const expired = new Date(Date.now() + CONTROL_CACHE_MS + 1_000);
    await env.DB.prepare("UPDATE company_settings SET time_zone = 'America/Punta_Arenas' WHERE company_id = ?").bind(companyId).run();
    expect((await companyContext(deps(new Date(Date.now() + 1)), companyId)).timeZone).toBe("America/Santiago");
    await forgetInDirectory(env, [companyEntry(companyId)]);
    expect((await companyContext(deps(expired), companyId)).timeZone).toBe("America/Punta_Arenas");
    expect((await untilFinal(issuer, issued.body.id)).status).toBe("ACCEPTED");
  });
});

describe("writes through the API take effect at once in the isolate", () => {
  it("deleting the certificate: the next POST is refused and the pipeline does not sign", async () => {
    const issuer = await readyIssuer([33], 5);
    const certificateId = await activeCertificateId(issuer.base, issuer.owner.key);
    expect((await issue(issuer, invoiceBody(issuer.rut, "33"))).status).toBe(202); // fills the POST's entry
    expect((await signerFor(deps(new Date()), issuer.companyId)).certificateId).toBe(certificateId);
    expect((await call("DELETE", `${issuer.base}/certificates/${certificateId}`, { key: issuer.owner.key })).status).toBe(200);
    expectError(await issue(issuer, invoiceBody(issuer.rut, "33")), 422, "CERTIFICATE_REQUIRED");
    await expect(signerFor(deps(new Date()), issuer.companyId)).rejects.toThrow(RetryableStepError);
  });

  it("a new certificate is the one that signs at once", async () => {
    const issuer = await readyIssuer([33], 5);
    const first = await activeCertificateId(issuer.base, issuer.owner.key);
    expect((await signerFor(deps(new Date()), issuer.companyId)).certificateId).toBe(first);
    const cert = await makeFakeCertificate({ rut: "22222222-2", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 30 * 86_400_000) });
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "nueva.pfx"));
    form.append("password", "pw");
    const up = await call("POST", `${issuer.base}/certificates`, { key: issuer.owner.key, body: form });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect((await signerFor(deps(new Date()), issuer.companyId)).certificateId).toBe(up.body.id);
    // And back to the first one by activation.
    expect((await call("POST", `${issuer.base}/certificates/${first}/activate`, { key: issuer.owner.key })).status).toBe(200);
    expect((await signerFor(deps(new Date()), issuer.companyId)).certificateId).toBe(first);
  });

  it("settings changed through the API reach the pipeline at once", async () => {
    const { owner, companyId } = await readyIssuer([33], 5);
    expect((await companyContext(deps(new Date()), companyId)).timeZone).toBe("America/Santiago");
    const patched = await call("PATCH", `/api/companies/${companyId}/settings`, { key: owner.key, json: { time_zone: "America/Punta_Arenas" } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await companyContext(deps(new Date()), companyId)).timeZone).toBe("America/Punta_Arenas");
  });
});

describe("an expired certificate is never used from the cache", () => {
  it("the pipeline loads it again past its end and refuses it, within the entry's life", async () => {
    const owner = await newOwner();
    const companyId = await newCompany(owner, { tax_identification_document_number: nextRut() });
    const notAfter = new Date(Date.now() + 20_000);
    const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter });
    const form = new FormData();
    form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "corta.pfx"));
    form.append("password", "pw");
    expect((await call("POST", `/api/companies/${companyId}/certificates`, { key: owner.key, body: form })).status).toBe(201);
    const t0 = new Date();
    await signerFor(deps(t0), companyId);
    // Past the certificate's end, well within CONTROL_CACHE_MS of the read above.
    const after = new Date(Math.ceil(notAfter.getTime() / 1000) * 1000 + 1000);
    expect(after.getTime() - t0.getTime()).toBeLessThan(CONTROL_CACHE_MS);
    await expect(signerFor(deps(after), companyId)).rejects.toThrow(/expired/);
  });
});
