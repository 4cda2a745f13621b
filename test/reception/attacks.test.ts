/**
 * Hostile received files on every channel of suppliers' documents (upload, e-mail, the SII's
 * register): a genuine signed DTE whose file hides a forged copy of it (attack-files.ts) is either
 * refused with a clear error or stored as the genuine DTE only: the document, the list, the XML
 * download and the PDF show the genuine issuer and totals, nothing of the forged copy, the checks say
 * what verified, and the downloaded XML taken in again verifies the same (attack-checks.ts).
 */
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { call } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { fakeCredentials, signedDte, simulatorCaf, simulatorFetch } from "../sii/helpers";
import { checksOf, expectGenuine, expectNothingForged, expectRefusedUpload, listed } from "./attack-checks";
import { HIDINGS, hostileDte, hostileEnvelope, type Hiding } from "./attack-files";
import { cronRun, emailMessage, receiver, RECIPIENT, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
/** Receivers without a certificate (the register is not polled for them); `again` takes in the downloaded XMLs. */
let r: Receiver;
let again: Receiver;

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 500 });
  r = await receiver(RECIPIENT, false);
  again = await receiver(RECIPIENT, false);
});

/** Hidings that leave the genuine DTE's signature, stamp and CAF as signed (the forged copy is outside the DTE's Signature). */
const outsideSignature = (how: Hiding) => how !== "object" && how !== "keyinfo";

/** What verified of a DTE whose forged copy lies outside its signature, in an envelope signed anew. */
function expectVerified(doc: any, how: Hiding, inEnvelope = true): void {
  if (!outsideSignature(how)) return;
  expect(checksOf(doc)).toMatchObject({ dte_signature: "PASSED", ted: "PASSED", caf: "PASSED", issuer_rut: "PASSED", recipient_rut: "PASSED", ...(inEnvelope ? { envelope_signature: "PASSED" } : {}) });
}

const folios = { upload: 100, email: 200, sii: 300 };

describe("upload", () => {
  for (const [i, how] of HIDINGS.entries()) {
    it(`an EnvioDTE hiding a forged DTE (${how}): refused, or the genuine DTE only`, async () => {
      const dte = await signedDte(caf33, folios.upload + i, cert);
      const res = await upload(r, await hostileEnvelope(dte, how, cert));
      if (res.status !== 201) return expectRefusedUpload(res, r, dte.folio);
      expect(res.body.documents, JSON.stringify(res.body)).toHaveLength(1);
      expectVerified(await expectGenuine(r, res.body.documents[0].id, dte, again), how);
    });
  }

  it("a DTE file whose processing instruction holds a forged DTE and opens a comment swallowing the genuine DTE's start: the genuine DTE only", async () => {
    const dte = await signedDte(caf33, folios.upload + 50, cert);
    const res = await upload(r, hostileDte(dte, "pi-swallow"), "dte.xml");
    if (res.status !== 201) return expectRefusedUpload(res, r, dte.folio);
    expect(res.body.documents, JSON.stringify(res.body)).toHaveLength(1);
    expectVerified(await expectGenuine(r, res.body.documents[0].id, dte, again), "pi-swallow", false);
  });

  it("a DTE file with a comment hiding a forged DTE's start in a CDATA section swallowing the genuine DTE's start: the genuine DTE only", async () => {
    const dte = await signedDte(caf33, folios.upload + 51, cert);
    const res = await upload(r, hostileDte(dte, "comment-swallow"), "dte.xml");
    if (res.status !== 201) return expectRefusedUpload(res, r, dte.folio);
    expectVerified(await expectGenuine(r, res.body.documents[0].id, dte, again), "comment-swallow", false);
  });
});

// ---------------------------------------------------------------------------------------------

let address: string;
const b64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join("")).replace(/.{76}/g, "$&\r\n");

function mime(bytes: Uint8Array): string {
  return [
    "From: Proveedor <facturas@proveedor.cl>", `To: ${address}`, "Subject: Envio DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="XYZ"', "",
    "--XYZ", 'Content-Type: application/xml; name="envio.xml"', 'Content-Disposition: attachment; filename="envio.xml"', "Content-Transfer-Encoding: base64", "", b64(bytes), "",
    "--XYZ--", "",
  ].join("\r\n");
}

