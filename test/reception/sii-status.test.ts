/**
 * The `sii_status` check of received documents: after intake the issuance queue asks the simulated
 * SII (QueryEstDte over its SOAP wire protocol) about each document with the receiving company's
 * certificate. A document issued inside the simulator by another test company passes; one whose
 * data differ from the SII's register (the register holds the same folio with another total) fails,
 * and its verification with it; one the SII does not list stays NOT_CHECKED; a company without a
 * certificate, or a document that failed its cryptographic checks, is not asked at all.
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import { normalizeRut } from "../../src/countries/cl/documents/rut";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { intakeFile } from "../../src/reception/intake";
import { nextAskSeconds, SII_STATUS_WINDOW_MS } from "../../src/reception/sii-status";
import { call } from "../helpers/api";
import { readyIssuer } from "../helpers/issuer";
import { storeRows } from "../helpers/store";
import { envelope, fakeCredentials, ISSUER_RUT, signedDte, simulatorCaf } from "../sii/helpers";
import { getDoc, inject, issuedAccepted, receivedCopy, receiver, RECIPIENT, respond, until, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 500 });
});

const siiStatus = (doc: any) => doc.verification.checks.find((c: any) => c.name === "sii_status");
const WAITING = "Not asked yet: the SII's register is read once the document is stored.";

/** The document once its `sii_status` is no longer waiting for its first read (the queue consumer asked the SII). */
const afterAsk = (r: Receiver, id: string) =>
  until(async () => (await getDoc(r, id)).body, (doc) => siiStatus(doc)?.message !== WAITING, `sii_status of ${id}`);

/** Intake with a queue that records what it is sent instead of sending it. */
async function intakeRecording(r: Receiver, xml: Uint8Array) {
  const queued: any[] = [];
  const queue = { send: async (body: unknown) => void queued.push(body), sendBatch: async (b: { body: unknown }[]) => void queued.push(...b.map((x) => x.body)) } as unknown as Queue;
  const result = await intakeFile({ ...env, ISSUANCE_QUEUE: queue } as Env, { id: r.companyId, taxId: normalizeRut(RECIPIENT), livemode: false }, xml, { channel: "UPLOAD", message: null });
  return { queued, id: result.documents[0]!.id };
}

