/**
 * Reception verification at speed (issue 12, item 9) without giving up correctness:
 * - an envelope is verified one DTE at a time (exchange/verify.ts verifyEnvelopeLazily: in one pass
 *   over its source, verify-pass.ts, else over its flat index, verify-flat.ts, else its tree) and its
 *   canonical forms are taken from the source (xml/c14n.ts spanCanonical); every report must equal
 *   the one of the whole-tree path (`lazy: false`), for every envelope the engine makes and for
 *   tampered, wrapped, re-written and malformed ones;
 * - the canonicaliser from the source equals the reference canonicaliser (the implementation before
 *   any speed-up, over @xmldom/xmldom) on generated XML inside and around the fast parser's subset.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { buildEnvioBoleta, buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { verifyInbound, verifyPaths, type InboundOptions } from "../../src/countries/cl/exchange/verify";
import { dteSchemaProblems, dteSchemaProblemsFlat } from "../../src/countries/cl/documents/dte-schema";
import { canonicalize, flatCanonical, flatCanonicalUtf8, sourceCanonical, sourceCanonicalUtf8 } from "../../src/countries/cl/xml/c14n";
import { BODY_CANONICAL, expand, fastParse, fastParseEnvelope, type FElement } from "../../src/countries/cl/xml/fastxml";
import { childTextOf, commitIndex, indexElement, plainChildTexts, textOf, type FlatIndex } from "../../src/countries/cl/xml/flatxml";
import { encodeLatin1, isAscii, parseXmlDom, type XDocument, type XElement, type XNode } from "../../src/countries/cl/xml/xml";
import { canonicalizeReference } from "../engine/c14n-reference";
import { buildFeatureDtes } from "../helpers/cl-feature-samples";
import { buildSamples, HOLDER_RUT, ISSUER_RUT, issuer, recipient, type SampleSet } from "../helpers/cl-samples";
import { buildSignedDte } from "../../src/countries/cl/documents/dte";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import { certificateCacheSize } from "../../src/countries/cl/xml/xmldsig";
import { makeFakeCertificate } from "../helpers/fake-certificates";
import { mutate, mutation } from "../helpers/dte-mutations";

let set: SampleSet;
let features: Record<string, SignedDte>;
const SIM: InboundOptions = { mode: "simulator" };
const common = () => ({ issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer });

beforeAll(async () => {
  set = await buildSamples();
  features = await buildFeatureDtes(set);
});

/** verifyInbound as it runs (lazily when it can: each DTE in one pass, else over its flat index, else its tree), with the flat index first, and with the whole tree: the reports must be equal. */
async function both(xml: string | Uint8Array | ArrayBuffer, opts: InboundOptions = SIM) {
  const lazyBefore = verifyPaths.lazy;
  const fast = await verifyInbound(xml, opts);
  const lazy = verifyPaths.lazy > lazyBefore;
  const flat = await verifyInbound(xml, { ...opts, pass: false });
  const whole = await verifyInbound(xml, { ...opts, lazy: false });
  expect(fast).toEqual(whole);
  expect(flat).toEqual(whole);
  return { report: fast, lazy };
}

const envelopeOf = (name: string) => set.samples.find((s) => s.name === name)!.xmlString;
const utf8 = new TextEncoder();

/** The samples write accents (names, activities): two facturas in ASCII only, one with a character reference in an ID-less value. */
async function asciiFacturas(): Promise<SignedDte[]> {
  const plain = { issuer: { ...issuer, tax_information: { ...issuer.tax_information, activity: "Desarrollo de software" } }, recipient: { ...recipient, legal_name: "COMERCIAL NANDU & CIA. LIMITADA", address: { country: "CL", city: "Nunoa", address: "Irarrazaval 2401" }, tax_information: { activity: "Comercio" } } };
  const dtes = [];
  for (const folio of [41, 42]) {
    const document = computeDocument({ invoice_type: "33", invoice_date: "2026-11-20 10:30:00", ...plain, items: [{ quantity: 1 + folio, unit_price: 990, description: "Servicio <mensual> & soporte" }] } as InvoiceInput);
    dtes.push(await buildSignedDte({ document, folio, caf: set.cafs[33]!, signer: set.signer, timestamp: "2026-11-20T10:30:05" }));
  }
  return dtes;
}

