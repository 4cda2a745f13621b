/**
 * Test material for the SII client/simulator tests: FAKE certificates (test/helpers), simulator CAFs,
 * documents computed and signed by the engine, and envelopes. Nothing here is a real taxpayer's.
 */
import { exports } from "cloudflare:workers";
import { parseCaf, type Caf } from "../../src/countries/cl/documents/caf";
import { credentialsFromParts, type SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { buildDteXml, buildSignedDte, dteId, XML_DECL, type SignedDte } from "../../src/countries/cl/documents/dte";
import { stampTed } from "../../src/countries/cl/documents/ted";
import { encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { signXml } from "../../src/countries/cl/xml/xmldsig";
import { buildEnvioBoleta, buildEnvioDte, type SignedEnvelope } from "../../src/countries/cl/exchange/envelopes";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { issueSimulatorCaf, type IssueCafParams } from "../../src/countries/cl/simulator/caf";
import { SiiClient } from "../../src/countries/cl/sii/client";
import { makeFakeCertificate } from "../helpers/fake-certificates";
import { newCompany, newOwner, type Actor } from "../helpers/api";
import { STEP_MS } from "../../src/countries/cl/simulator/store";
import { chileLocalToIso, isoToChileLocal } from "../../src/countries/cl/sii/reception";
import { expect } from "vitest";

export const ISSUER_RUT = "76086428-5";
export const HOLDER_RUT = "11111111-1";
export const TIMESTAMP = "2026-11-20T10:30:00";

/** The RUTs the simulator tests name in scenarios: the issuer and the recipient of their documents. */
export const SIMULATOR_TEST_RUTS = [ISSUER_RUT, "77879240-0"];

let simulatorActor: Promise<Actor> | undefined;

/**
 * The test key these tests reach the simulator with (outside local development it answers only test
 * keys), of one client per test file whose test companies are SIMULATOR_TEST_RUTS: its scenarios are
 * that client's and may name those RUTs.
 */
export function simulatorTester(): Promise<Actor> {
  simulatorActor ??= (async () => {
    const owner = await newOwner("Simulator tests");
    for (const rut of SIMULATOR_TEST_RUTS) await newCompany(owner, { tax_identification_document_number: rut, legal_name: "EMPRESA DE PRUEBA SPA" });
    return owner;
  })();
  return simulatorActor;
}

/** The Worker's answer to a request to the simulator, sent with the simulator tests' test key. */
export async function simulatorFetch(req: Request): Promise<Response> {
  const keyed = new Request(req);
  keyed.headers.set("X-Api-Key", (await simulatorTester()).key);
  return exports.default.fetch(keyed);
}

/** Client against the real Worker entrypoint (full HTTP wire format, in-process), with the tests' test key. */
export function workerClient(opts: ConstructorParameters<typeof SiiClient>[0] = {}): SiiClient {
  return new SiiClient({ mode: "simulator", fetcher: simulatorFetch, ...opts });
}

export async function fakeCredentials(opts: { rut?: string | null; notBefore?: Date; notAfter?: Date } = {}): Promise<SigningCredentials> {
  const fake = await makeFakeCertificate({ rut: opts.rut === undefined ? HOLDER_RUT : opts.rut, bits: 1024, ...(opts.notBefore ? { notBefore: opts.notBefore } : {}), ...(opts.notAfter ? { notAfter: opts.notAfter } : {}) });
  return credentialsFromParts(fake.certDer, fake.keyPkcs8);
}

export async function simulatorCaf(p: Partial<IssueCafParams> & { documentType: number; from: number; to: number }, trust: { extraKeys?: Record<number, Uint8Array> } = {}): Promise<Caf> {
  const issued = await issueSimulatorCaf({ rut: ISSUER_RUT, legalName: "EMPRESA DE PRUEBA SPA", authorizedOn: "2026-11-01", ...p });
  return parseCaf(issued.xml, { mode: "simulator", ...trust });
}

const issuer = {
  legal_name: "EMPRESA DE PRUEBA SPA",
  document_type: "RUT",
  document_number: ISSUER_RUT,
  address: { country: "CL", region: "13", city: "Santiago", address: "Av. Siempre Viva 123" },
  tax_information: { activity: "Venta de software", activity_codes: [620200], resolution_date: "2026-01-15", resolution_number: "0" },
};
const recipient = {
  legal_name: "CLIENTE LIMITADA",
  document_number: "77879240-0",
  address: { country: "CL", city: "Santiago", address: "Calle 2" },
  tax_information: { activity: "Comercio" },
};

export function invoice(type: "33" | "39" = "33", over: Partial<InvoiceInput> = {}): InvoiceInput {
  return {
    invoice_type: type,
    invoice_date: "2026-11-20 10:30:00",
    issuer,
    ...(type === "33" ? { recipient } : {}),
    items: [{ quantity: 2, unit_price: 1000, description: "Servicio de prueba" }],
    ...over,
  };
}

export async function signedDte(caf: Caf, folio: number, signer: SigningCredentials, type: "33" | "39" = "33", over: Partial<InvoiceInput> = {}): Promise<SignedDte> {
  return buildSignedDte({ document: computeDocument(invoice(type, over)), folio, caf, signer, timestamp: TIMESTAMP });
}

/**
 * EnvioDTE / EnvioBOLETA built by the engine. With `senderRut` other than the holder the engine's own
 * RutEnvia check is bypassed (signer without RUT; same key and certificate) so the SII can refuse it.
 */
export function envelope(dtes: SignedDte[], signer: SigningCredentials, over: { senderRut?: string; timestamp?: string; resolution?: { date: string; number: number }; setId?: string; receiverRut?: string } = {}): Promise<SignedEnvelope> {
  const s = over.senderRut && over.senderRut !== signer.rut ? { ...signer, rut: null } : signer;
  const params = { dtes, issuerRut: ISSUER_RUT, senderRut: over.senderRut ?? HOLDER_RUT, resolution: over.resolution ?? { date: "2026-01-15", number: 0 }, timestamp: over.timestamp ?? TIMESTAMP, signer: s, ...(over.setId ? { setId: over.setId } : {}), ...(over.receiverRut ? { receiverRut: over.receiverRut } : {}) };
  return dtes[0]!.envelope === "EnvioBOLETA" ? buildEnvioBoleta(params) : buildEnvioDte(params);
}

export async function scenario(body: unknown): Promise<Response> {
  return simulatorFetch(new Request("http://localhost/simulator/sii/scenario", { method: body === null ? "DELETE" : "POST", headers: { "Content-Type": "application/json" }, body: body === null ? null : JSON.stringify(body) }));
}

/**
 * A DTE stamped and signed without the engine's CAF checks (to build what the SII must refuse);
 * `edit` changes the document's XML before it is signed.
 */
export async function unsafeDte(caf: Caf, folio: number, signer: SigningCredentials, type: "33" | "39" = "33", edit: (xml: string) => string = (x) => x): Promise<SignedDte> {
  const d = computeDocument(invoice(type));
  const t = Number(type);
  const total = String(d.totals.total);
  const ted = await stampTed({ issuerRut: ISSUER_RUT, documentType: t, folio, issueDate: d.issueDate, receiverRut: d.receiver.rut, receiverName: d.receiver.legalName, total, firstItemName: d.lines[0]!.name, caf, timestamp: TIMESTAMP });
  const id = dteId(t, folio);
  const element = await signXml(edit(buildDteXml(d, folio, ted, TIMESTAMP)), id, signer);
  const xmlString = XML_DECL + element + "\n";
  return { id, documentType: t, folio, issuerRut: ISSUER_RUT, receiverRut: d.receiver.rut, issueDate: d.issueDate, total, element, xmlString, xml: encodeLatin1(xmlString), ted, envelope: t === 39 ? "EnvioBOLETA" : "EnvioDTE" };
}

/**
 * Uploads an envelope through `upload`, then polls QueryEstUp until a final state (six polls at
 * most): the upload's answer, the states seen, the last answer, and the time from the upload's
 * start to the last poll (what expectStates needs).
 */
export async function uploadAndPoll<U extends { trackId: string }>(client: SiiClient, cert: SigningCredentials, upload: () => Promise<U>) {
  const since = Date.now();
  const up = await upload();
  const seen: string[] = [];
  let last!: Awaited<ReturnType<SiiClient["queryEstUp"]>>;
  for (let i = 0; i < 6; i++) {
    last = await client.queryEstUp({ cert, companyRut: ISSUER_RUT, trackId: up.trackId });
    seen.push(last.estado);
    if (!["REC", "SOK", "CRT", "FOK", "PRD", "PDR"].includes(last.estado)) break;
  }
  return { up, trackId: up.trackId, seen, last, elapsedMs: Date.now() - since };
}

/**
 * The states an envelope's status polls showed, against the simulator's whole sequence for its
 * outcome. Each poll advances one step, and time one step every STEP_MS anyway: polls that all came
 * within STEP_MS of the upload show every step in order; a slower run (a stalled machine) may skip or
 * repeat steps, never reorder them, and still ends on the last.
 */
export function expectStates(r: { seen: string[]; elapsedMs: number }, steps: string[], label?: string) {
  if (r.elapsedMs < STEP_MS) return expect(r.seen, label).toEqual(steps);
  const at = r.seen.map((x) => steps.indexOf(x));
  expect(at.every((i, k) => i >= 0 && (k === 0 || i >= at[k - 1]!)), `${label ?? ""} ${JSON.stringify(r.seen)} within ${JSON.stringify(steps)}`).toBe(true);
  expect(r.seen.at(-1), label).toBe(steps.at(-1));
}

/**
 * The instant `ms` as we read it back from the SII's Chile wall-clock time (whole seconds, no offset
 * on the wire): the same second, except in the hour Chile's clocks repeat each April, whose second
 * pass reads as its first (an hour early).
 */
export function asReadFromChileTime(ms: number): number {
  return Date.parse(chileLocalToIso(isoToChileLocal(new Date(ms).toISOString()))!);
}
