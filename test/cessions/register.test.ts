/**
 * What the simulated register of cessions checks (src/countries/cl/simulator/rpetc-check.ts), on AEC files built
 * here from a document the simulated SII accepted and uploaded over the RPETC wire protocol: each
 * check refused with its state and reason (getEstEnvio), the document's claim at the SII, and the
 * cession rule at POST that a buyer's claim or receipt decides.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { buildAec, signAecAsGiven, type AecParams } from "../../src/countries/cl/cession";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { rpetcAuthority } from "../../src/countries/cl/cession/rpetc";
import { siiReceptionAuthority } from "../../src/countries/cl/sii/reception";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { AuthorityError, type CessionAuthority } from "../../src/countries/port";
import { call } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { afterChecks, checkNow, issuedAccepted, RECIPIENT } from "../reception/helpers";
import { fakeCredentials, workerClient } from "../sii/helpers";
import { cede, cedibleFactura, untilCessionFinal } from "./helpers";

let issuer: Issuer;
let signer: SigningCredentials;
let register: CessionAuthority;

const dteOf = async (doc: any) => new Uint8Array(await (await call("GET", `${issuer.base}/invoices/${doc.id}/xml`, { key: issuer.owner.key })).raw.arrayBuffer());
const local = () => new Date(Date.now() - 3 * 3_600_000 - 60_000).toISOString().slice(0, 19);

async function params(doc: any, over: Partial<AecParams> = {}): Promise<AecParams> {
  return {
    dte: await dteOf(doc),
    cedent: { rut: issuer.rut, name: "EMPRESA DE PRUEBA SPA", address: "Av. Siempre Viva 123", email: "cesiones@emisor.cl" },
    assignee: { rut: "76543210-3", name: "FACTOR DE EJEMPLO SPA", address: "Calle Falsa 456", email: "ops@factor.cl" },
    amount: doc.total, lastDueDate: "2049-12-31", timestamp: local(), authorized: { rut: "11111111-1", name: "PERSONA" }, signer, ...over,
  };
}

/** Uploads `xml` for `companyRut` and reads the register until its final state: [state, reason]. */
async function verdict(xml: Uint8Array, companyRut = issuer.rut): Promise<[string, string]> {
  const { trackId } = await register.upload({ xml, companyRut, signer, fileName: "aec.xml", notifyEmail: "a@b.cl" });
  for (let i = 0; i < 20; i++) {
    const v = await register.poll({ trackId, companyRut, signer });
    if (v.final) return [v.fiscalStatus, v.message];
  }
  throw new Error("no verdict");
}
const edit = (xml: Uint8Array, from: RegExp, to: string) => encodeLatin1(new TextDecoder("latin1").decode(xml).replace(from, to));