describe("envelopes verified one DTE at a time", () => {
  it("every envelope the engine makes (eleven types, the feature set, boletas): same report, passed, lazily", async () => {
    const inputs = [envelopeOf("EnvioDTE to SII"), envelopeOf("EnvioDTE to recipient"), envelopeOf("EnvioBOLETA")];
    const all = Object.values(features);
    inputs.push((await buildEnvioDte({ ...common(), dtes: all.filter((d) => d.envelope === "EnvioDTE") })).xmlString);
    inputs.push((await buildEnvioBoleta({ ...common(), dtes: all.filter((d) => d.envelope === "EnvioBOLETA") })).xmlString);
    let documents = 0;
    const envelopeFlatBefore = verifyPaths.envelopeFlat;
    const envelopePassBefore = verifyPaths.envelopePass;
    for (const xml of inputs) {
      const { report, lazy } = await both(xml);
      expect(report.ok, report.message).toBe(true);
      expect(lazy).toBe(true);
      documents += report.documents.length;
    }
    expect(documents).toBeGreaterThan(20);
    // Each envelope's own Signature read in one pass beside its DTEs, and over a flat index beside
    // theirs (both() verifies each lazily both ways), never over a tree.
    expect(verifyPaths.envelopePass - envelopePassBefore).toBe(inputs.length);
    expect(verifyPaths.envelopeFlat - envelopeFlatBefore).toBe(inputs.length);
  });

  it("the envelope's own Caratula and Signature over flat indexes: a change the tree refuses is refused the same way; one that keeps the canonical form passes", async () => {
    const env = envelopeOf("EnvioDTE to recipient");
    const sigAt = env.lastIndexOf("<Signature xmlns");
    const envSig = env.slice(sigAt, env.indexOf("</Signature>", sigAt) + "</Signature>".length);
    const inSig = (from: RegExp, to: (m: string) => string) => env.slice(0, sigAt) + envSig.replace(from, to) + env.slice(sigAt + envSig.length);
    const flip = (m: string) => m.slice(0, -20) + (m.at(-20) === "A" ? "B" : "A") + m.slice(-19);
    const refused: Record<string, string> = {
      "the envelope's DigestValue changed": inSig(/<DigestValue>[^<]+/, flip),
      "the envelope's SignatureValue changed": inSig(/<SignatureValue>[^<]+/, flip),
      "the envelope's Reference to another ID": inSig(/URI="#[^"]+"/, () => 'URI="#Other"'),
      "the envelope's certificate unreadable": inSig(/<X509Certificate>[^<]+/, (m) => m.slice(0, 40)),
      "the Caratula changed after signing": env.replace(/<TmstFirmaEnv>[^<]+/, "<TmstFirmaEnv>2026-11-20T10:32:00"),
      "the envelope's Signature unbalanced": env.slice(0, sigAt) + envSig.replace("</SignedInfo>", "") + env.slice(sigAt + envSig.length),
    };
    for (const [name, xml] of Object.entries(refused)) {
      const before = verifyPaths.envelopeFlat;
      const passBefore = verifyPaths.envelopePass;
      const { report, lazy } = await both(xml);
      expect(report.ok, name).toBe(false);
      expect(lazy, name).toBe(false);
      expect(verifyPaths.envelopeFlat, name).toBe(before);
      expect(verifyPaths.envelopePass, name).toBe(passBefore);
    }
    const passed: Record<string, [string, boolean]> = {
      "a redundant default namespace in the Caratula (a cut)": [env.replace(/<Caratula version="1.0">/, '<Caratula xmlns="http://www.sii.cl/SiiDte" version="1.0">'), true],
      "the envelope's certificate wrapped otherwise": [inSig(/<X509Certificate>[^<]{64}/, (m) => `${m}\n`), true],
      "a second Signature before the envelope's own (only the last is checked)": [env.slice(0, sigAt) + envSig + "\n" + env.slice(sigAt), false],
      "the Caratula not canonical as written": [env.replace(/<Caratula version="1.0">/, "<Caratula version='1.0'>"), false],
    };
    for (const [name, [xml, expectLazy]] of Object.entries(passed)) {
      const passBefore = verifyPaths.envelopePass;
      const { report, lazy } = await both(xml);
      expect(report.ok, `${name}: ${report.message}`).toBe(true);
      expect(lazy, name).toBe(expectLazy);
      if (expectLazy) expect(verifyPaths.envelopePass - passBefore, name).toBe(1);
    }
  });

  it("DTEs whose start tags differ, repeat, or carry redundant declarations (cuts): each parsed as written, every report the whole tree's", async () => {
    const all = Object.values(features).filter((d) => d.envelope === "EnvioDTE");
    const env = (await buildEnvioDte({ ...common(), dtes: all })).xmlString;
    const full = '<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">';
    const count = env.split(full).length - 1;
    expect(count).toBeGreaterThan(4);
    /** The envelope with the k-th DTE's start tag written as tags[k % tags.length] (the SetDTE's canonical form, and so its signature, unchanged). */
    const retag = (tags: string[]) => { let k = 0; return env.replaceAll(full, () => tags[k++ % tags.length]!); };
    const bare = '<DTE version="1.0">';
    const defaultOnly = '<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0">';
    for (const tags of [[full, bare, bare], [bare], [defaultOnly, full, full, bare, defaultOnly]]) {
      const xml = retag(tags);
      const before = verifyPaths.pass;
      const { report, lazy } = await both(xml);
      expect(report.ok, `${tags.join(" ")}: ${report.message}`).toBe(true);
      expect(lazy).toBe(true);
      expect(verifyPaths.pass - before).toBe(count);
    }
    // A repeated tag that changes what was signed (the SetDTE's canonical form), and one that changes the
    // DTEs' namespace: refused, exactly as the tree refuses them (both() compares the reports).
    for (const other of ['<DTE version="2.0">', '<DTE xmlns="urn:other" version="1.0">']) {
      const { report, lazy } = await both(retag([full, other, other]));
      expect(report.ok, other).toBe(false);
      expect(lazy, other).toBe(false);
    }
  });

  it("envelopes verified at the same time (their DTEs in one pass, or over flat indexes with spare ones shared between envelopes): each its own whole-tree report", async () => {
    const inputs = [envelopeOf("EnvioDTE to SII"), envelopeOf("EnvioDTE to recipient"), envelopeOf("EnvioBOLETA")];
    const all = Object.values(features);
    inputs.push((await buildEnvioDte({ ...common(), dtes: all.filter((d) => d.envelope === "EnvioDTE") })).xmlString);
    const expected = await Promise.all(inputs.map((xml) => verifyInbound(xml, { ...SIM, lazy: false })));
    for (const [opts, path] of [[SIM, "pass"], [{ ...SIM, pass: false }, "flat"]] as const) {
      const before = verifyPaths[path];
      for (let round = 0; round < 3; round++) {
        const reports = await Promise.all([...inputs, ...inputs].map((xml) => verifyInbound(xml, opts)));
        reports.forEach((r, i) => expect(r).toEqual(expected[i % inputs.length]));
      }
      expect(verifyPaths[path] - before, path).toBeGreaterThan(100);
    }
  });

  it("the envelope's certificate re-wrapped with other whitespace, file after file: each passes with its signer, and the certificate cache stays bounded", async () => {
    const xml = envelopeOf("EnvioDTE to recipient");
    const open = "<X509Certificate>";
    const at = xml.lastIndexOf(open) + open.length;
    const end = xml.indexOf("</X509Certificate>", at);
    const cert = xml.slice(at, end).replace(/\s+/g, "");
    const expected = await verifyInbound(xml, SIM);
    expect(expected.ok, expected.message).toBe(true);
    for (let i = 0; i < 150; i++) {
      // Line breaks at another place each time: the same certificate, another text (outside the signed SetDTE).
      const cut = 10 + i;
      const rewrapped = xml.slice(0, at) + `${cert.slice(0, cut)}\n${cert.slice(cut)}` + xml.slice(end);
      const report = await verifyInbound(rewrapped, SIM);
      expect(report.ok, report.message).toBe(true);
      expect(report.envelopeSignature!.signer).toEqual(expected.envelopeSignature!.signer);
      expect(certificateCacheSize()).toBeLessThanOrEqual(64);
    }
  });

  it("a KeyValue that is not the certificate's key, between files whose KeyValue is: refused each time, the others pass", async () => {
    const xml = envelopeOf("EnvioDTE to recipient");
    const at = xml.lastIndexOf("<Modulus>") + "<Modulus>".length;
    const c = xml[at + 100]!;
    const other = xml.slice(0, at + 100) + (c === "A" ? "B" : "A") + xml.slice(at + 101);
    for (let i = 0; i < 3; i++) {
      expect((await verifyInbound(xml, SIM)).ok).toBe(true);
      const { report } = await both(other);
      expect(report.ok).toBe(false);
      expect(report.message).toBe("Envelope: KeyValue and X509Certificate hold different keys");
    }
  });

  it("tampered, re-signed, wrapped or malformed envelopes: the whole tree's exact report, never a pass", async () => {
    const dtes = Object.values(set.dtes).filter((d) => d.envelope === "EnvioDTE");
    const d33 = set.dtes["33"]!;
    const others = dtes.filter((d) => d !== d33);
    /** The envelope re-signed over a changed DTE 33: only that DTE's own checks can fail. */
    const resigned = async (element: string) => (await buildEnvioDte({ ...common(), dtes: [{ ...d33, element }, ...others] })).xmlString;
    const env = envelopeOf("EnvioDTE to SII");
    const other = await makeFakeCertificate({ rut: "22222222-2", bits: 1024 });
    const certB64 = /<X509Certificate>([\s\S]*?)<\/X509Certificate>/.exec(d33.element)![1]!;
    const cases: Record<string, string> = {
      "amount changed, envelope not re-signed": env.replace("<MntTotal>9926</MntTotal>", "<MntTotal>9927</MntTotal>"),
      "amount changed, envelope re-signed": await resigned(d33.element.replace("<MntTotal>9926</MntTotal>", "<MntTotal>9927</MntTotal>")),
      "certificate replaced": await resigned(d33.element.replace(certB64, btoa(String.fromCharCode(...other.certDer)))),
      "DTE signature removed": await resigned(d33.element.replace(/<Signature xmlns[\s\S]*<\/Signature>/, "")),
      "stamp removed": await resigned(d33.element.replace(/<TED version[\s\S]*<\/TED>\n/, "")),
      "envelope signature removed": env.replace(/<\/SetDTE>\n<Signature xmlns[\s\S]*<\/Signature>\n/, "</SetDTE>\n"),
      "the SetDTE's ID again inside a DTE (wrapping)": await resigned(d33.element.replace("</Documento>", '</Documento>\n<Extra ID="SetDoc"></Extra>')),
      "a DTE's ID twice (wrapping)": await resigned(d33.element.replace("</Documento>", '</Documento>\n<Extra ID="F1T33"></Extra>')),
      "no end tag for the last DTE": env.replace(/<\/DTE>\n<\/SetDTE>/, "\n</SetDTE>"),
      "a DTE's end tag misspelt": env.replace("</DTE>", "</DTEX>"),
      "not XML": "<EnvioDTE><SetDTE><DTE>",
      "a DTD, its entity unused": env.replace("<EnvioDTE", '<!DOCTYPE EnvioDTE [<!ENTITY x "y">]>\n<EnvioDTE'),
    };
    for (const [name, xml] of Object.entries(cases)) {
      const { report, lazy } = await both(xml);
      expect(report.ok, name).toBe(false);
      expect(lazy, name).toBe(false);
    }
    // Structures the one-DTE-at-a-time path does not take on: whatever the whole tree says, lazily nothing.
    const structural: Record<string, string> = {
      "a DTE inside a DTE (its end tag first)": await resigned(d33.element.replace("</Documento>", "</Documento>\n<X><DTE></DTE></X>")),
      "a second SetDTE": env.replace("</SetDTE>", '</SetDTE>\n<SetDTE ID="Other"><DTE></DTE></SetDTE>'),
    };
    for (const [name, xml] of Object.entries(structural)) expect((await both(xml)).lazy, name).toBe(false);
    // Simulator CAFs outside simulator mode (a CAF from an untrusted key): refused the same way.
    const { report } = await both(env, {});
    expect(report.documents.every((d) => d.failure === "CAF_UNKNOWN_IDK")).toBe(true);
  });

  it("an envelope's head written as the last one's or not (c14n.ts apexTag keeps the last SetDTE start tag): a change that reaches its canonical form is refused, another envelope's passes", async () => {
    // ASCII envelopes: their SetDTE digested from the bytes, behind the start tag apexTag gives.
    const dtes = await asciiFacturas();
    const env = (await buildEnvioDte({ ...common(), dtes })).xmlString;
    const resigned = (await buildEnvioDte({ ...common(), setId: "SetDoc2", dtes })).xmlString;
    expect(env + resigned).not.toMatch(/[^\x00-\x7f]/);
    const bytes = (s: string) => encodeLatin1(s);
    const unsigned: Record<string, string> = {
      "a namespace declared on the root": env.replace("<EnvioDTE xmlns=", '<EnvioDTE xmlns:x="urn:x" xmlns='),
      "xml:lang on the root (inherited by the SetDTE)": env.replace(' version="1.0" xsi:schemaLocation', ' version="1.0" xml:lang="es" xsi:schemaLocation'),
      "xml:lang on the SetDTE": env.replace('<SetDTE ID="SetDoc">', '<SetDTE ID="SetDoc" xml:lang="es">'),
      "the SetDTE's ID in single quotes": env.replace('<SetDTE ID="SetDoc">', "<SetDTE ID='SetDoc'>"),
    };
    expect(Object.values(unsigned).every((x) => x !== env)).toBe(true);
    for (const [name, xml] of Object.entries(unsigned)) {
      // Each right after the envelope it was made from (whose head is the kept one), from its bytes and from its text.
      const first = (await both(bytes(env))).report;
      expect([first.ok, first.failure, first.message]).toEqual([true, undefined, undefined]);
      const fromBytes = await both(bytes(xml));
      const fromText = await both(xml);
      // Quoting does not reach the canonical form: that one passes, the others are refused.
      const passes = name === "the SetDTE's ID in single quotes";
      expect([fromBytes.report.ok, fromText.report.ok], name).toEqual([passes, passes]);
      if (!passes) expect(fromBytes.report.failure, name).toBe("SIGNATURE_INVALID");
    }
    // Another sender's head (another SetDTE ID, signed as such) between two of the first: each passes in one pass.
    for (const xml of [env, resigned, env]) {
      const before = verifyPaths.sourceBytes;
      const { report, lazy } = await both(bytes(xml));
      expect([report.ok, lazy, verifyPaths.sourceBytes - before]).toEqual([true, true, 2]);
    }
  });

  it("received as bytes: ASCII files digest their canonical forms from the bytes (cuts, other quoting, CRLF and non-ASCII files from the text), every report the whole tree's", async () => {
    const dtes = await asciiFacturas();
    const env = (await buildEnvioDte({ ...common(), dtes })).xmlString;
    expect(env).not.toMatch(/[^\x00-\x7f]/);
    const cases: [string, Uint8Array | ArrayBuffer, boolean][] = [
      ["the engine's envelope (ISO-8859-1 bytes)", encodeLatin1(env), true],
      ["the same as UTF-8 bytes", utf8.encode(env), true],
      ["the same as an ArrayBuffer", encodeLatin1(env).buffer, true],
      ["the same at an odd offset of a larger buffer", (() => { const b = new Uint8Array(env.length + 3); b.set(encodeLatin1(env), 1); return b.subarray(1, env.length + 1); })(), true],
      ["a redundant declaration inside a DTE (a cut)", encodeLatin1(env.replace("<Encabezado>", '<Encabezado xmlns="http://www.sii.cl/SiiDte">')), true],
      ["a redundant declaration inside the Caratula (a cut)", encodeLatin1(env.replace("<RutEmisor>", '<RutEmisor xmlns="http://www.sii.cl/SiiDte">')), true],
      ["CRLF line ends", encodeLatin1(env.replace(/\n/g, "\r\n")), false],
      ["a UTF-8 byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, ...utf8.encode(env)]), false],
    ];
    for (const [name, xml, fromBytes] of cases) {
      const before = verifyPaths.sourceBytes;
      const { report, lazy } = await both(xml);
      expect(report.ok, `${name}: ${report.message}`).toBe(true);
      expect(lazy, name).toBe(true);
      expect(verifyPaths.sourceBytes - before, name).toBe(fromBytes ? 2 : 0);
    }
    // A tampered DTE received as bytes: refused with the whole tree's report.
    const tampered = encodeLatin1(env.replace("<MntTotal>", "<MntTotal>1"));
    const { report } = await both(tampered);
    expect(report.ok).toBe(false);
  });

  it("every envelope the engine makes received as ISO-8859-1 bytes (accented ones among them): the ASCII ones digested from the bytes, the others from the text, each the whole tree's report", async () => {
    const all = Object.values(features);
    const inputs = [envelopeOf("EnvioDTE to SII"), envelopeOf("EnvioBOLETA")];
    inputs.push((await buildEnvioDte({ ...common(), dtes: all.filter((d) => d.envelope === "EnvioDTE") })).xmlString);
    inputs.push((await buildEnvioBoleta({ ...common(), dtes: all.filter((d) => d.envelope === "EnvioBOLETA") })).xmlString);
    let ascii = 0;
    const before = verifyPaths.sourceBytes;
    for (const xml of inputs) {
      const bytes = encodeLatin1(xml);
      if (isAscii(bytes)) ascii++;
      expect(isAscii(bytes)).toBe(!/[^\x00-\x7f]/.test(xml));
      const { report, lazy } = await both(bytes);
      expect(report.ok, report.message).toBe(true);
      expect(lazy).toBe(true);
    }
    expect(verifyPaths.sourceBytes - before).toBe(ascii);
  });

  it("an ASCII envelope with a control character XML forbids: the whole tree's report, never verified lazily or from its bytes", async () => {
    const xml = envelopeOf("EnvioDTE to SII");
    for (const control of ["\x01", "\x0B", "\x1F"]) {
      for (const [from, to] of [["<MntTotal>", `<MntTotal>${control}`], ["</Caratula>", `${control}</Caratula>`], ["<SignatureValue>", `<SignatureValue>${control}`]] as const) {
        const bytes = encodeLatin1(xml.replace(from, to));
        const before = verifyPaths.sourceBytes;
        const { report, lazy } = await both(bytes);
        // xmldom reads the character (the text or signature it lands in then fails); the lazy parse never takes it.
        expect(report.ok).toBe(false);
        expect(lazy).toBe(false);
        expect(verifyPaths.sourceBytes).toBe(before);
      }
    }
  });

  it("envelopes received as bytes verified at the same time (their Documentos and SetDTEs digested from one scratch buffer), tampered ones among them: each its own whole-tree report", async () => {
    const plain = { issuer: { ...issuer, tax_information: { ...issuer.tax_information, activity: "Desarrollo de software" } }, recipient: { ...recipient, legal_name: "COMERCIAL NANDU LIMITADA", address: { country: "CL", city: "Nunoa", address: "Irarrazaval 2401" }, tax_information: { activity: "Comercio" } } };
    const asciiEnvelope = async (folios: number[]) => {
      const dtes = [];
      for (const folio of folios) {
        const document = computeDocument({ invoice_type: "33", invoice_date: "2026-11-20 10:30:00", ...plain, items: [{ quantity: folio, unit_price: 990 + folio, description: `Servicio ${folio}` }] } as InvoiceInput);
        dtes.push(await buildSignedDte({ document, folio, caf: set.cafs[33]!, signer: set.signer, timestamp: "2026-11-20T10:30:05" }));
      }
      return (await buildEnvioDte({ ...common(), dtes })).xmlString;
    };
    const one = await asciiEnvelope([43]);
    const three = await asciiEnvelope([44, 45, 46]);
    const accented = envelopeOf("EnvioDTE to recipient");
    const inputs = [one, three, accented, one.replace("<MntTotal>", "<MntTotal>1"), three.replace(/<MntNeto>/g, "<MntNeto>9"), accented.replace("<MntTotal>", "<MntTotal>2")].map((xml) => encodeLatin1(xml));
    expect(inputs.slice(0, 2).every((b) => isAscii(b))).toBe(true);
    expect(isAscii(inputs[2]!)).toBe(false);
    const expected: Awaited<ReturnType<typeof verifyInbound>>[] = [];
    for (const xml of inputs) expected.push(await verifyInbound(xml, { ...SIM, lazy: false }));
    expect(expected.map((r) => r.ok)).toEqual([true, true, true, false, false, false]);
    for (const [opts, path] of [[SIM, "pass"], [{ ...SIM, pass: false }, "flat"]] as const) {
      const before = verifyPaths[path];
      const bytesBefore = verifyPaths.sourceBytes;
      for (let round = 0; round < 3; round++) {
        const reports = await Promise.all([...inputs, ...inputs].map((xml) => verifyInbound(xml, opts)));
        reports.forEach((r, i) => expect(r).toEqual(expected[i % inputs.length]));
      }
      expect(verifyPaths[path] - before, path).toBeGreaterThanOrEqual(3 * 2 * (1 + 3));
      expect(verifyPaths.sourceBytes - bytesBefore).toBeGreaterThanOrEqual(3 * 2 * 2);
    }
  });

  it("rewrites that keep the canonical form still verify: redundant declarations lazily (cut), others with the whole tree", async () => {
    const env = envelopeOf("EnvioDTE to recipient");
    // A cut is outside the one-pass reader's form: its DTE goes to the flat index; CRLF is read as LF.
    const lazily = {
      "a redundant default namespace inside a DTE": [env.replace("<Encabezado>", '<Encabezado xmlns="http://www.sii.cl/SiiDte">'), "flat"],
      "a redundant xsi declaration inside a DTE": [env.replace("<Totales>", '<Totales xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'), "flat"],
      "CRLF line ends": [env.replace(/\n/g, "\r\n"), "pass"],
    } as const;
    for (const [name, [xml, path]] of Object.entries(lazily)) {
      const before = verifyPaths[path];
      const { report, lazy } = await both(xml);
      expect(report.ok, `${name}: ${report.message}`).toBe(true);
      expect(lazy, name).toBe(true);
      expect(verifyPaths[path], name).toBeGreaterThan(before);
    }
    const whole = {
      "single quotes and spaces in a start tag": env.replace('<Documento ID="F1T33">', "<Documento  ID='F1T33' >"),
      "an end tag with a space": env.replace("</Encabezado>", "</Encabezado >"),
      "a character reference in text": env.replace("<RznSoc>EMPRESA", "<RznSoc>&#69;MPRESA"),
    };
    for (const [name, xml] of Object.entries(whole)) {
      const before = verifyPaths.whole;
      const { report, lazy } = await both(xml);
      expect(report.ok, `${name}: ${report.message}`).toBe(true);
      expect(lazy, name).toBe(false);
      // Each of both()'s three verifications ends with the whole tree.
      expect(verifyPaths.whole, name).toBe(before + 3);
    }
  });
});

function elements(doc: XDocument | XNode): XElement[] {
  const out: XElement[] = [];
  const walk = (n: XNode) => {
    for (let c = n.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) (out.push(c as XElement), walk(c));
  };
  walk(doc as XNode);
  return out;
}

/** Random XML around the fast parser's subset: namespaces declared, re-declared and redundant, attribute order and quoting, empty elements, escapes. */
const space = fc.constantFrom(" ", " ", " ", "  ", "\n", "\t");
const value = fc.constantFrom("1", "F1T33", "1.0", "a&amp;b", "&lt;x", "&quot;q&quot;", "x > y", "ñandú", "&#65;", "&#233;", "");
const uri = fc.constantFrom("urn:a", "urn:b", "http://www.sii.cl/SiiDte", "");
const attribute = fc.oneof(
  fc.record({ name: fc.constantFrom("ID", "version", "z", "a", "q:w", "p:v"), value, quote: fc.constantFrom('"', '"', "'"), before: space }),
  fc.record({ name: fc.constantFrom("xmlns", "xmlns:p", "xmlns:q"), value: uri, quote: fc.constantFrom('"', '"', "'"), before: space }),
);
const text = fc.array(fc.constantFrom("x", "Santiago", " ", "\n", "&amp;", "&lt;", "&gt;", "&quot;", "&#65;", ">", "ñ", '"', "'"), { maxLength: 4 }).map((a) => a.join(""));
type Tree = { name: string; attrs: { name: string; value: string; quote: string; before: string }[]; close: string; empty: boolean; kids: (Tree | string)[] };
const { tree } = fc.letrec<{ tree: Tree; node: Tree | string }>((tie) => ({
  tree: fc.record({
    name: fc.constantFrom("a", "b", "DTE", "Documento", "p:x", "q:y"),
    attrs: fc.uniqueArray(attribute, { maxLength: 4, selector: (a) => a.name }),
    close: fc.constantFrom(">", ">", ">", " >", "\n>"),
    empty: fc.boolean(),
    kids: fc.array(tie("node"), { maxLength: 3 }),
  }),
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, text, tie("tree")),
}));
function write(t: Tree | string): string {
  if (typeof t === "string") return t;
  const attrs = t.attrs.map((a) => `${a.before}${a.name}=${a.quote}${a.name.startsWith("xmlns:") && a.value === "" ? "urn:z" : a.value}${a.quote}`).join("");
  if (t.empty && t.kids.length === 0) return `<${t.name}${attrs}/>`;
  return `<${t.name}${attrs}${t.close}${t.kids.map(write).join("")}</${t.name}>`;
}

