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
import { receiver, type Receiver } from "./helpers";

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
  const bytes = typeof raw === "string" ? new TextEncoder().encode(raw) : raw;
  const message = {
    from: "facturas@proveedor.cl", to, rawSize: bytes.length, headers: new Headers(),
    raw: new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes); c.close(); } }),
    setReject() {}, forward: async () => ({}), reply: async () => ({}),
  } as unknown as ForwardableEmailMessage;
  await worker.email!(message, env);
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
    for (const f of [201, 202]) expect((await list(f)).data[0]).toMatchObject({ channel: "EMAIL", verification: { status: "VERIFIED" } });
  });

  it("an EnvioDTE inside a zip is taken; a zip bomb is refused and recorded", async () => {
    const e = await envelope([await signedDte(caf33, 203, cert)], cert);
    const zip = zipSync({ "dte/envio.xml": e.xml, "readme.txt": strToU8("hola") });
    expect(await deliver(mime([{ name: "dtes.zip", type: "application/zip", bytes: zip }]))).toMatchObject({ outcome: "STORED", documents: 1 });
    expect((await list(203)).total).toBe(1);
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
