/**
 * The register's answers as the Chilean RPETC client reads them (src/countries/cl/cession/rpetc.ts):
 * the seed and token come from the simulated SII, the upload and status answers from a hostile or
 * broken register. Each is a clear AuthorityError (retryable when a later try may succeed), an
 * unknown state is no verdict, and nothing is read as a registration that is not one.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AuthorityError, type CessionAuthority } from "../../src/countries/port";
import { rpetcAuthority } from "../../src/countries/cl/cession/rpetc";
import { buildRespuesta, soapResponse } from "../../src/countries/cl/sii/wire";
import { buildRecepcionAec } from "../../src/countries/cl/cession/rpetc-wire";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { fakeCredentials, ISSUER_RUT, simulatorFetch, workerClient } from "../sii/helpers";

let answer: () => Response;
let register: CessionAuthority;
let signer: SigningCredentials;

const xmlAnswer = (body: string, status = 200) => () => new Response(body, { status, headers: { "Content-Type": "text/xml" } });
const estEnvio = (estado: string, hdr = "0") => xmlAnswer(soapResponse("getEstEnvio", buildRespuesta([["ESTADO", hdr], ["GLOSA", "OK"]], [["TRACKID", "7"], ["ESTADO_ENVIO", estado], ["DESC_ESTADO", "x"]])));

async function refusal(p: Promise<unknown>): Promise<AuthorityError> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(AuthorityError);
  return e as AuthorityError;
}

const up = () => register.upload({ xml: new TextEncoder().encode("<AEC/>"), companyRut: ISSUER_RUT, signer, fileName: "aec.xml", notifyEmail: "a@b.cl" });
const poll = () => register.poll({ trackId: "7", companyRut: ISSUER_RUT, signer });
const current = () => register.current({ companyRut: ISSUER_RUT, signer, issuerRut: ISSUER_RUT, documentType: 33, folio: 1 });

describe("the register's answers", () => {
  beforeAll(async () => {
    signer = await fakeCredentials();
    const client = workerClient({
      fetcher: async (req) => (/RTCAnotEnvio|wsRPETCConsulta/.test(new URL(req.url).pathname) ? answer() : simulatorFetch(req)),
    });
    register = rpetcAuthority(client);
  });

  it("an upload: STATUS 0 gives the track id without its zeros; refusals say why and are final", async () => {
    answer = xmlAnswer(buildRecepcionAec({ status: 0, trackId: "0000038936" }));
    expect(await up()).toEqual({ trackId: "38936" });
    answer = xmlAnswer(buildRecepcionAec({ status: 6 }));
    const six = await refusal(up());
    expect(six.retryable).toBe(false);
    expect(six.message).toMatch(/STATUS 6: The company is not an electronic document issuer/);
    answer = xmlAnswer(buildRecepcionAec({ status: 1 }));
    expect((await refusal(up())).retryable).toBe(false);
  });

  it("an upload answered with an error page, a broken or foreign XML, or STATUS 0 without a track id: retried, never a registration", async () => {
    for (const a of [xmlAnswer("Error 500: internal"), xmlAnswer("<html><title>Error 500</title></html>"), xmlAnswer("<RECEPCIONAEC><STATUS>0</STATUS></RECEPCIONAEC>"), xmlAnswer("<RECEPCIONDTE><STATUS>0</STATUS><TRACKID>1</TRACKID></RECEPCIONDTE>"), xmlAnswer("<RECEPCIONAEC><STATUS>0"), xmlAnswer(buildRecepcionAec({ status: 0, trackId: "12a" })), xmlAnswer("", 503)]) {
      answer = a;
      expect((await refusal(up())).retryable).toBe(true);
    }
  });

  it("an XML bomb in the answer is refused, not expanded", async () => {
    answer = xmlAnswer(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><RECEPCIONAEC><STATUS>0</STATUS><TRACKID>&b;</TRACKID></RECEPCIONAEC>`);
    expect((await refusal(up())).retryable).toBe(true);
  });

  it("a status: EOK registers, a rejection is final, an unknown state and a broken answer are no verdict", async () => {
    answer = estEnvio("EOK");
    expect(await poll()).toMatchObject({ final: true, registered: true, fiscalStatus: "EOK" });
    answer = estEnvio("RCS");
    expect(await poll()).toMatchObject({ final: true, registered: false, fiscalStatus: "RCS" });
    answer = estEnvio("ZZZ");
    expect(await poll()).toMatchObject({ final: false, fiscalStatus: "ZZZ" });
    answer = estEnvio("EOK", "9");
    expect((await refusal(poll())).retryable).toBe(true);
    answer = xmlAnswer(soapResponse("getEstEnvio", "<nada/>"));
    expect((await refusal(poll())).retryable).toBe(true);
  });

  it("a document's cession: not ceded is null; a holder that is not a RUT is an error, not a holder", async () => {
    answer = xmlAnswer(soapResponse("getEstCesionRelac", buildRespuesta([["ESTADO", "2"], ["GLOSA", "no"]])));
    expect(await current()).toBeNull();
    answer = xmlAnswer(soapResponse("getEstCesionRelac", buildRespuesta([["ESTADO", "0"]], [["RUT_TENEDOR", "<b>76543210-3</b>"], ["FECHA_ULT_ANOT", "2026-12-01 10:00:00"]])));
    expect((await refusal(current())).retryable).toBe(true);
    answer = xmlAnswer(soapResponse("getEstCesionRelac", buildRespuesta([["ESTADO", "0"]], [["RUT_TENEDOR", "76543210-3"], ["FECHA_ULT_ANOT", "2026-12-01 10:00:00"]])));
    expect(await current()).toMatchObject({ holderTaxId: "76543210-3", annotatedAt: "2026-12-01T10:00:00-03:00", amount: null });
  });
});
