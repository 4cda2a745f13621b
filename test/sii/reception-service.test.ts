/**
 * Reception's SII side: the client (siiReceptionAuthority) against the simulated
 * RegistroReclamoDteService over the real wire protocol, through the Worker. Documents reach the
 * simulated SII's register by a real DTEUpload of engine-signed DTEs (issuer 76086428-5 to
 * recipient 77879240-0).
 */
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { SiiClient } from "../../src/countries/cl/sii/client";
import { actionCode } from "../../src/countries/cl/simulator/reception";
import { chileLocalToIso, isoToChileLocal, reclamoRequest, reclamoUrl, siiReceptionAuthority, type ReceptionAction } from "../../src/countries/cl/sii/reception";
import { AuthorityError, type ReceptionAuthority } from "../../src/countries/port";
import { asReadFromChileTime, envelope, fakeCredentials, ISSUER_RUT, scenario, signedDte, simulatorCaf, workerClient } from "./helpers";

const RECIPIENT = "77879240-0";
let cert: SigningCredentials;
let caf33: Caf;
let sii: ReceptionAuthority;

/** Uploads folio `folio` (type 33, to RECIPIENT) through DTEUpload; returns the upload time bounds. */
async function registerFolio(folio: number): Promise<{ before: number; after: number }> {
  const dte = await signedDte(caf33, folio, cert);
  const env_ = await envelope([dte], cert);
  const before = Date.now();
  const r = await workerClient().uploadEnvio({ cert, companyRut: ISSUER_RUT, file: env_.xml, fileName: `f${folio}.xml` });
  expect(r.status).toBe(0);
  return { before, after: Date.now() };
}

const doc = (folio: number, type = 33) => ({ companyRut: RECIPIENT, signer: cert, issuerRut: ISSUER_RUT, documentType: type, folio });
const act = (folio: number, action: ReceptionAction, over: Partial<ReturnType<typeof doc>> = {}) => sii.recordAction({ ...doc(folio), ...over, action });

/** Moves the simulated SII reception time of a folio's envelope (the simulator's own state). */
async function receivedDaysAgo(folio: number, days: number): Promise<void> {
  const at = new Date(Date.now() - days * 86_400_000).toISOString();
  await env.DB.prepare("UPDATE sim_envios SET received_at = ? WHERE track_id IN (SELECT track_id FROM sim_documents WHERE issuer_rut = ? AND document_type = 33 AND folio = ?)").bind(at, ISSUER_RUT, folio).run();
}

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 100 });
  sii = siiReceptionAuthority(workerClient(), (m, r, f) => new AuthorityError(m, r, f));
});
beforeEach(async () => {
  await scenario(null);
});

describe("ingresarAceptacionReclamoDoc", () => {
  it("ACD then ERM combine; a repeat answers 7; a claim after them 11 / 13", async () => {
    await registerFolio(1);
    expect(await act(1, "ACD")).toEqual({ code: 0, message: "Acción Completada OK" });
    expect((await act(1, "ERM")).code).toBe(0);
    expect((await act(1, "ACD")).code).toBe(7);
    expect((await act(1, "RCD")).code).toBe(11);
    await registerFolio(2);
    expect((await act(2, "ERM")).code).toBe(0);
    expect((await act(2, "RFP")).code).toBe(13);
  });

  it("a claim excludes acceptance (5 after RCD, 6 after RFP/RFT), other claims 12 / 19", async () => {
    await registerFolio(3);
    expect((await act(3, "RCD")).code).toBe(0);
    expect((await act(3, "ACD")).code).toBe(5);
    expect((await act(3, "ERM")).code).toBe(5);
    expect((await act(3, "RFT")).code).toBe(12);
    await registerFolio(4);
    expect((await act(4, "RFP")).code).toBe(0);
    expect((await act(4, "ACD")).code).toBe(6);
    expect((await act(4, "RFT")).code).toBe(19);
    expect((await act(4, "RCD")).code).toBe(12);
  });

  it("8 calendar days from the SII reception time: day 7 accepted, past day 8 refused with 8", async () => {
    await registerFolio(5);
    await registerFolio(6);
    await receivedDaysAgo(5, 7.9);
    await receivedDaysAgo(6, 8.01);
    expect((await act(5, "ACD")).code).toBe(0);
    const late = await act(6, "ACD");
    expect(late.code).toBe(8);
    expect(late.message).toMatch(/8 días/);
  });

  it("refusals: unknown document 18, not the recipient 14, type 3, folio 2, RUT 1, action 4", async () => {
    await registerFolio(7);
    expect((await act(99, "ACD")).code).toBe(18);
    expect((await act(7, "ACD", { companyRut: "76086428-5" })).code).toBe(14);
    expect((await act(7, "ACD", { documentType: 39 })).code).toBe(3);
    expect((await act(7, "ACD", { documentType: 56 })).code).toBe(3);
    expect((await act(7, "XYZ" as ReceptionAction)).code).toBe(4);
    // Folio 0 and a bad issuer RUT go over the wire as written.
    const raw = siiReceptionAuthority(workerClient(), (m, r, f) => new AuthorityError(m, r, f));
    expect((await raw.recordAction({ ...doc(0), action: "ACD" })).code).toBe(2);
    // A wrong check digit never leaves the client; written by hand on the wire, the SII answers 1.
    await expect(raw.recordAction({ ...doc(7), issuerRut: "76086428-6", action: "ACD" })).rejects.toThrow(/check digit|dígito|verificador/i);
    const client = workerClient();
    const text = await client.soapWithToken({ url: reclamoUrl(client), body: reclamoRequest("ingresarAceptacionReclamoDoc", [["rutEmisor", "76086428"], ["dvEmisor", "6"], ["tipoDoc", "33"], ["folio", "7"], ["accionDoc", "ACD"]]), cert, companyRut: RECIPIENT, operation: "t" });
    expect(text).toContain("<codResp>1</codResp><descResp>Error en RUT</descResp>");
    expect(await sii.listEvents(doc(7))).toEqual([]);
  });

  it("the compatibility table as a function", () => {
    expect(actionCode("ACD", new Set())).toBe(0);
    expect(actionCode("RFT", new Set(["RFP"]))).toBe(19);
    expect(actionCode("RCD", new Set(["RFT"]))).toBe(12);
    expect(actionCode("ERM", new Set(["RFT"]))).toBe(6);
  });
});

