/**
 * Genuine DTEs in the forms they circulate in: standalone with the SII namespace dropped from the
 * root after signing (with xmlns:xsi kept, and signed with the SII namespace alone), with an
 * issuer's DocPersonalizado beside the signed Documento, in ISO-8859-1 with accents. Each verifies
 * (the signature in the form its signer signed it, the schema as the SII reads it) and is kept as
 * verified; each of its tampered variants fails.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Caf } from "../../src/countries/cl/documents/caf";
import type { SigningCredentials } from "../../src/countries/cl/pki/certificate";
import { decodeLatin1, encodeLatin1 } from "../../src/countries/cl/xml/xml";
import { signXml, verifyInbound, XML_DECL, type SignedDte } from "../../src/countries/cl";
import { call } from "../helpers/api";
import { makeFakeCertificate, makeFakePfx } from "../helpers/fake-certificates";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import { signedDte } from "../sii/helpers";
import { receptionFixture, upload, type Receiver } from "./helpers";

let cert: SigningCredentials;
let caf33: Caf;
let r: Receiver;
let otherKeyInfo: string;

const SII = ` xmlns="http://www.sii.cl/SiiDte"`;
const XSI = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`;
const PERSONALIZADO = "<DocPersonalizado dteId=\"F1T33\"><dteLinea><NmbItem>Texto libre del emisor</NmbItem></dteLinea></DocPersonalizado>\n";
const ACCENTS = { items: [{ quantity: 1, unit_price: 5000, description: "Café de Ñuñoa, pequeño añejo" }] };

beforeAll(async () => {
  ({ cert, caf33, r } = await receptionFixture());
  const stranger = await makeFakeCertificate({ rut: "22222222-2", cn: "OTRA PERSONA FALSA" });
  const other = await loadSigningCredentials(makeFakePfx(stranger, "x", "modern"), "x");
  otherKeyInfo = /<KeyInfo>[\s\S]*<\/KeyInfo>/.exec(await signXml(`<a><b ID="x">1</b></a>`, "x", other))![0];
});

/** `s` with `from` replaced once; throws when it is not there (a change that changes nothing tests nothing). */
function once(s: string, from: string | RegExp, to: string | ((m: string, ...g: string[]) => string)): string {
  const out = s.replace(from, to as string);
  if (out === s) throw new Error(`nothing to replace: ${from}`);
  return out;
}

/** The DTE signed again with `root` as its root's start tag (the namespaces its signer had in scope). */
async function signedUnder(d: SignedDte, root: string): Promise<string> {
  const unsigned = once(d.element, /<Signature xmlns[\s\S]*<\/Signature>\n?/, "");
  return signXml(once(unsigned, /^<DTE[^>]*>/, root), d.id, cert);
}

/** The DTE's root start tag with the SII's default namespace declaration dropped (as extracted from an envelope). */
const stripped = (element: string) => once(element, /^<DTE[^>]*>/, (m) => once(m, SII, ""));
const file = (element: string) => encodeLatin1(XML_DECL + element + "\n");

/** The genuine forms of one document (each a complete ISO-8859-1 file), and whether its signature verified with the namespace restored. */
async function forms(folio: number): Promise<{ name: string; xml: Uint8Array; restored: boolean }[]> {
  const d = await signedDte(caf33, folio, cert);
  const accented = await signedDte(caf33, folio + 1, cert, "33", ACCENTS);
  const siiOnly = await signedUnder(d, `<DTE version="1.0"${SII}>`);
  return [
    { name: "namespace stripped (xmlns:xsi kept)", xml: file(stripped(d.element)), restored: true },
    { name: "namespace stripped, signed with the SII namespace alone", xml: file(stripped(siiOnly)), restored: true },
    { name: "with DocPersonalizado beside the Documento", xml: file(once(d.element, "</Documento>\n", `</Documento>\n${PERSONALIZADO}`)), restored: false },
    { name: "namespace stripped with DocPersonalizado", xml: file(once(stripped(siiOnly), "</Documento>", `</Documento>${PERSONALIZADO}`)), restored: true },
    { name: "ISO-8859-1 with accents, namespace stripped", xml: file(stripped(accented.element)), restored: true },
  ];
}