describe("C14N from the source", () => {
  it("equals the reference canonicaliser on generated XML (every element as apex, with and without namespaces)", () => {
    let fromSource = 0;
    let compared = 0;
    fc.assert(
      fc.property(tree, (t) => {
        const xml = `<r xmlns:p="urn:p" xmlns:q="urn:q">\n${write(t)}\n</r>`;
        const fast = fastParse(xml);
        if (!fast) return;
        const reference = elements(parseXmlDom(xml));
        const mine = elements(fast as unknown as XDocument);
        expect(mine.length).toBe(reference.length);
        mine.forEach((e, i) => {
          if ((e as unknown as FElement).flags & BODY_CANONICAL) fromSource++;
          for (const opts of [{}, { stripNamespaces: true }]) {
            expect(canonicalize(e, opts)).toBe(canonicalizeReference(reference[i]!, opts));
            compared++;
          }
        });
      }),
      { numRuns: 400, seed: 12 },
    );
    // The generator reaches both paths: the source's own text and the tree walk.
    expect(fromSource).toBeGreaterThan(200);
    expect(compared - 2 * fromSource).toBeGreaterThan(200);
  });
});

describe("an envelope's Caratula read from its source", () => {
  const NAMES = ["RutEmisor", "FchResol", "NroResol"];
  const field = fc.record({
    name: fc.constantFrom("RutEmisor", "FchResol", "NroResol", "SubTotDTE", "x"),
    text: fc.constantFrom("", " 1 ", "76086428-5", "a&amp;b", "x > y", "\n"),
    form: fc.constantFrom("plain", "plain", "plain", "attribute", "self-closing", "nested", "prefixed", "end tag with a space"),
  });
  const write = (f: { name: string; text: string; form: string }) =>
    f.form === "attribute" ? `<${f.name} a="1">${f.text}</${f.name}>`
    : f.form === "self-closing" ? `<${f.name}/>`
    : f.form === "nested" ? `<${f.name}><TpoDTE>33</TpoDTE>${f.text}</${f.name}>`
    : f.form === "prefixed" ? `<p:${f.name} xmlns:p="urn:p">${f.text}</p:${f.name}>`
    : f.form === "end tag with a space" ? `<${f.name}>${f.text}</${f.name} >`
    : `<${f.name}>${f.text}</${f.name}>`;

  it("gives what its flat index gives, and records it seen the same way, or leaves it to the index", () => {
    let plain = 0;
    let indexed = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("\n", "", " "), field), { maxLength: 6 }), fc.constantFrom("", "<", "</x>"), (fields, tail) => {
        const content = fields.map(([ws, f]) => ws + write(f)).join("") + "\n" + tail;
        const xml = `<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula version="1.0">${content}</Caratula></SetDTE></EnvioDTE>`;
        const a = fastParseEnvelope(xml, true);
        const b = fastParseEnvelope(xml, true);
        if (!a || !b) return;
        const carA = childOf(childOf(a.documentElement!, "SetDTE"), "Caratula");
        const carB = childOf(childOf(b.documentElement!, "SetDTE"), "Caratula");
        const texts = plainChildTexts(carA, NAMES);
        const x = indexElement(carB);
        if (texts === null) {
          expect(carA.flags).toBe(carB.flags);
          expect(a.unexpanded).toBe(1);
          indexed++;
          return;
        }
        // The source reader takes only what the index takes.
        expect(x).not.toBeNull();
        commitIndex(x!);
        expect(texts).toEqual(NAMES.map((n) => childTextOf(x!, 0, n)));
        expect(carA.flags).toBe(carB.flags);
        expect(a.unexpanded).toBe(b.unexpanded);
        expect(a.cuts).toEqual(b.cuts);
        expect([...a.idsSeen]).toEqual([...b.idsSeen]);
        plain++;
      }),
      { numRuns: 500, seed: 5 },
    );
    expect(plain).toBeGreaterThan(30);
    expect(indexed).toBeGreaterThan(50);
  });
});

