/**
 * POST /simulator/sii/reception/inject (simulator only): a supplier's signed EnvioDTE registered as
 * received by the SII, with a chosen reception time; hostile bodies get clear errors, never a 500.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { siiReceptionAuthority } from "../../src/countries/cl/sii/reception";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { AuthorityError, type ReceptionAuthority } from "../../src/countries/port";
import { asReadFromChileTime, envelope, fakeCredentials, ISSUER_RUT, signedDte, simulatorCaf, simulatorFetch, workerClient } from "./helpers";

const RECIPIENT = "77879240-0";
let cert: SigningCredentials;
let caf33: Caf;
let sii: ReceptionAuthority;

function inject(body: string | Uint8Array, query = ""): Promise<Response> {
  return simulatorFetch(new Request(`http://localhost/simulator/sii/reception/inject${query}`, { method: "POST", headers: { "Content-Type": "text/xml" }, body: body as BodyInit }));
}
const doc = (folio: number) => ({ companyRut: RECIPIENT, signer: cert, issuerRut: ISSUER_RUT, documentType: 33, folio });

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 100 });
  sii = siiReceptionAuthority(workerClient(), (m, r, f) => new AuthorityError(m, r, f));
});

describe("inject", () => {
  it("registers each DTE with the chosen SII reception time; the 8-day rule counts from it", async () => {
    const env_ = await envelope([await signedDte(caf33, 40, cert), await signedDte(caf33, 41, cert)], cert);
    const nineDaysAgo = new Date(Date.now() - 9 * 86_400_000).toISOString();
    const res = await inject(env_.xml, `?received_at=${encodeURIComponent(nineDaysAgo)}`);
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    expect(body.received_at).toBe(nineDaysAgo);
    expect(body.documents.map((d: any) => [d.document_type, d.folio, d.receiver_rut, d.registered, d.status])).toEqual([
      [33, 40, RECIPIENT, true, "DOK"],
      [33, 41, RECIPIENT, true, "DOK"],
    ]);
    expect(Date.parse((await sii.receptionTime(doc(40)))!)).toBe(asReadFromChileTime(Date.parse(nineDaysAgo)));
    expect((await sii.recordAction({ ...doc(40), action: "ACD" })).code).toBe(8);
    const listed = await sii.listReceived({ companyRut: RECIPIENT, signer: cert, since: new Date(Date.parse(nineDaysAgo) - 1000).toISOString() });
    expect(listed.documents.filter((d) => d.folio === 40 || d.folio === 41).map((d) => d.receivedAt)).toEqual([nineDaysAgo, nineDaysAgo]);
  });

  it("without a time it is received now and can be accepted; the same folio again is not registered twice", async () => {
    const env_ = await envelope([await signedDte(caf33, 42, cert)], cert);
    expect((await inject(env_.xml)).status).toBe(201);
    expect((await sii.recordAction({ ...doc(42), action: "ERM" })).code).toBe(0);
    const again = (await (await inject(env_.xml)).json()) as any;
    expect(again.documents[0]).toMatchObject({ folio: 42, registered: false, status: "RCH" });
  });

  it("hostile or wrong bodies: clear errors in the envelope, never a 500", async () => {
    const cases: [string | Uint8Array, string, number, RegExp][] = [
      ["not xml at all", "", 400, /not an EnvioDTE/],
      [`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><EnvioDTE>&e;</EnvioDTE>`, "", 400, /DOCTYPE|DTD|entit/i],
      ["", "", 400, /empty/],
      [new Uint8Array(2 * 1024 * 1024 + 1), "", 413, /larger than/],
      ["<x/>", "?received_at=yesterday", 400, /received_at/],
    ];
    for (const [body, query, status, message] of cases) {
      const res = await inject(body, query);
      expect(res.status).toBe(status);
      const err = (await res.json()) as any;
      expect(err.error.message).toMatch(message);
    }
  });

  it("a tampered DTE (amount changed after signing) is refused with the SII's reasons", async () => {
    const env_ = await envelope([await signedDte(caf33, 43, cert)], cert);
    const tampered = encodeLatin1(decodeLatin1(env_.xml).replace(/<MntTotal>(\d+)<\/MntTotal>/, (_m, n) => `<MntTotal>${Number(n) + 1}</MntTotal>`));
    const res = await inject(tampered);
    expect(res.status).toBe(400);
    const err = (await res.json()) as any;
    expect(err.error.code).toBe("VALIDATION_FAILED");
    expect(err.error.message).toBe("The SII would refuse this envelope (RFR: Rechazado por Error en Firma): Firma del envio: The digest of #SetDoc does not match its content in any of the namespace forms the SII accepts: this content is not the one that was signed");
    expect(await sii.receptionTime(doc(43))).toBeNull();
  });
});
