/** The pipeline port (siiTaxAuthority) over the real client and the simulator, through the Worker. */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { siiTaxAuthority } from "../../src/countries/cl/sii/authority";
import type { DocumentKey, EnvelopeVerdict, TaxAuthority } from "../../src/countries/port";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { envelope, fakeCredentials, ISSUER_RUT, scenario, signedDte, simulatorCaf, unsafeDte, workerClient } from "./helpers";

class FakeAuthorityError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly fiscalStatus?: string,
  ) {
    super(message);
  }
}

let cert: SigningCredentials;
let caf33: Caf;
let caf39: Caf;
let authority: TaxAuthority;

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 100 });
  caf39 = await simulatorCaf({ documentType: 39, from: 1, to: 100 });
  authority = siiTaxAuthority(workerClient(), (m, r, f) => new FakeAuthorityError(m, r, f));
});
beforeEach(async () => {
  await scenario(null);
});

const key = (d: SignedDte): DocumentKey => ({ invoiceId: d.id, documentType: d.documentType, folio: d.folio, issueDate: d.issueDate, total: d.total, receiverRut: d.receiverRut });

async function run(dtes: SignedDte[], opts: { senderRut?: string } = {}): Promise<Extract<EnvelopeVerdict, { final: true }>> {
  const env = await envelope(dtes, cert, opts);
  const { trackId } = await authority.upload({ kind: env.kind, xml: env.xml, companyRut: ISSUER_RUT, signer: cert, fileName: "e.xml" });
  for (let i = 0; i < 8; i++) {
    const v = await authority.poll({ kind: env.kind, trackId, companyRut: ISSUER_RUT, signer: cert, documents: dtes.map(key) });
    if (v.final) return v;
    expect(["REC", "SOK", "FOK"]).toContain(v.fiscalStatus);
  }
  throw new Error("never final");
}

const outcomes = (v: Extract<EnvelopeVerdict, { final: true }>) => Object.fromEntries([...v.documents].map(([id, d]) => [id, `${d.outcome}/${d.fiscalStatus}`]));

describe("siiTaxAuthority (EnvioDTE)", () => {
  it("all accepted", async () => {
    const v = await run([await signedDte(caf33, 1, cert), await signedDte(caf33, 2, cert)]);
    expect(v.fiscalStatus).toBe("EPR");
    expect(outcomes(v)).toEqual({ F1T33: "ACCEPTED/DOK", F2T33: "ACCEPTED/DOK" });
  });
  it("mixed: asks each document (DOK accepted, FAU after EPR rejected)", async () => {
    const outside = await simulatorCaf({ documentType: 33, from: 500, to: 510 });
    const v = await run([await signedDte(caf33, 3, cert), await unsafeDte(outside, 600, cert)]);
    expect(outcomes(v)).toEqual({ F3T33: "ACCEPTED/DOK", F600T33: "REJECTED/RCH" });
    // The rejection says why (the simulator's reason codes, as its result e-mail would).
    expect(v.documents.get("F600T33")!.message).toMatch(/^RCH: .*CAF-RANGO Folio 600 fuera del rango autorizado 500-510/);
  });
  it("objected by scenario: accepted with objections (RLV)", async () => {
    await scenario({ mode: "object", count: 1 });
    const v = await run([await signedDte(caf33, 4, cert)]);
    expect(outcomes(v)).toEqual({ F4T33: "ACCEPTED_WITH_OBJECTIONS/RLV" });
    expect(v.documents.get("F4T33")!.message).toMatch(/reparos/);
  });
  it("envelope refused (RCT): every document rejected with the envelope code", async () => {
    const v = await run([await signedDte(caf33, 5, cert), await signedDte(caf33, 6, cert)], { senderRut: "22222222-2" });
    expect(outcomes(v)).toEqual({ F5T33: "REJECTED/RCT", F6T33: "REJECTED/RCT" });
  });
  it("errors become the pipeline's error with retryable and the SII code", async () => {
    await scenario({ mode: "down", count: 1 });
    const env = await envelope([await signedDte(caf33, 7, cert)], cert);
    const e1 = await authority.upload({ kind: "EnvioDTE", xml: env.xml, companyRut: ISSUER_RUT, signer: cert, fileName: "e.xml" }).catch((e) => e);
    expect(e1).toBeInstanceOf(FakeAuthorityError);
    expect(e1).toMatchObject({ retryable: true, fiscalStatus: "503" });
    const e2 = await authority.upload({ kind: "EnvioDTE", xml: encodeLatin1("<EnvioDTE>"), companyRut: ISSUER_RUT, signer: cert, fileName: "e.xml" }).catch((e) => e);
    expect(e2).toMatchObject({ retryable: false, fiscalStatus: "7" });
    expect(e2.message).toMatch(/Esquema inválido/);
  });
});

describe("siiTaxAuthority (EnvioBOLETA)", () => {
  it("documents not listed in detalle_rep_rech are accepted; listed ones carry their reasons", async () => {
    const outside = await simulatorCaf({ documentType: 39, from: 500, to: 510 });
    const v = await run([await signedDte(caf39, 1, cert, "39"), await unsafeDte(outside, 700, cert, "39")]);
    expect(outcomes(v)).toEqual({ F1T39: "ACCEPTED/DOK", F700T39: "REJECTED/RCH" });
    expect(v.documents.get("F700T39")!.message).toMatch(/CAF-RANGO/);
  });
});