describe("listarEventosHistDoc and consultarFechaRecepcionSii", () => {
  it("lists the recorded events with the responsible person and time", async () => {
    await registerFolio(8);
    const t0 = Date.now();
    await act(8, "ACD");
    await act(8, "ERM");
    const events = await sii.listEvents(doc(8));
    expect(events.map((e) => [e.action, e.description, e.responsibleRut])).toEqual([
      ["ACD", "Acepta Contenido del Documento", "11111111-1"],
      ["ERM", "Otorga Recibo de Mercaderías o Servicios", "11111111-1"],
    ]);
    for (const e of events) {
      expect(e.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
      expect(Date.parse(e.at)).toBeGreaterThanOrEqual(asReadFromChileTime(t0));
    }
  });

  it("reception time in Chile time with its offset; null when the SII has not received it", async () => {
    const { before, after } = await registerFolio(9);
    const at = await sii.receptionTime(doc(9));
    expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-0[34]:00$/);
    expect(Date.parse(at!)).toBeGreaterThanOrEqual(asReadFromChileTime(before));
    expect(Date.parse(at!)).toBeLessThanOrEqual(asReadFromChileTime(after));
    expect(await sii.receptionTime(doc(98))).toBeNull();
  });

  it("told to the document's issuer and recipient only: anyone else is answered as for a document the SII does not hold", async () => {
    await registerFolio(12);
    await act(12, "ACD");
    expect((await sii.listEvents({ ...doc(12), companyRut: ISSUER_RUT })).map((e) => e.action)).toEqual(["ACD"]);
    expect(await sii.receptionTime({ ...doc(12), companyRut: ISSUER_RUT })).not.toBeNull();
    expect(await sii.listEvents({ ...doc(12), companyRut: "96790240-3" })).toEqual([]);
    expect(await sii.receptionTime({ ...doc(12), companyRut: "96790240-3" })).toBeNull();
    // On the wire: code 18, as for a document never received.
    const client = workerClient();
    const text = await client.soapWithToken({ url: reclamoUrl(client), body: reclamoRequest("listarEventosHistDoc", [["rutEmisor", ISSUER_RUT.split("-")[0]!], ["dvEmisor", ISSUER_RUT.split("-")[1]!], ["tipoDoc", "33"], ["folio", "12"]]), cert, companyRut: "96790240-3", operation: "t" });
    expect(text).toContain("<codResp>18</codResp>");
  });

  it("Chile local time conversions keep the instant across summer and winter time", () => {
    expect(isoToChileLocal("2026-01-15T15:00:00Z")).toBe("15-01-2026 12:00:00");
    expect(chileLocalToIso("15-01-2026 12:00:00")).toBe("2026-01-15T12:00:00-03:00");
    expect(isoToChileLocal("2026-07-15T15:00:00Z")).toBe("15-07-2026 11:00:00");
    expect(chileLocalToIso("15-07-2026 11:00:00")).toBe("2026-07-15T11:00:00-04:00");
    expect(chileLocalToIso("2026-07-15")).toBeNull();
  });

  it("the hour Chile's clocks repeat (summer time ends) reads as its first pass: a deadline counted from it is never later than the SII's", () => {
    // 2027-04-04 00:00 summer time becomes 2027-04-03 23:00 winter time: 23:30 happens twice.
    expect(isoToChileLocal("2027-04-04T02:30:00Z")).toBe("03-04-2027 23:30:00");
    expect(isoToChileLocal("2027-04-04T03:30:00Z")).toBe("03-04-2027 23:30:00");
    expect(chileLocalToIso("03-04-2027 23:30:00")).toBe("2027-04-03T23:30:00-03:00");
    expect(asReadFromChileTime(Date.parse("2027-04-04T03:30:00Z"))).toBe(Date.parse("2027-04-04T02:30:00Z"));
    expect(asReadFromChileTime(Date.parse("2027-04-04T04:30:00.250Z"))).toBe(Date.parse("2027-04-04T04:30:00Z"));
  });
});