/**
 * The flat index (flatxml.ts build) against the tree the fast parser expands (fastxml.ts expand) for
 * the same OPAQUE DTE: built for exactly the same content, and then the same elements, attributes,
 * flags, texts, cuts and IDs. Text runs long and short (build reads a short one character by
 * character and searches a long one), attributes in C14N's form and others, and the written XML
 * with one character deleted or inserted.
 */
describe("a DTE's flat index", () => {
  const long = fc.tuple(fc.nat(90), fc.constantFrom("x", ">", "&amp;", "&bad;", "]]>", "\n", "<")).map(([n, t]) => "y".repeat(n) + t);
  const { tree: dteTree } = fc.letrec<{ tree: Tree; node: Tree | string }>((tie) => ({
    tree: fc.record({
      name: fc.constantFrom("a", "b", "Documento", "p:x", "q:y"),
      attrs: fc.uniqueArray(attribute, { maxLength: 4, selector: (a) => a.name }),
      close: fc.constantFrom(">", ">", ">", " >", "\n>", "/>"),
      empty: fc.boolean(),
      kids: fc.array(tie("node"), { maxLength: 3 }),
    }),
    node: fc.oneof({ depthSize: "small", withCrossShrink: true }, text, long, tie("tree")),
  }));
  const edit = fc.option(fc.tuple(fc.nat(), fc.constantFrom("", "<", ">", "/", "\"", "=", " ", "&", "a", ":")), { freq: 2 });

  it("is built for what expand builds, and then holds what the tree holds", () => {
    let built = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(dteTree, { minLength: 1, maxLength: 3 }), edit, (trees, change) => {
        let content = `\n${trees.map(write).join("\n")}\n`;
        if (change) {
          const at = change[0] % content.length;
          content = content.slice(0, at) + change[1] + content.slice(at + (change[1] === "" ? 1 : 0));
        }
        const xml = `<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:p="urn:p" xmlns:q="urn:q"><SetDTE ID="S"><DTE version="1.0">${content}</DTE></SetDTE></EnvioDTE>`;
        const a = fastParseEnvelope(xml, true);
        const b = fastParseEnvelope(xml, true);
        if (!a || !b) return;
        const dteA = childOf(childOf(a.documentElement!, "SetDTE"), "DTE");
        const dteB = childOf(childOf(b.documentElement!, "SetDTE"), "DTE");
        const expanded = expand(dteA);
        const x = indexElement(dteB);
        expect(x !== null).toBe(expanded);
        if (!x) {
          refused++;
          return;
        }
        const els = [dteA, ...elements(dteA as unknown as XNode)] as unknown as FElement[];
        expect(x.n).toBe(els.length);
        els.forEach((e, i) => {
          expect([x.qname[i], x.local[i], x.ns[i], x.flags[i]]).toEqual([e.nodeName, e.localName, e.namespaceURI, e.flags & 15]);
          expect(i === 0 ? -1 : x.parent[i]).toBe(i === 0 ? -1 : els.indexOf(e.parentNode as FElement));
          const attrs = Array.from({ length: e.attributes.length }, (_, k) => e.attributes.item(k)!).map((t) => [t.name, t.value, t.localName, t.namespaceURI]);
          expect(Array.from({ length: x.attrN[i]! }, (_, k) => x.attrAt[i]! + k).map((k) => [x.aName[k], x.aValue[k], x.aLocal[k], x.aNs[k]])).toEqual(attrs);
          expect(textOf(x, i)).toBe(e.textContent);
        });
        commitIndex(x);
        expect(dteB.flags).toBe(dteA.flags);
        expect([b.cuts, [...b.idsSeen], b.duplicateIds, b.unexpanded]).toEqual([a.cuts, [...a.idsSeen], a.duplicateIds, a.unexpanded]);
        built++;
      }),
      { numRuns: 1500, seed: 11 },
    );
    expect(built).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(100);
  });
});

