/**
 * Hostile buyer's replies to a document the company issued, uploaded and mailed: a genuine signed
 * ResultadoDTE (acceptance) or EnvioRecibos (receipt of the goods) whose file hides a forged copy of
 * it (attack-files.ts: a rejection, or a receipt of another document, with MntTotal 9999999) is
 * either refused with a clear error or read as the genuine reply only: the entries recorded, the
 * document's buyer_replies and the reply's XML download hold the genuine verdict and nothing of the
 * forged copy, and the downloaded XML read again gives the same verdict.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { readBuyerReply, type BuyerReply } from "../../src/countries/cl/exchange/replies-read";
import { buildEnvioRecibos, buildResultadoDte } from "../../src/countries/cl/exchange/responses";
import { decodeXmlBytes } from "../../src/countries/cl/xml/xml";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { call } from "../helpers/api";
import { readyIssuer, type Issuer } from "../helpers/issuer";
import { fakeCredentials } from "../sii/helpers";
import { expectNothingForged } from "./attack-checks";
import { FORGED_NAME, FORGED_TOTAL, HIDINGS, hostileReply, type Hiding } from "./attack-files";
import { emailMessage, issuedAccepted, RECIPIENT } from "./helpers";

type ReplyHiding = Exclude<Hiding, "pi-swallow" | "comment-swallow" | "cdata-swallow">;
const REPLY_HIDINGS = HIDINGS.filter((h): h is ReplyHiding => !h.endsWith("-swallow"));

let issuer: Issuer;
let signer: SigningCredentials;
/** One issued factura per kind of reply and channel (a document keeps its last 20 replies). */
const invoices: Record<"result" | "receipt" | "mail", any> = { result: null, receipt: null, mail: null };

beforeAll(async () => {
  issuer = await readyIssuer([33]);
  for (const k of Object.keys(invoices) as (keyof typeof invoices)[]) invoices[k] = await issuedAccepted(issuer);
  signer = await fakeCredentials({ rut: "22222222-2" });
}, 180_000);

/** The buyer's acceptance of `invoice`, signed; `n` makes each file its own. */
async function acceptance(invoice: any, n: number): Promise<string> {
  const r = await buildResultadoDte({
    responderRut: RECIPIENT, recipientRut: issuer.rut, timestamp: "2026-11-24T09:30:00", signer, responseId: 100 + n,
    results: [{ type: 33, folio: invoice.folio, issueDate: invoice.issue_date, issuerRut: issuer.rut, receiverRut: RECIPIENT, total: invoice.total, receptionCode: 1, status: 0, statusText: "Documento aceptado" }],
  });
  return r.xmlString;
}

/** The buyer's receipt of the goods of `invoice`, signed. */
async function receipt(invoice: any, n: number): Promise<string> {
  const r = await buildEnvioRecibos({
    responderRut: RECIPIENT, recipientRut: issuer.rut, timestamp: `2026-11-24T10:00:${String(n).padStart(2, "0")}`, signer,
    receipts: [{ type: 33, folio: invoice.folio, issueDate: invoice.issue_date, issuerRut: issuer.rut, receiverRut: RECIPIENT, total: invoice.total, place: "Bodega central", signerRut: "22222222-2" }],
  });
  return r.xmlString;
}

/** The forged copies: a rejection instead of the acceptance; a receipt of another folio. Both with MntTotal 9999999 and the forger's name in a text. */
const forgeRejection = (root: string) =>
  root.replace("<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>2</EstadoDTE>").replace(/<EstadoDTEGlosa>[^<]*</, `<EstadoDTEGlosa>${FORGED_NAME}<`).replace(/<MntTotal>\d+</g, `<MntTotal>${FORGED_TOTAL}<`);
const forgeReceipt = (root: string) =>
  root.replace(/<Folio>(\d+)<\/Folio>/g, (_m, f) => `<Folio>${Number(f) + 1}</Folio>`).replace(/<Recinto>[^<]*</, `<Recinto>${FORGED_NAME}<`).replace(/<MntTotal>\d+</g, `<MntTotal>${FORGED_TOTAL}<`);

const KINDS = {
  result: { build: acceptance, forge: forgeRejection, entry: { kind: "RESULT", status: "ACCEPTED" } },
  receipt: { build: receipt, forge: forgeReceipt, entry: { kind: "RECEIPT", status: "GOODS_RECEIVED" } },
} as const;

function uploadReply(bytes: Uint8Array, name = "respuesta.xml") {
  const form = new FormData();
  form.append("file", new File([bytes as BlobPart], name, { type: "text/xml" }));
  return call("POST", `${issuer.base}/invoices/buyer_replies`, { key: issuer.owner.key, body: form });
}