describe("sii_status", () => {
  it("a factura issued inside the simulator by another company passes once the queue asked the SII", async () => {
    const r = await receiver();
    const issuer = await readyIssuer([33]);
    const done = await issuedAccepted(issuer);
    const id = await receivedCopy(r, issuer, done.folio);
    const doc = await afterAsk(r, id);
    expect(siiStatus(doc)).toEqual({ name: "sii_status", result: "PASSED", message: null });
    expect(doc.verification).toMatchObject({ status: "VERIFIED", reception_status: 0 });
    expect(doc.verification.checks.map((c: any) => c.name)).toEqual(["envelope_signature", "dte_signature", "signer", "ted", "caf", "recipient_rut", "issuer_rut", "schema", "totals", "duplicate", "sii_status"]);
  });

  it("a document the SII registers with another total fails, with the SII's answer; its verification fails and it cannot be accepted", async () => {
    const r = await receiver();
    // The SII's register holds folio 301 with a total of 2 × 1000 + VAT (received an hour ago: processed by now); the document received says 3 × 1000 + VAT.
    const registered = await signedDte(caf33, 301, cert);
    await inject(await envelope([registered], cert), new Date(Date.now() - 3_600_000));
    const altered = await signedDte(caf33, 301, cert, "33", { items: [{ quantity: 3, unit_price: 1000, description: "Servicio de prueba" }] });
    expect(altered.total).not.toBe(registered.total);
    const res = await upload(r, (await envelope([altered], cert)).xml);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const taken = res.body.documents[0];
    expect(taken.verification).toMatchObject({ status: "VERIFIED", reception_status: 0 });
    expect(siiStatus(taken)).toEqual({ name: "sii_status", result: "NOT_CHECKED", message: WAITING });

    const doc = await afterAsk(r, taken.id);
    expect(siiStatus(doc).result, siiStatus(doc).message).toBe("FAILED");
    expect(siiStatus(doc).message).toContain(`total ${altered.total}`);
    expect(siiStatus(doc).message).toContain("DNK: Documento Recibido por el SII. Datos No Coinciden con los Registrados.");
    expect(siiStatus(doc).message).toMatch(/altered or forged/);
    // EstadoRecepDTE was sent in the RecepcionEnvio and stays; the verification is FAILED.
    expect(doc.verification).toMatchObject({ status: "FAILED", reception_status: 0 });
    const failed = await storeRows<{ payload: string }>(r.companyId, sql`SELECT payload FROM event_outbox WHERE type = 'received_document.verification_failed' AND json_extract(payload, '$.id') = ${taken.id}`);
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0]!.payload).verification.status).toBe("FAILED");
    const listed = async (v: string) => (await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&verification=${v}`, { key: r.owner.key })).body;
    expect((await listed("FAILED")).data.map((d: any) => d.id)).toEqual([taken.id]);
    expect((await listed("VERIFIED")).total).toBe(0);
    expect((await respond(r, taken.id, "ACD")).body.error.code).toBe("RECEPTION_ACTION_UNVERIFIED");
  });

  it("a document the SII does not list stays NOT_CHECKED, saying so and when it is asked again", async () => {
    const r = await receiver();
    const res = await upload(r, (await envelope([await signedDte(caf33, 302, cert)], cert)).xml);
    expect(res.status).toBe(201);
    // In test mode the simulated register learned of it at upload (test-register.ts): forgotten there, as by an SII its issuer never told.
    await env.DB.prepare("DELETE FROM sim_documents WHERE issuer_rut = ? AND document_type = 33 AND folio = 302").bind(ISSUER_RUT).run();
    const doc = await afterAsk(r, res.body.documents[0].id);
    expect(siiStatus(doc).result).toBe("NOT_CHECKED");
    expect(siiStatus(doc).message).toMatch(/^Not yet listed by the SII \(it answered FAU: Documento No Recibido por el SII\./);
    expect(siiStatus(doc).message).toMatch(/Asked 1 time\(s\), last at .*; asked again at .*, until /);
    expect(doc.verification.status).toBe("VERIFIED");
  });

  it("the asks back off from 5 minutes to the queue's 12 hours, within 48 hours", () => {
    expect([1, 2, 3, 8, 9, 30].map(nextAskSeconds)).toEqual([300, 600, 1200, 38_400, 43_200, 43_200]);
    expect(SII_STATUS_WINDOW_MS).toBe(48 * 3_600_000);
  });

  it("a company without a certificate is not asked about, and nothing is queued", async () => {
    const r = await receiver(RECIPIENT, false);
    const { queued, id } = await intakeRecording(r, (await envelope([await signedDte(caf33, 303, cert)], cert)).xml);
    expect(queued.filter((m) => m.type === "reception.sii_status")).toEqual([]);
    const doc = (await getDoc(r, id)).body;
    expect(siiStatus(doc)).toMatchObject({ result: "NOT_CHECKED", message: expect.stringMatching(/^Not asked: the company has no usable certificate to ask the SII with \(The company has no active signing certificate/) });
    expect(doc.verification.status).toBe("VERIFIED");
  });

  it("with a certificate one message per document is queued; a document that failed its cryptographic checks gets none", async () => {
    const r = await receiver();
    const good = await intakeRecording(r, (await envelope([await signedDte(caf33, 304, cert)], cert)).xml);
    // The upload's RecepcionEnvio is queued for mailing too.
    expect(good.queued.filter((m) => m.type === "reception.sii_status")).toEqual([{ v: 1, type: "reception.sii_status", company_id: r.companyId, received_id: good.id, attempt: 1, since: expect.any(String) }]);
    const tampered = encodeLatin1(decodeLatin1((await signedDte(caf33, 305, cert)).xml).replace(/<MntTotal>(\d+)<\/MntTotal>/, (_m, n) => `<MntTotal>${Number(n) + 1}</MntTotal>`));
    const bad = await intakeRecording(r, tampered);
    expect(bad.queued.filter((m) => m.type === "reception.sii_status")).toEqual([]);
    const doc = (await getDoc(r, bad.id)).body;
    expect(doc.verification.status).toBe("FAILED");
    expect(siiStatus(doc)).toEqual({ name: "sii_status", result: "NOT_CHECKED", message: "The document failed its cryptographic checks: the SII's register is not asked about it." });
  });
});