const childOf = (el: FElement, local: string) => {
  for (let c = el.firstChild; c; c = c.nextSibling) if ((c as FElement).localName === local) return c as FElement;
  throw new Error(`no ${local}`);
};

describe("C14N from the source bytes", () => {
  it("equals the canonical text's UTF-8 on generated XML, with the document's bytes (ASCII) and without, tree and flat index", () => {
    let fromBytes = 0;
    fc.assert(
      fc.property(tree, fc.nat(3), (t, offset) => {
        const xml = `<r xmlns:p="urn:p" xmlns:q="urn:q">\n${write(t)}\n</r>`;
        const fast = fastParse(xml);
        if (!fast) return;
        const encoded = utf8.encode(xml);
        // At an offset of a larger buffer: the bytes need not start a word.
        const padded = new Uint8Array(encoded.length + offset);
        padded.set(encoded, offset);
        const bytes = padded.subarray(offset);
        fast.bytes = isAscii(bytes) ? bytes : null;
        const x = indexElement(fast.documentElement!)!;
        for (let i = 0; i < x.n; i++) {
          const text = flatCanonical(x, i, false);
          expect(flatCanonicalUtf8(x, i)).toEqual(text === null ? null : utf8.encode(text));
          if (text !== null && fast.bytes) fromBytes++;
        }
        for (const e of elements(fast as unknown as XDocument)) {
          const text = sourceCanonical(e);
          expect(sourceCanonicalUtf8(e)).toEqual(text === null ? null : utf8.encode(text));
        }
      }),
      { numRuns: 300, seed: 7 },
    );
    expect(fromBytes).toBeGreaterThan(100);
  });
});