const repliesOf = async (invoice: any): Promise<any[]> => (await call("GET", `${issuer.base}/invoices/${invoice.id}`, { key: issuer.owner.key })).body.buyer_replies;

/** What a reply says, as its verdicts: kind, code, type, folio, total and whether its signature covers it. */
const verdicts = (r: BuyerReply) => r.entries.map((e) => ({ kind: e.kind, code: e.code, folio: e.folio, total: e.total, signed: e.signature.ok }));

/**
 * The buyer_replies entry `id` of `invoice` is the genuine reply: its view, and the XML it was read
 * from as downloaded, which holds nothing of the forged copy and reads as the same verdict.
 */
async function expectGenuineReply(invoice: any, id: string, entry: { kind: string; status: string }): Promise<void> {
  const recorded = (await repliesOf(invoice)).find((r) => r.id === id);
  expect(recorded).toMatchObject(entry);
  expectNothingForged(JSON.stringify(recorded), "the recorded reply");
  const dl = await call("GET", `${issuer.base}/invoices/${invoice.id}/buyer_replies/${id}/xml`, { key: issuer.owner.key });
  expect(dl.status).toBe(200);
  const bytes = new Uint8Array(await dl.raw.arrayBuffer());
  expectNothingForged(decodeXmlBytes(bytes), "the downloaded reply");
  const read = await readBuyerReply(bytes);
  expect("problem" in read, JSON.stringify(read)).toBe(false);
  const reply = read as BuyerReply;
  expect(verdicts(reply)).toEqual([{ kind: entry.kind, code: entry.kind === "RESULT" ? 0 : null, folio: invoice.folio, total: invoice.total, signed: recorded.signature.valid }]);
  // Read again from its download, the reply gives the verdict recorded.
  const again = await uploadReply(bytes, "downloaded.xml");
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body).toMatchObject({ signature_valid: reply.signature.ok, entries: [{ ...entry, folio: invoice.folio, invoice_id: invoice.id }] });
}

for (const [kind, k] of Object.entries(KINDS) as [keyof typeof KINDS, (typeof KINDS)[keyof typeof KINDS]][]) {
  describe(`an uploaded ${kind === "result" ? "ResultadoDTE" : "EnvioRecibos"}`, () => {
    for (const [i, how] of REPLY_HIDINGS.entries()) {
      it(`hiding a forged copy (${how}): refused, or the genuine reply only`, async () => {
        const invoice = invoices[kind];
        const before = (await repliesOf(invoice)).length;
        const res = await uploadReply(hostileReply(await k.build(invoice, i), how, k.forge));
        expectNothingForged(JSON.stringify(res.body), "the answer");
        if (res.status !== 200) {
          expect(res.status, JSON.stringify(res.body)).toBe(422);
          expect(res.body.error).toMatchObject({ code: "INVOICE_BUYER_REPLY_INVALID", message: expect.stringMatching(/^The file was not read: .{10,}/) });
          expect(await repliesOf(invoice)).toHaveLength(before);
          return;
        }
        expect(res.body.entries).toEqual([expect.objectContaining({ ...k.entry, folio: invoice.folio, invoice_id: invoice.id, outcome: "RECORDED" })]);
        await expectGenuineReply(invoice, res.body.entries[0].reply_id, k.entry);
      });
    }
  });
}

describe("mailed ResultadoDTEs", () => {
  it("each hiding a forged copy in another way, attached to one mail: each refused, or read as the genuine reply only", async () => {
    const invoice = invoices.mail;
    const address = (await call("GET", `${issuer.base}/settings`, { key: issuer.owner.key })).body.reception_email;
    const files = await Promise.all(REPLY_HIDINGS.map(async (how, i) => ({ name: `${how}.xml`, bytes: hostileReply(await acceptance(invoice, 50 + i), how, forgeRejection) })));
    const b64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join("")).replace(/.{76}/g, "$&\r\n");
    const raw = [
      "From: Cliente <dte@cliente.cl>", `To: ${address}`, "Subject: Respuesta DTE", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="XYZ"', "",
      ...files.flatMap((f) => ["--XYZ", `Content-Type: application/xml; name="${f.name}"`, `Content-Disposition: attachment; filename="${f.name}"`, "Content-Transfer-Encoding: base64", "", b64(f.bytes), ""]),
      "--XYZ--", "",
    ].join("\r\n");
    await worker.email!(emailMessage(raw, address, "dte@cliente.cl"), env);
    const replies = await repliesOf(invoice);
    expect(replies.length).toBeGreaterThan(0);
    for (const r of replies) await expectGenuineReply(invoice, r.id, KINDS.result.entry);
  });
});
