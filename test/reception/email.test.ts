/**
 * E-mail channel: the Worker's email() handler called with constructed messages (Cloudflare's
 * ForwardableEmailMessage shape), routed by the company's reception address; every outcome recorded.
 */
import { env } from "cloudflare:workers";
import { strToU8, zipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { sql } from "drizzle-orm";
import { call } from "../helpers/api";
import { storeRows } from "../helpers/store";
import { envelope, fakeCredentials, signedDte, simulatorCaf } from "../sii/helpers";
import { emailMessage as mail, receiver, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;
let address: string;

beforeAll(async () => {
  cert = await fakeCredentials();
  caf33 = await simulatorCaf({ documentType: 33, from: 1, to: 500 });
  r = await receiver();
  const s = await call("GET", `/api/companies/${r.companyId}/settings`, { key: r.owner.key });
  address = s.body.reception_email;
});

const b64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join("")).replace(/.{76}/g, "$&\r\n");

function mime(parts: { name: string; type: string; bytes: Uint8Array }[], to = address): string {
  const head = [`From: Proveedor <facturas@proveedor.cl>`, `To: ${to}`, "Subject: Envio DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="XYZ"', "", "--XYZ", "Content-Type: text/plain", "", "Adjunto DTE", ""];
  const body = parts.flatMap((p) => ["--XYZ", `Content-Type: ${p.type}; name="${p.name}"`, `Content-Disposition: attachment; filename="${p.name}"`, "Content-Transfer-Encoding: base64", "", b64(p.bytes), ""]);
  return [...head, ...body, "--XYZ--", ""].join("\r\n");
}

async function deliver(raw: string | Uint8Array, to = address) {
  await worker.email!(mail(raw, to), env);
  return lastMessage(to);
}

type Message = { id: string; outcome: string; documents: number; company_id: string | null; detail: string | null };
const LAST = "SELECT id, outcome, documents, company_id, detail FROM inbound_messages WHERE recipient = ? ORDER BY created_at DESC, id DESC LIMIT 1";

/** The last message to `to`: a company's messages are in its document stores, those that matched none in D1. */
async function lastMessage(to: string): Promise<Message | null> {
  const [stored] = await storeRows<Message>(r.companyId, sql`SELECT id, outcome, documents, company_id, detail FROM inbound_messages WHERE recipient = ${to} ORDER BY created_at DESC, id DESC LIMIT 1`);
  return stored ?? env.DB.prepare(LAST).bind(to).first<Message>();
}

const list = async (folio: number) => (await call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=${folio}`, { key: r.owner.key })).body;

describe("email() handler", () => {
  it("the settings show the reception address", () => {
    expect(address).toMatch(/^dte\+[a-z0-9]{16}@dte\.localhost$/);
  });

  it("an EnvioDTE with two DTEs attached: both listed, channel EMAIL, verified", async () => {
    const e = await envelope([await signedDte(caf33, 201, cert), await signedDte(caf33, 202, cert)], cert);
    const rec = await deliver(mime([{ name: "envio.xml", type: "application/xml", bytes: e.xml }]));
    expect(rec).toMatchObject({ outcome: "STORED", documents: 2, company_id: r.companyId });
    // In the company's open store (its id names the partition), not in D1.
    expect(rec!.id).toMatch(/^inm_p1_/);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM inbound_messages WHERE id = ?").bind(rec!.id).first("n")).toBe(0);
    for (const f of [201, 202]) expect((await list(f)).data[0]).toMatchObject({ channel: "EMAIL", received_file: { name: "envio.xml", envelope_id: "SetDoc", message_id: rec!.id, acknowledgment: { reply_to: { email: "dte@losandes.example", source: "TAXPAYER_DIRECTORY" } } }, verification: { status: "VERIFIED" } });
  });

  it("an EnvioDTE inside a zip is taken; a zip bomb is refused and recorded", async () => {
    const e = await envelope([await signedDte(caf33, 203, cert)], cert);
    const zip = zipSync({ "dte/envio.xml": e.xml, "readme.txt": strToU8("hola") });
    expect(await deliver(mime([{ name: "dtes.zip", type: "application/zip", bytes: zip }]))).toMatchObject({ outcome: "STORED", documents: 1 });
    const listed = await list(203);
    expect(listed.total).toBe(1);
    // The file's name is the zip entry's, without its folder (the RecepcionEnvio's NmbEnvio).
    expect(listed.data[0].received_file).toMatchObject({ name: "envio.xml", envelope_id: "SetDoc", message_id: expect.stringMatching(/^inm_p1_/) });
    const bomb = zipSync({ "big.xml": new Uint8Array(30 * 1024 * 1024) }, { level: 9 });
    const rec = await deliver(mime([{ name: "bomb.zip", type: "application/zip", bytes: bomb }]));
    expect(rec?.outcome).toBe("ZIP_REFUSED");
  });

  it("mail with no DTE, for an unknown address, or malformed is recorded and never throws", async () => {
    expect(await deliver(mime([]))).toMatchObject({ outcome: "NO_DTE", documents: 0 });
    expect(await deliver(mime([{ name: "x.xml", type: "text/xml", bytes: strToU8("<hola/>") }]))).toMatchObject({ outcome: "NO_DTE" });
    const stranger = "dte+nobody0000000000@dte.localhost";
    expect(await deliver(mime([], stranger), stranger)).toMatchObject({ outcome: "UNKNOWN_RECIPIENT", company_id: null });
    // No company: recorded in D1 (an id without a partition).
    expect(await env.DB.prepare(LAST).bind(stranger).first("id")).toMatch(/^inm_[0-9A-Z]{26}$/);
    const other = "someone@elsewhere.cl";
    expect(await deliver("garbage", other)).toMatchObject({ outcome: "UNKNOWN_RECIPIENT" });
    const rec = await deliver(new Uint8Array([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0x2d, 0x2d]));
    expect(["NO_DTE", "MALFORMED"]).toContain(rec?.outcome);
  });
});

describe("the company's log of inbound messages (GET /api/reception/messages)", () => {
  let log: Receiver;
  let to: string;
  const get = (path: string, who = log) => call("GET", `${path}${path.includes("?") ? "&" : "?"}company_id=${who.companyId}`, { key: who.owner.key });

  beforeAll(async () => {
    log = await receiver();
    to = (await call("GET", `/api/companies/${log.companyId}/settings`, { key: log.owner.key })).body.reception_email;
  });

  it("shows each e-mail and upload with its Subject, outcome and documents, newest first, with filters and pages", async () => {
    const e = await envelope([await signedDte(caf33, 301, cert), await signedDte(caf33, 302, cert)], cert);
    const zip = zipSync({ "envio.xml": e.xml });
    await worker.email!(mail(mime([{ name: "dtes.zip", type: "application/zip", bytes: zip }], to).replace("Subject: Envio DTE", "Subject: =?ISO-8859-1?Q?Env=EDo_facturas_301-302?="), to), env);
    await worker.email!(mail(mime([{ name: "f.pdf", type: "application/pdf", bytes: strToU8("%PDF-1.4") }], to), to), env);
    const reply = strToU8('<?xml version="1.0" encoding="ISO-8859-1"?><RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Resultado ID="R1"/></RespuestaDTE>');
    await worker.email!(mail(mime([{ name: "respuesta.xml", type: "application/xml", bytes: reply }], to), to), env);
    const up = await upload(log, (await envelope([await signedDte(caf33, 303, cert)], cert)).xml);
    expect(up.status).toBe(201);

    const all = await get("/api/reception/messages");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 4, current_page: 1, last_page: 1 });
    const [uploaded, replied, noDte, stored] = all.body.data;
    // A buyer's reply is read as one (test/reception/buyer-replies.test.ts); this one names no document.
    expect(replied).toMatchObject({ outcome: "NO_DTE", documents: 0, detail: "The RespuestaDTE names no document." });
    expect(uploaded).toMatchObject({ channel: "UPLOAD", outcome: "STORED", documents: 1, sender: null, subject: null, detail: null, id_company: log.companyId });
    expect(noDte).toMatchObject({ channel: "EMAIL", outcome: "NO_DTE", documents: 0, sender: "facturas@proveedor.cl", recipient: to, subject: "Envio DTE", detail: "The message carries no XML or zip attachment." });
    expect(stored).toMatchObject({ channel: "EMAIL", outcome: "STORED", documents: 2, subject: "Envío facturas 301-302" });
    expect(stored.sha256).toMatch(/^[0-9a-f]{64}$/);
    // What each one carried: the zip read, the PDF not (why nothing came of it), the uploaded file by its name.
    expect(stored.attachments).toEqual([{ name: "dtes.zip", content_type: "application/zip", size: zip.length, read_as: "ZIP" }]);
    expect(noDte.attachments).toEqual([{ name: "f.pdf", content_type: "application/pdf", size: 8, read_as: "IGNORED" }]);
    expect(replied.attachments).toEqual([{ name: "respuesta.xml", content_type: "application/xml", size: reply.length, read_as: "XML" }]);
    expect(uploaded.attachments).toEqual([{ name: "envio.xml", content_type: "text/xml", size: uploaded.size, read_as: "XML" }]);
    expect(Date.parse(stored.received_at)).toBeLessThanOrEqual(Date.parse(noDte.received_at));

    expect((await get("/api/reception/messages?outcome=NO_DTE")).body.data.map((m: { id: string }) => m.id)).toEqual([replied.id, noDte.id]);
    expect((await get("/api/reception/messages?channel=UPLOAD")).body.data.map((m: { id: string }) => m.id)).toEqual([uploaded.id]);
    expect((await get(`/api/reception/messages?received_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.total).toBe(0);
    const page2 = await get("/api/reception/messages?per_page=3&page=2");
    expect(page2.body).toMatchObject({ total: 4, last_page: 2 });
    expect(page2.body.data.map((m: { id: string }) => m.id)).toEqual([stored.id]);

    // One message, with the documents it brought; those are the received documents 301 and 302.
    const one = await get(`/api/reception/messages/${stored.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: stored.id, outcome: "STORED", documents: 2 });
    expect(one.body.document_ids).toHaveLength(2);
    const folios = await Promise.all(one.body.document_ids.map(async (id: string) => (await get(`/api/reception/invoices/${id}`)).body.folio));
    expect(folios.sort()).toEqual([301, 302]);
    expect((await get(`/api/reception/messages/${uploaded.id}`)).body.document_ids).toHaveLength(1);
    expect((await get(`/api/reception/messages/${noDte.id}`)).body.document_ids).toEqual([]);
    // Each message that brought nothing is an event for the company's webhooks; the ones that brought documents are not.
    const events = await storeRows<{ dedupe_key: string }>(log.companyId, sql`SELECT dedupe_key FROM event_outbox WHERE type = 'inbound_message.no_documents' ORDER BY dedupe_key`);
    expect(events.map((e) => e.dedupe_key)).toEqual([`inbound_message:${noDte.id}`, `inbound_message:${replied.id}`].sort());
  });

  it("lists the attachments past the read limit as such; a name is shown without control characters, bounded", async () => {
    const parts = Array.from({ length: 52 }, (_, i) => ({ name: `nota-${i}.txt`, type: "text/plain", bytes: strToU8(`nota ${i}`) }));
    const raw = mime(parts, to).replace('filename="nota-0.txt"', `filename*=UTF-8''a%01b%0Ac${"x".repeat(300)}.txt`);
    await worker.email!(mail(raw, to), env);
    const [latest] = (await get("/api/reception/messages?per_page=1")).body.data;
    expect(latest.outcome).toBe("NO_DTE");
    expect(latest.attachments).toHaveLength(52);
    expect(latest.attachments[0].name).toBe(`abc${"x".repeat(252)}`);
    expect(latest.attachments.slice(1, 50).every((a: { read_as: string }) => a.read_as === "IGNORED")).toBe(true);
    expect(latest.attachments.slice(50)).toEqual([
      { name: "nota-50.txt", content_type: "text/plain", size: 7, read_as: "OVER_LIMIT" },
      { name: "nota-51.txt", content_type: "text/plain", size: 7, read_as: "OVER_LIMIT" },
    ]);
  });

  it("is the company's own: another company's message is not found, another client's key is refused", async () => {
    const other = await receiver();
    const theirs = await upload(other, (await envelope([await signedDte(caf33, 304, cert)], cert)).xml);
    expect(theirs.status).toBe(201);
    const [theirMessage] = (await get("/api/reception/messages", other)).body.data;
    expect(theirMessage.id).toMatch(/^inm_p1_/);
    const notFound = await get(`/api/reception/messages/${theirMessage.id}`);
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.code).toBe("INBOUND_MESSAGE_NOT_FOUND");
    expect((await get("/api/reception/messages/inm_p9_01JD3Q4M6YV8T1N5B2K7C9XW3E")).body.error.code).toBe("INBOUND_MESSAGE_NOT_FOUND");
    const refused = await call("GET", `/api/reception/messages?company_id=${log.companyId}`, { key: other.owner.key });
    expect(refused.status).toBe(403);
    // A message to an address no company has is in no company's log.
    await worker.email!(mail("Subject: x\r\n\r\nhola", "dte+nobodyhere00000@dte.localhost"), env);
    expect((await get("/api/reception/messages")).body.data.map((m: { recipient: string }) => m.recipient)).not.toContain("dte+nobodyhere00000@dte.localhost");
  });
});