describe("listReceived", () => {
  it("simulator: the register holds every accepted DTE uploaded to the recipient", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    await registerFolio(10);
    const r = await sii.listReceived({ companyRut: RECIPIENT, signer: cert, since });
    expect(r.supported).toBe(true);
    const mine = r.documents.find((d) => d.folio === 10)!;
    expect(mine).toMatchObject({ issuerRut: ISSUER_RUT, documentType: 33, folio: 10, issueDate: "2026-11-20" });
    expect(mine.total).toMatch(/^\d+$/);
    const other = await sii.listReceived({ companyRut: ISSUER_RUT, signer: cert });
    expect(other.documents.find((d) => d.folio === 10)).toBeUndefined();
  });

  it("real SII: not supported (no official listing API), without any call", async () => {
    const calls: string[] = [];
    const real = siiReceptionAuthority(new SiiClient({ mode: "production", fetcher: async (req) => (calls.push(req.url), new Response("", { status: 500 })) }), (m, r, f) => new AuthorityError(m, r, f));
    expect(await real.listReceived({ companyRut: RECIPIENT, signer: cert })).toEqual({ supported: false, documents: [] });
    expect(calls).toEqual([]);
  });
});

describe("failures", () => {
  it("scenario down: a retryable AuthorityError for every call", async () => {
    await registerFolio(11);
    for (const failure of ["http503", "error500", "reset"]) {
      await scenario(null);
      await scenario({ mode: "down", failure });
      const e = await act(11, "ACD").catch((x) => x);
      expect(e).toBeInstanceOf(AuthorityError);
      expect(e.retryable).toBe(true);
    }
    const e2 = await sii.listEvents(doc(11)).catch((x) => x);
    expect(e2).toBeInstanceOf(AuthorityError);
    expect(e2.retryable).toBe(true);
    await scenario(null);
    expect((await act(11, "ACD")).code).toBe(0);
  });

  it("codResp -1 (SII internal error) is a retryable AuthorityError", async () => {
    const body = `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><r><return><codResp>-1</codResp><descResp>Error interno</descResp></return></r></S:Body></S:Envelope>`;
    const real = workerClient();
    const client = new SiiClient({ mode: "simulator", fetcher: async (req) => (new URL(req.url).pathname.includes("WSREGISTRORECLAMODTE") ? new Response(body, { status: 200 }) : real["fetcher"](req)) });
    const e = await siiReceptionAuthority(client, (m, r, f) => new AuthorityError(m, r, f)).recordAction({ ...doc(1), action: "ACD" }).catch((x) => x);
    expect(e).toBeInstanceOf(AuthorityError);
    expect(e.retryable).toBe(true);
    expect(e.fiscalStatus).toBe("-1");
  });

  it("without a token the simulated WS refuses (SOAP fault), never a 500 page", async () => {
    const res = await workerClient()["fetcher"](new Request("http://sii.simulator/simulator/sii/WSREGISTRORECLAMODTE/registroreclamodteservice", { method: "POST", body: "<notsoap/>" }));
    expect(res.status).toBe(500);
    expect(await res.text()).toMatch(/<faultstring>RegistroReclamoDteService: .*SOAP envelope/);
    const noToken = await workerClient()["fetcher"](new Request("http://sii.simulator/simulator/sii/reception/register?rut=77879240-0"));
    expect(noToken.status).toBe(401);
  });
});
