/** Reception test material: a receiving company (RUT 77879240-0, the sample recipient) and suppliers' envelopes. */
import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import worker from "../../src/index";
import { normalizeRut } from "../../src/countries/cl/documents/rut";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import type { SignedEnvelope } from "../../src/countries/cl/exchange/envelopes";
import { ordinalOfId, partitionsOf, storeFor, storeName } from "../../src/storage/db/document-store";
import type { DocumentStore } from "../../src/operations/objects/document-store";
import { call, newCompany, newOwner, type Actor } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { fakeCredentials, simulatorCaf, simulatorFetch } from "../sii/helpers";
import { invoiceBody, issue, untilFinal, type Issuer } from "../helpers/issuer";

export const RECIPIENT = "77879240-0";

export interface Receiver { owner: Actor; companyId: string }

export async function receiver(rut = RECIPIENT, withCertificate = true): Promise<Receiver> {
  const owner = await newOwner("Receiver");
  const companyId = await newCompany(owner, { tax_identification_document_number: rut, legal_name: "CLIENTE LIMITADA" });
  if (withCertificate) await addCertificate({ owner, companyId });
  return { owner, companyId };
}

/** Uploads a test signing certificate to the receiver's company. */
export async function addCertificate(r: Receiver): Promise<void> {
  const cert = await makeFakeCertificate({ rut: "22222222-2", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
  const form = new FormData();
  form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "firma.pfx"));
  form.append("password", "pw");
  const up = await call("POST", `/api/companies/${r.companyId}/certificates`, { key: r.owner.key, body: form });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
}

export function upload(r: Receiver, xml: Uint8Array | string, name = "envio.xml") {
  const form = new FormData();
  form.append("file", new File([xml as BlobPart], name, { type: "text/xml" }));
  return call("POST", `/api/reception/invoices/upload?company_id=${r.companyId}`, { key: r.owner.key, body: form });
}

/** Registers `e` at the simulated SII; `withholdXml`: the register will not hand out its XML (like the real SII). */
export async function inject(e: SignedEnvelope, receivedAt?: Date, withholdXml = false): Promise<void> {
  const params = new URLSearchParams({ ...(receivedAt ? { received_at: receivedAt.toISOString() } : {}), ...(withholdXml ? { withhold_xml: "true" } : {}) });
  const q = params.size ? `?${params}` : "";
  const res = await simulatorFetch(new Request(`http://localhost/simulator/sii/reception/inject${q}`, { method: "POST", headers: { "Content-Type": "text/xml" }, body: e.xml as BodyInit }));
  expect(res.status, await res.clone().text()).toBe(201);
}

export const respond = (r: Receiver, id: string, action: string, reason?: string) =>
  call("POST", `/api/reception/invoices/${id}/send_response?company_id=${r.companyId}`, { key: r.owner.key, json: { action, ...(reason ? { reason } : {}) } });
export const getDoc = (r: Receiver, id: string) => call("GET", `/api/reception/invoices/${id}?company_id=${r.companyId}`, { key: r.owner.key });

/** What most reception tests start from: a signer, a simulator CAF for facturas 1–500, a receiving company. */
export async function receptionFixture(): Promise<{ cert: SigningCredentials; caf33: Caf; r: Receiver }> {
  return { cert: await fakeCredentials(), caf33: await simulatorCaf({ documentType: 33, from: 1, to: 500 }), r: await receiver() };
}

/** The stub of a company's store of partition `ordinal`. */
export function storeStub(companyId: string, ordinal: number): DurableObjectStub<DocumentStore> {
  return env.DOCUMENT_STORE.get(env.DOCUMENT_STORE.idFromName(storeName(companyId, ordinal))) as DurableObjectStub<DocumentStore>;
}

/** When a store's alarm is set (epoch ms), or null. */
export const alarmAt = (companyId: string, ordinal: number) =>
  runInDurableObject(storeStub(companyId, ordinal), (_i: DocumentStore, state: DurableObjectState) => state.storage.getAlarm());

/**
 * Runs the alarm of each of the company's stores whose alarm is due (the deadline job is a task of
 * it); returns how many alarms ran. A store whose alarm is due again at once (its events to announce)
 * runs again, a few times at most.
 */
export async function runDueAlarms(companyId: string): Promise<number> {
  let ran = 0;
  for (const p of await partitionsOf(env, companyId)) {
    for (let i = 0; i < 5; i++) {
      const at = await alarmAt(companyId, p.ordinal);
      if (at === null || at > Date.now()) break;
      if (await runDurableObjectAlarm(storeStub(companyId, p.ordinal))) ran++;
    }
  }
  return ran;
}

/**
 * Waits until `read` gives what `ok` accepts, running the company's due store alarms meanwhile (a due
 * alarm also fires by itself; this does not wait for it); fails after 5 seconds with `what`.
 */
export async function afterAlarms<T>(companyId: string, read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 50; i++) {
    await runDueAlarms(companyId);
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: still ${JSON.stringify(last)}`);
}

/** Waits until `read` gives what `ok` accepts (work finishing after a response: waitUntil, a queue consumer); fails after 15 seconds with `what`. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${what}: still ${JSON.stringify(await read())}`);
}