/** The company's last inbound message (the refused ones are kept in D1, the rest in its stores). */
async function lastMessage(): Promise<{ outcome: string; detail: string | null; documents: number }> {
  const q = "SELECT outcome, detail, documents FROM inbound_messages WHERE recipient = ? ORDER BY created_at DESC, id DESC LIMIT 1";
  const [stored] = await storeRows<{ outcome: string; detail: string | null; documents: number; created_at: string }>(r.companyId, sql`SELECT outcome, detail, documents, created_at FROM inbound_messages WHERE recipient = ${address} ORDER BY created_at DESC, id DESC LIMIT 1`);
  const d1 = await env.DB.prepare(q.replace("outcome,", "outcome, created_at,")).bind(address).first<{ outcome: string; detail: string | null; documents: number; created_at: string }>();
  const last = [stored, d1].filter((m) => m).sort((a, b) => b!.created_at.localeCompare(a!.created_at))[0];
  expect(last).toBeDefined();
  return last!;
}

describe("e-mail", () => {
  beforeAll(async () => {
    address = (await call("GET", `/api/companies/${r.companyId}/settings`, { key: r.owner.key })).body.reception_email;
  });

  for (const [i, how] of HIDINGS.entries()) {
    it(`an EnvioDTE attached hiding a forged DTE (${how}): refused, or the genuine DTE only`, async () => {
      const dte = await signedDte(caf33, folios.email + i, cert);
      await worker.email!(emailMessage(mime(await hostileEnvelope(dte, how, cert)), address), env);
      const message = await lastMessage();
      const docs = await listed(r, dte.folio);
      if (docs.length === 0) {
        expect(message.outcome).toBe("NO_DTE");
        expect(message.detail).toMatch(/.{10,}/);
        expectNothingForged(message.detail!, "the message's detail");
        return;
      }
      expect(message).toMatchObject({ outcome: "STORED", documents: 1 });
      expect(docs).toHaveLength(1);
      expectVerified(await expectGenuine(r, docs[0].id, dte, again), how);
    });
  }
});

// ---------------------------------------------------------------------------------------------

/** The register is polled for `sii` (it has a certificate); its downloaded XMLs are taken in again by `siiAgain`. */
let sii: Receiver;
let siiAgain: Receiver;
const injected: { how: Hiding; dte: SignedDte; refusal: string | null }[] = [];

function inject(bytes: Uint8Array): Promise<Response> {
  return simulatorFetch(new Request("http://localhost/simulator/sii/reception/inject", { method: "POST", headers: { "Content-Type": "text/xml" }, body: bytes as BodyInit }));
}

describe("the SII's register", () => {
  beforeAll(async () => {
    sii = await receiver();
    siiAgain = await receiver(RECIPIENT, false);
    for (const [i, how] of HIDINGS.entries()) {
      const dte = await signedDte(caf33, folios.sii + i, cert);
      const res = await inject(await hostileEnvelope(dte, how, cert));
      injected.push({ how, dte, refusal: res.status === 201 ? null : `${res.status} ${((await res.json()) as any).error?.message}` });
    }
    await env.DB.prepare("UPDATE reception_addresses SET polled_at = NULL WHERE company_id = ?").bind(sii.companyId).run();
    await cronRun();
  }, 60_000);

  for (const how of HIDINGS) {
    it(`an EnvioDTE in the register hiding a forged DTE (${how}): refused, or the genuine DTE only`, async () => {
      const { dte, refusal } = injected.find((x) => x.how === how)!;
      const docs = await listed(sii, dte.folio);
      if (refusal) {
        // The simulated SII refused the envelope (as DTEUpload would): it never reaches the register.
        expect(refusal).toMatch(/^400 The (SII would refuse|body is not an EnvioDTE)/);
        expectNothingForged(refusal, "the refusal");
        expect(docs).toEqual([]);
        return;
      }
      expect(docs).toHaveLength(1);
      expectNothingForged(JSON.stringify(docs), "the list");
      if (docs[0].xml_status !== "RECEIVED") {
        // The register's XML was refused at intake: the document is listed by the SII only, with no XML to serve.
        const xml = await call("POST", `/api/reception/invoices/${docs[0].id}/download/xml?company_id=${sii.companyId}`, { key: sii.owner.key });
        expect(xml.status).toBe(404);
        return;
      }
      expectVerified(await expectGenuine(sii, docs[0].id, dte, siiAgain), how, false);
    });
  }
});