describe("the simulated register of cessions", () => {
  beforeAll(async () => {
    issuer = await readyIssuer([33]);
    signer = await fakeCredentials();
    register = rpetcAuthority(workerClient());
  });

  it("registers a valid cession and then refuses it again (the chain moved on), and an unknown company's upload (STATUS 6)", async () => {
    const doc = await issuedAccepted(issuer);
    const aec = await buildAec(await params(doc));
    expect(await verdict(aec.xml)).toEqual(["EOK", expect.stringMatching(/^EOK/)]);
    const [state, why] = await verdict(edit(aec.xml, /<TmstFirmaEnvio>/, "<TmstFirmaEnvio>") /* same cession, another upload */);
    expect(state).toBe("RCS");
    expect(why).toMatch(/El registro tiene 1 cesiones de este documento/);
    const e = await register.upload({ xml: aec.xml, companyRut: "96790240-3", signer, fileName: "aec.xml", notifyEmail: "a@b.cl" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthorityError);
    expect((e as AuthorityError).message).toMatch(/STATUS 6/);
  });

  it("refuses each broken rule with the register's state", async () => {
    const doc = await issuedAccepted(issuer);
    const good = await buildAec(await params(doc));
    const cases: [string, Uint8Array, string, RegExp][] = [
      ["not XML", new TextEncoder().encode("<AEC"), "RSC", /mal formado/],
      ["schema", edit(good.xml, /<Cesiones>/, "<Cesiones><Extra/>"), "RSC", /DTECedido/],
      ["the file's signature", edit(good.xml, /<MailContacto>[^<]*<\/MailContacto>/, "<MailContacto>otro@emisor.cl</MailContacto>"), "RFS", /Firma del AEC invalida/],
      ["signer not the RUTAutorizado", (await buildAec(await params(doc, { authorized: { rut: "22222222-2", name: "OTRA" } }))).xml, "RCS", /no es el RUTAutorizado 22222222-2/],
      ["amount above the total", (await signAecAsGiven(await params(doc, { amount: String(BigInt(doc.total) + 1n) }))).xml, "RCS", /MontoCesion mayor que el monto total/],
      ["last due date before the issue date", (await signAecAsGiven(await params(doc, { lastDueDate: "2020-01-01" }))).xml, "RCS", /UltimoVencimiento anterior/],
      ["a cession dated in the future", (await signAecAsGiven(await params(doc, { timestamp: "2049-01-01T10:00:00" }))).xml, "RCS", /TmstCesion posterior/],
    ];
    for (const [what, xml, state, why] of cases) {
      const [s, m] = await verdict(xml);
      expect(s, what).toBe(state);
      expect(m, what).toMatch(why);
    }
  });

  it("refuses a cedent that is not the issuer (RCS) and a carátula whose cedent is not the uploading company (RCR)", async () => {
    const doc = await issuedAccepted(issuer);
    const other = await readyIssuer([33]);
    await issuedAccepted(other);
    const foreign = await buildAec(await params(doc, { cedent: { rut: other.rut, name: "OTRA SPA", address: "Av. Siempre Viva 123", email: "a@otra.cl" } }));
    const [s1, m1] = await verdict(foreign.xml, other.rut);
    expect(s1).toBe("RCS");
    expect(m1).toMatch(/no es el emisor/);
    const [s2, m2] = await verdict((await buildAec(await params(doc))).xml, other.rut);
    expect(s2).toBe("RCR");
    expect(m2).toMatch(/no es la empresa que envia/);
  });

  it("refuses a claimed document (RDC); at POST the claim is CESSION_DOCUMENT_CLAIMED", async () => {
    const doc = await issuedAccepted(issuer);
    const reception = siiReceptionAuthority(workerClient(), (m, r, c) => new AuthorityError(m, r, c));
    expect((await reception.recordAction({ companyRut: RECIPIENT, signer, issuerRut: issuer.rut, documentType: 33, folio: doc.folio, action: "RCD" })).code).toBe(0);
    const [s, m] = await verdict((await buildAec(await params(doc))).xml);
    expect(s).toBe("RDC");
    expect(m).toMatch(/reclamo/);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    await checkNow(issuer, doc.id);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "CLAIMED", "claim");
    const res = await cede(issuer, doc.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("CESSION_DOCUMENT_CLAIMED");
  });

  it("a buyer's receipt (ERM) at the SII makes a factura cedible before its 8 days", async () => {
    const doc = await issuedAccepted(issuer);
    const reception = siiReceptionAuthority(workerClient(), (m, r, c) => new AuthorityError(m, r, c));
    expect((await reception.recordAction({ companyRut: RECIPIENT, signer, issuerRut: issuer.rut, documentType: 33, folio: doc.folio, action: "ERM" })).code).toBe(0);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
    await checkNow(issuer, doc.id);
    await afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "ACCEPTED", "receipt");
    const res = await cede(issuer, doc.id);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.receipt_basis).toBe("BUYER_RECEIPT");
    expect((await untilCessionFinal(issuer, res.body.id)).status).toBe("REGISTERED");
  });

  it("a cession registered through the product shows in the register's query to the issuer", async () => {
    const doc = await cedibleFactura(issuer);
    const res = await cede(issuer, doc.id);
    expect((await untilCessionFinal(issuer, res.body.id)).status).toBe("REGISTERED");
    const now = await register.current({ companyRut: issuer.rut, signer, issuerRut: issuer.rut, documentType: 33, folio: doc.folio });
    expect(now).toMatchObject({ holderTaxId: "76543210-3", amount: null });
  });
});