/** A delivery status notification (RFC 3464) reporting `action` for `recipient` of the message `messageId` we sent, as a receiving server sends it back. */
export function bounceMail(o: { to: string; messageId: string; reference?: string; action?: string; status?: string; recipient?: string; original?: "message/rfc822" | "text/rfc822-headers" }): string {
  const recipient = o.recipient ?? "dte@losandes.example";
  return [
    "From: Mail Delivery System <MAILER-DAEMON@mx.losandes.example>",
    `To: ${o.to}`,
    "Subject: Undelivered Mail Returned to Sender",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-b"',
    "",
    "--dsn-b",
    "Content-Type: text/plain",
    "",
    "The mail system could not deliver your message.",
    "",
    "--dsn-b",
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.losandes.example",
    "",
    `Final-Recipient: rfc822; ${recipient}`,
    `Action: ${o.action ?? "failed"}`,
    `Status: ${o.status ?? "5.1.1"}`,
    `Diagnostic-Code: smtp; 550 5.1.1 <${recipient}>:`,
    "  Recipient address rejected: User unknown",
    "",
    "--dsn-b",
    `Content-Type: ${o.original ?? "message/rfc822"}`,
    "",
    `From: someone@dte.localhost`,
    `To: ${recipient}`,
    "Subject: Respuesta DTE",
    `Message-ID: <${o.messageId}>`,
    ...(o.reference ? [`X-DTE-Reference: ${o.reference}`] : []),
    "",
    ...(o.original === "text/rfc822-headers" ? [] : ["(the original message)", ""]),
    "--dsn-b--",
    "",
  ].join("\r\n");
}

/** The message Email Routing hands the Worker. */
export function emailMessage(raw: string | Uint8Array, to: string, from = "facturas@proveedor.cl"): ForwardableEmailMessage {
  const bytes = typeof raw === "string" ? new TextEncoder().encode(raw) : raw;
  return {
    from, to, rawSize: bytes.length, headers: new Headers(),
    raw: new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes); c.close(); } }),
    setReject() {}, forward: async () => ({}), reply: async () => ({}),
  } as unknown as ForwardableEmailMessage;
}

// ---------------------------------------------------------------------------------------------
// The buyer's answer to an issued factura (test/reception/buyer-response.test.ts, test/webhooks/events.test.ts).

/** One run of the Worker's five-minute cron trigger. */
export async function cronRun(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** A document of `type` issued by `issuer` (to the sample recipient) and accepted by the simulated SII. */
export async function issuedAccepted(issuer: Issuer, type = "33"): Promise<any> {
  const res = await issue(issuer, invoiceBody(issuer.rut, type));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const done = await untilFinal(issuer, res.body.id);
  expect(done.status).toBe("ACCEPTED");
  return done;
}

/** Makes the issued document's next buyer check due now, through its store (so the store's alarm is brought forward), with `extra` SQL assignments. */
export async function checkNow(issuer: Issuer, id: string, extra = ""): Promise<void> {
  const store = storeFor(env, issuer.companyId, ordinalOfId(id)!).db;
  await store.run(sql.raw(`UPDATE invoices SET buyer_check_at = '2000-01-01T00:00:00.000Z'${extra} WHERE id = '${id}'`));
}

/** The issued document once its due checks have run and `ok` holds (the store's alarm sends the check, the queue consumer reads the SII). */
export async function afterChecks(issuer: Issuer, id: string, ok: (doc: any) => boolean, what: string): Promise<any> {
  let doc: any;
  for (let i = 0; i < 100; i++) {
    await runDueAlarms(issuer.companyId);
    doc = (await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key })).body;
    if (ok(doc)) return doc;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${what}: still ${JSON.stringify(doc.buyer_response)}`);
}

/** The issued document once its due buyer delivery attempts have run and `ok` holds of its `buyer_delivery`. */
export async function afterDelivery(issuer: Issuer, id: string, ok: (d: any) => boolean): Promise<any> {
  let doc: any;
  for (let i = 0; i < 60; i++) {
    await runDueAlarms(issuer.companyId);
    doc = (await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key })).body;
    if (doc.buyer_delivery && ok(doc.buyer_delivery)) return doc;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`delivery of ${id}: still ${JSON.stringify(doc.buyer_delivery)}`);
}

/** The buyer's received copy of an issued document, fetched from the register by the reception cron; its id. */
export async function receivedCopy(r: Receiver, issuer: Issuer, folio: number): Promise<string> {
  // The register is polled for a company at most every 4 minutes: a test's polls come sooner.
  await env.DB.prepare("UPDATE reception_addresses SET polled_at = NULL WHERE company_id = ?").bind(r.companyId).run();
  await cronRun();
  const list = await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&issuer_tax_id=${normalizeRut(issuer.rut)}&folio=${folio}`, { key: r.owner.key });
  expect(list.body.data, JSON.stringify(list.body)).toHaveLength(1);
  return list.body.data[0].id;
}