/** The tampered variants of a genuine file: none of them may verify. */
function tamperings(xml: Uint8Array): [string, Uint8Array][] {
  const s = decodeLatin1(xml);
  return [
    ["amount changed", once(s, /<MntTotal>(\d+)</, (_m, n) => `<MntTotal>${Number(n) + 1}<`)],
    ["certificate and key replaced", once(s, /<KeyInfo>[\s\S]*<\/KeyInfo>/, otherKeyInfo)],
    ["certificate alone replaced", once(s, /<X509Certificate>[\s\S]*<\/X509Certificate>/, /<X509Certificate>[\s\S]*<\/X509Certificate>/.exec(otherKeyInfo)![0])],
    ["signature removed", once(s, /<Signature xmlns[\s\S]*<\/Signature>\n?/, "")],
    ["element moved", once(s, /(<Emisor>[\s\S]*<\/Emisor>\n?)(<Receptor>[\s\S]*<\/Receptor>\n?)/, "$2$1")],
    ["namespace changed to another", once(s, /<DTE[^>]*>/, (m) => m.replace(SII, "").replace("<DTE", `<DTE xmlns="http://www.sii.cl/SiiDteOtro"`))],
  ].map(([n, t]) => [n!, encodeLatin1(t!)]);
}

describe("genuine documents in their circulating forms", () => {
  it("each verifies, the schema as the SII reads it, and is kept as verified (re-verified, the same verdict)", async () => {
    for (const f of await forms(21)) {
      const rep = await verifyInbound(f.xml, { mode: "simulator" });
      const d = rep.documents[0]!;
      expect([rep.ok, d.signature.ok, d.ted.ok, d.schemaErrors], f.name).toEqual([true, true, true, []]);
      expect(d.signature.message ?? null, f.name).toEqual(f.restored ? expect.stringContaining("SII namespace (http://www.sii.cl/SiiDte) restored") : null);
      // What is kept declares the namespace it verified in and leaves the issuer's addition out.
      expect(d.xml.startsWith(`<DTE${f.restored ? SII : ""}`), f.name).toBe(true);
      expect(d.xml, f.name).not.toContain("DocPersonalizado");
      expect(JSON.stringify(d.content), f.name).not.toContain("Texto libre del emisor");
      const again = await verifyInbound(d.xml, { mode: "simulator" });
      expect([again.ok, again.documents[0]!.signature.digestMode, again.documents[0]!.signature.message ?? null, again.documents[0]!.xml], f.name).toEqual([true, "context", null, d.xml]);
    }
  });

  it("the accents survive as ISO-8859-1 text", async () => {
    const accented = (await forms(23)).find((f) => f.name.startsWith("ISO-8859-1"))!;
    expect(accented.xml.some((b) => b >= 0x80)).toBe(true);
    const rep = await verifyInbound(accented.xml, { mode: "simulator" });
    expect(rep.documents[0]!.xml).toContain("Café de Ñuñoa, pequeño añejo");
  });

  it("every tampered variant of every form fails, and a message names the forms tried", async () => {
    for (const f of await forms(25)) {
      for (const [name, xml] of tamperings(f.xml)) {
        const rep = await verifyInbound(xml, { mode: "simulator" });
        const d = rep.documents[0]!;
        expect([rep.ok, d.signature.ok], `${f.name}: ${name}`).toEqual([false, false]);
        if (name === "amount changed" && f.restored) expect(d.signature.message, f.name).toMatch(/^The digest of #F\d+T33 does not match its content in any of the namespace forms the SII accepts: .* \(tried as received and, the file's DTE declaring no namespace, with the SII's restored\)$/);
        if (name === "certificate alone replaced") expect(d.signature.message, f.name).toContain("KeyValue and X509Certificate hold different keys");
      }
    }
  });

  it("uploaded, a namespace-stripped DTE is verified, says which form verified, and downloads as kept", async () => {
    const f = (await forms(27))[0]!;
    const res = await upload(r, f.xml, "dte.xml");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.documents[0];
    expect([doc.verification.status, doc.verification.reception_status]).toEqual(["VERIFIED", 0]);
    const sig = doc.verification.checks.find((c: any) => c.name === "dte_signature");
    expect(sig).toMatchObject({ result: "PASSED", message: expect.stringContaining("restored on <DTE>") });
    expect(doc.verification.checks.find((c: any) => c.name === "schema").result).toBe("PASSED");
    const xml = await call("POST", `/api/reception/invoices/${doc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    const served = new Uint8Array(await xml.raw.arrayBuffer());
    expect(decodeLatin1(served).startsWith(`<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE${SII}`)).toBe(true);
    expect((await verifyInbound(served, { mode: "simulator" })).ok).toBe(true);
    // A document with accents downloads as ISO-8859-1 bytes behind a declaration saying so.
    const accented = (await forms(28)).find((x) => x.name.startsWith("ISO-8859-1"))!;
    const acc = (await upload(r, accented.xml, "acentos.xml")).body.documents[0];
    const accXml = await call("POST", `/api/reception/invoices/${acc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    const bytes = new Uint8Array(await accXml.raw.arrayBuffer());
    expect(accXml.headers.get("Content-Type")).toBe("application/xml; charset=ISO-8859-1");
    expect(decodeLatin1(bytes)).toMatch(/^<\?xml version="1\.0" encoding="ISO-8859-1"\?>\n<DTE[\s\S]*Café de Ñuñoa, pequeño añejo/);
    expect(bytes.includes(0xd1)).toBe(true);
  });
});

/** A copy of a genuine file whose Encabezado was re-indented (as an editor saves it): the same data, a digest that no longer matches. */
const reindented = (xml: Uint8Array) => encodeLatin1(once(decodeLatin1(xml), "<Encabezado>\n", "<Encabezado>\n    "));
const list = (folio: number) => call("GET", `/api/reception/invoices/list?company_id=${r.companyId}&folio=${folio}`, { key: r.owner.key });

describe("copies of one document", () => {
  it("a later copy that verifies supersedes one that did not, which stays in its history; the bad copy again changes nothing", async () => {
    const d = await signedDte(caf33, 31, cert);
    const bad = await upload(r, reindented(d.xml), "bad.xml");
    const first = bad.body.documents[0];
    expect([first.outcome, first.verification.status, first.verification.reception_status]).toEqual(["NEW", "FAILED", 1]);
    const good = await upload(r, d.xml, "good.xml");
    expect(good.status, JSON.stringify(good.body)).toBe(201);
    const doc = good.body.documents[0];
    expect([doc.id, doc.outcome, doc.verification.status, doc.verification.reception_status, doc.verification.duplicate]).toEqual([first.id, "SUPERSEDED", "VERIFIED", 0, false]);
    expect(doc.received_file.name).toBe("good.xml");
    expect(doc.received_file.superseded).toEqual([expect.objectContaining({ name: "bad.xml", reception_status: 1, channel: "UPLOAD", failed_checks: expect.arrayContaining([expect.objectContaining({ name: "dte_signature" })]) })]);
    const served = await call("POST", `/api/reception/invoices/${doc.id}/download/xml?company_id=${r.companyId}`, { key: r.owner.key });
    expect((await verifyInbound(new Uint8Array(await served.raw.arrayBuffer()), { mode: "simulator" })).ok).toBe(true);
    const again = await upload(r, reindented(d.xml), "bad-again.xml");
    expect(again.body.documents[0]).toMatchObject({ id: first.id, outcome: "ALREADY_RECEIVED", verification: { status: "VERIFIED" } });
    expect((await list(31)).body.total).toBe(1);
  });

  it("a copy of a verified document in another form is that document, not a duplicate; another document is", async () => {
    const d = await signedDte(caf33, 33, cert);
    const original = (await upload(r, d.xml)).body.documents[0];
    expect(original.verification.status).toBe("VERIFIED");
    const copy = await upload(r, reindented(d.xml), "copy.xml");
    expect(copy.body.documents[0]).toMatchObject({ id: original.id, outcome: "ALREADY_RECEIVED", verification: { status: "VERIFIED", duplicate: false } });
    const other = await upload(r, (await signedDte(caf33, 33, cert, "33", { items: [{ quantity: 9, unit_price: 1000, description: "Otro" }] })).xml);
    expect(other.body.documents[0]).toMatchObject({ outcome: "DUPLICATE", verification: { reception_status: 4, duplicate: true } });
    expect((await list(33)).body.total).toBe(2);
  });
});