/**
 * The schema walk over a flat index (dteSchemaProblemsFlat) against the tree walk (dteSchemaProblems,
 * the one the simulator runs): on every DTE the engine makes and on mutations of them (an element
 * removed, repeated, moved, renamed or put in another namespace; a value replaced; an attribute
 * added; text between elements), the same problems, at the same paths, with the same words.
 */
describe("the schema walk over a flat index", () => {
  function bothWalks(xml: string, boleta: boolean): { tree: string[]; flat: string[] } | null {
    const doc = fastParse(xml);
    const x: FlatIndex | null = doc && indexElement(doc.documentElement!);
    if (!doc || !x) return null;
    return { tree: dteSchemaProblems(doc.documentElement as unknown as XElement, { boleta }), flat: dteSchemaProblemsFlat(x, { boleta }) };
  }

  it("equals the tree walk on every DTE the engine makes and on generated mutations of them", () => {
    const dtes = [...Object.values(set.dtes), ...Object.values(features)];
    for (const d of dtes) {
      const r = bothWalks(d.element, d.envelope === "EnvioBOLETA")!;
      expect(r.flat).toEqual(r.tree);
      expect(r.tree).toEqual([]);
    }
    let compared = 0;
    let invalid = 0;
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }), (pick, mutations) => {
        const d = dtes[pick % dtes.length]!;
        const xml = mutations.reduce(mutate, d.element);
        const r = bothWalks(xml, d.envelope === "EnvioBOLETA");
        if (!r) return;
        expect(r.flat).toEqual(r.tree);
        compared++;
        if (r.tree.length) invalid++;
      }),
      { numRuns: 600, seed: 12 },
    );
    // Most mutations stay inside the fast parser's subset, and most of those break the schema.
    expect(compared).toBeGreaterThan(450);
    expect(invalid).toBeGreaterThan(300);
  });
});
