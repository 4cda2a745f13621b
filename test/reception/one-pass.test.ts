/**
 * A received DTE read and verified in one pass over its source (documents/dte-reader.ts,
 * exchange/verify-pass.ts): what the reader takes is valid by the schema walks and reads as their
 * flat index does (fields, spans, the XMLDSig's parts), on every DTE the engine makes and on
 * generated mutations of them; what it does not take goes to the flat index and the tree, with the
 * same reports (lazy-verify.test.ts compares the three paths on every envelope it verifies).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { SignedDte } from "../../src/countries/cl/documents/dte";
import { FIELDS, readDte, type DteReading } from "../../src/countries/cl/documents/dte-reader";
import { dteSchemaProblems, dteSchemaProblemsFlat } from "../../src/countries/cl/documents/dte-schema";
import { buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { verifyInbound, verifyPaths, type InboundOptions } from "../../src/countries/cl/exchange/verify";
import { fastParse, fastParseEnvelope, type FElement } from "../../src/countries/cl/xml/fastxml";
import { child, childTextOf, indexElement, textOf, type FlatIndex } from "../../src/countries/cl/xml/flatxml";
import { encodeLatin1, flatten, isAscii, type XElement } from "../../src/countries/cl/xml/xml";
import { signXml } from "../../src/countries/cl/xml/xmldsig";
import { mutate, mutation } from "../helpers/dte-mutations";
import { buildFeatureDtes } from "../helpers/cl-feature-samples";
import { buildSamples, HOLDER_RUT, ISSUER_RUT, type SampleSet } from "../helpers/cl-samples";

let set: SampleSet;
let features: Record<string, SignedDte>;
let dtes: SignedDte[];
const SIM: InboundOptions = { mode: "simulator" };

beforeAll(async () => {
  set = await buildSamples();
  features = await buildFeatureDtes(set);
  dtes = [...Object.values(set.dtes), ...Object.values(features)];
});

/** A DTE's text read three ways: in one pass, over its flat index (with the schema walk), over its tree (the schema walk). */
function readings(xml: string) {
  const doc = fastParse(xml);
  const el = doc?.documentElement as FElement | undefined;
  const x = el ? indexElement(el) : null;
  if (!doc || !el || !x) return null;
  return { reading: readDte(el), x, flat: dteSchemaProblemsFlat(x), tree: dteSchemaProblems(el as unknown as XElement) };
}

/** The paths the verification reads each field at, as verify-flat.ts finds them over the index. */
function expectedValues(x: FlatIndex, branch: number): (string | undefined)[] {
  const at = (i: number, ...path: string[]) => path.reduce((e, n) => (e < 0 ? -1 : child(x, e, n)), i);
  const text = (i: number, ...path: string[]) => {
    const parent = at(i, ...path.slice(0, -1));
    return parent < 0 ? undefined : childTextOf(x, parent, path[path.length - 1]!);
  };
  const enc = (p: string, f: string) => text(branch, "Encabezado", p, f);
  const dd = (f: string) => text(branch, "TED", "DD", f);
  const byField: Record<(typeof FIELDS)[number], string | undefined> = {
    TipoDTE: enc("IdDoc", "TipoDTE"), Folio: enc("IdDoc", "Folio"), FchEmis: enc("IdDoc", "FchEmis"), RUTEmisor: enc("Emisor", "RUTEmisor"),
    RUTRecep: enc("Receptor", "RUTRecep"), RznSocRecep: enc("Receptor", "RznSocRecep"), MntTotal: enc("Totales", "MntTotal"),
    NmbItem: text(branch, "Detalle", "NmbItem"), RE: dd("RE"), TD: dd("TD"), F: dd("F"), FE: dd("FE"), RR: dd("RR"), RSR: dd("RSR"),
    MNT: dd("MNT"), IT1: dd("IT1"), TSTED: dd("TSTED"), FRMT: text(branch, "TED", "FRMT"),
  };
  return FIELDS.map((f) => byField[f]);
}

/** What the reader gave against the flat index of the same DTE. */
function expectSameAsIndex(r: DteReading, x: FlatIndex): void {
  let branch = -1;
  for (let c = x.first[0]!; c >= 0; c = x.next[c]!) if (["Documento", "Exportaciones", "Liquidacion"].includes(x.local[c]!)) branch = c;
  expect(r.branch).toBe(x.local[branch]);
  expect(r.branchContent).toEqual([x.cs[branch], x.ce[branch]]);
  expect(r.id).toBe(x.aValue[x.attrAt[branch]!]);
  expect(r.values).toEqual(expectedValues(x, branch));
  const at = (...path: string[]) => path.reduce((e, n) => (e < 0 ? -1 : child(x, e, n)), branch);
  for (const [span, path] of [["DD", ["TED", "DD"]], ["CAF", ["TED", "DD", "CAF"]]] as const) {
    const i = at(...path);
    expect(r.spans[span]).toEqual([x.start[i], x.end[i]]);
  }
  const dd = x.doc.source.slice(r.spans.DD![0], r.spans.DD![1]);
  expect(r.ddFlat).toBe(flatten(dd) === dd);
  const sig = child(x, 0, "Signature");
  const si = child(x, sig, "SignedInfo");
  const s = (...path: string[]) => textOf(x, path.reduce((e, n) => child(x, e, n), sig));
  expect(r.signature).toEqual({
    signedInfoContent: [x.cs[si], x.ce[si]],
    uri: x.aValue[x.attrAt[child(x, si, "Reference")]!],
    digestValue: s("SignedInfo", "Reference", "DigestValue"),
    signatureValue: s("SignatureValue"),
    modulus: s("KeyInfo", "KeyValue", "RSAKeyValue", "Modulus"),
    exponent: s("KeyInfo", "KeyValue", "RSAKeyValue", "Exponent"),
    certificate: s("KeyInfo", "X509Data", "X509Certificate"),
  });
}

describe("a DTE read in one pass", () => {
  it("reads every DTE the engine makes that the schema walks find valid, as its flat index holds it", () => {
    let read = 0;
    for (const d of dtes) {
      const r = readings(d.element)!;
      expect(r.flat).toEqual(r.tree);
      // Boletas are checked against their own schema, not DTE_v10's; the reader and the walks agree on them too.
      expect(r.reading !== null, d.element.slice(0, 200)).toBe(r.flat.length === 0);
      if (r.reading) {
        expectSameAsIndex(r.reading, r.x);
        read++;
      }
    }
    expect(read).toBeGreaterThan(25);
  });

  it("takes only what the schema walks find valid, on generated mutations, and then reads what the index holds", () => {
    let taken = 0;
    let refused = 0;
    let invalid = 0;
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }), (pick, mutations) => {
        const d = dtes[pick % dtes.length]!;
        const r = readings(mutations.reduce(mutate, d.element));
        if (!r) return;
        if (r.tree.length) invalid++;
        if (r.reading === null) {
          refused++;
          return;
        }
        expect(r.tree).toEqual([]);
        expect(r.flat).toEqual([]);
        expectSameAsIndex(r.reading, r.x);
        taken++;
      }),
      { numRuns: 600, seed: 29 },
    );
    // Some mutations keep a DTE valid (a repeated line, white space): read; most break it: refused.
    expect(taken).toBeGreaterThan(20);
    expect(invalid).toBeGreaterThan(300);
    expect(refused).toBeGreaterThanOrEqual(invalid);
  });

  it("reads a CAF it has just read in full as it read it then (span, white space), and any other CAF in full", () => {
    const d = set.dtes[33]!.element;
    const spaced = d.replace(/<CAF version="1.0">[\s\S]*<\/CAF>/, (caf) => caf.replace(/><(?!\/)/g, ">\n<"));
    const changed = d.replace(/<IDK>(\d+)<\/IDK>/, "<IDK>x$1</IDK>");
    expect(spaced).not.toBe(d);
    expect(changed).not.toBe(d);
    for (const xml of [d, d, spaced, spaced, d, changed, d, changed]) {
      const r = readings(xml)!;
      expect(r.reading !== null).toBe(r.flat.length === 0);
      if (r.reading) expectSameAsIndex(r.reading, r.x);
    }
    expect(readings(spaced)!.reading!.ddFlat).toBe(false);
    expect(readings(d)!.reading!.ddFlat).toBe(true);
    expect(readings(changed)!.reading).toBeNull();
  });

  it("reads a leaf, a block (Emisor, Receptor), a KeyInfo or a run of the XMLDSig written as the last one read as read then, and any other in full: a change in one is read, or refused", () => {
    const d = set.dtes[33]!.element;
    const emisor = /<Emisor>[\s\S]*?<\/Emisor>/.exec(d)![0];
    const receptor = /<Receptor>[\s\S]*?<\/Receptor>/.exec(d)![0];
    const variants = {
      "another issuer's name": d.replace(emisor, emisor.replace(/<RznSoc>[^<]*/, "<RznSoc>OTRA EMPRESA SPA")),
      "another receiver": d.replace(receptor, receptor.replace(/<RUTRecep>[^<]*/, "<RUTRecep>11111111-1").replace(/<RznSocRecep>[^<]*/, "<RznSocRecep>OTRO CLIENTE")),
      "the receiver's block spaced": d.replace(receptor, receptor.replace(/>\n</g, ">\n  <")),
      "the certificate wrapped otherwise": d.replace(/<X509Certificate>([^<]{64})/, "<X509Certificate>$1\n"),
      "the modulus wrapped otherwise": d.replace(/<Modulus>([^<]{40})/, "<Modulus>$1\n"),
      "a folio of other digits": d.replace(/<Folio>\d+<\/Folio>/, "<Folio>987654</Folio>"),
      "the Reference without Transforms": d.replace(/<Transforms>[\s\S]*?<\/Transforms>\n?/, ""),
      "the SignedInfo spaced otherwise": d.replace("<SignedInfo>\n<CanonicalizationMethod", "<SignedInfo>\n  <CanonicalizationMethod"),
      "the SignatureValue on its own line": d.replace("</SignedInfo>\n<SignatureValue>", "</SignedInfo>\n\n<SignatureValue>"),
      "another URI": d.replace(/URI="#([^"]+)"/, 'URI="#X$1"'),
    };
    const refused = {
      "an issuer's RUT not a RUT, in a block read before": d.replace(emisor, emisor.replace(/<RUTEmisor>[^<]*/, "<RUTEmisor>76086428-X!")),
      "a receiver's name too long": d.replace(/<RznSocRecep>[^<]*/, `<RznSocRecep>${"X".repeat(120)}`),
      "a folio that is not a number": d.replace(/<Folio>\d+<\/Folio>/, "<Folio>12a</Folio>"),
      "a second transform, another algorithm": d.replace("</Transform>", '</Transform>\n<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></Transform>'),
      "another signature method": d.replace("xmldsig#rsa-sha1", "xmldsig-more#rsa-sha256"),
      "an attribute on the Reference": d.replace(/<Reference URI="([^"]+)">/, '<Reference URI="$1" Id="r">'),
    };
    const escaped = d.replace(/<GiroEmis>[^<]*/, "<GiroEmis>A&amp;B");
    const bare = escaped.replace("A&amp;B", "A&B");
    for (const [name, xml] of Object.entries(variants)) expect(xml, name).not.toBe(d);
    // Each variant between copies of the DTE (the memos hold the DTE's, then the variant's), twice.
    for (const xml of [...Object.values(variants), ...Object.values(variants)]) {
      for (const text of [d, xml, xml, d]) {
        const r = readings(text)!;
        expect(r.flat, text.slice(0, 80)).toEqual([]);
        expect(r.reading, text.slice(0, 80)).not.toBeNull();
        expectSameAsIndex(r.reading!, r.x);
      }
    }
    for (const [name, xml] of Object.entries(refused)) {
      for (const text of [d, xml, d, xml]) {
        const r = readings(text);
        if (text === d) expect(r!.reading, name).not.toBeNull();
        else expect(r?.reading ?? null, name).toBeNull();
      }
    }
    // A value read as "A&B" from "A&amp;B" is never compared in place: a bare "&" after it is refused.
    // (Inside an envelope parsed lazily, where the reader is the first to read a DTE's content.)
    const doc = fastParseEnvelope(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S">${escaped}${bare}${escaped}</SetDTE></EnvioDTE>`)!;
    const [first, second, third] = doc.opaque;
    expect(readDte(first!)).not.toBeNull();
    expect(readDte(second!)).toBeNull();
    expect(readDte(third!)).not.toBeNull();
  });

  it("refuses what is valid but not canonical as written, or outside its form of the XMLDSig", () => {
    const d = set.dtes[33]!.element;
    const r = readings(d)!;
    expect(r.reading).not.toBeNull();
    const variants = {
      "single quotes": d.replace(/<Documento ID="([^"]+)">/, "<Documento ID='$1'>"),
      "a space before >": d.replace("<Encabezado>", "<Encabezado >"),
      "an empty-element tag": d.replace(/<CanonicalizationMethod Algorithm="([^"]+)"><\/CanonicalizationMethod>/, '<CanonicalizationMethod Algorithm="$1"/>'),
      "a character reference": d.replace("<TipoDTE>33", "<TipoDTE>&#51;3"),
      "&quot; in text": d.replace("<GiroEmis>", "<GiroEmis>&quot;"),
      "a redundant namespace declaration": d.replace("<Encabezado>", '<Encabezado xmlns="http://www.sii.cl/SiiDte">'),
      "a prefixed Signature": d.replace('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">').replace("</Signature>", "</ds:Signature>"),
      "KeyInfo's children the other way round": d.replace(/(<KeyValue>[\s\S]*<\/KeyValue>)\n?(<X509Data>[\s\S]*<\/X509Data>)/, "$2\n$1"),
      "a comment": d.replace("<Encabezado>", "<Encabezado><!-- x -->"),
      "exclusive C14N": d.replace(/REC-xml-c14n-20010315/g, "xml-exc-c14n#"),
    };
    for (const [name, xml] of Object.entries(variants)) {
      expect(xml, name).not.toBe(d);
      const v = readings(xml);
      expect(v?.reading ?? null, name).toBeNull();
    }
  });
});

describe("a DTE verified in one pass", () => {
  const common = () => ({ issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer });

  it("is how an envelope's DTEs are verified once their CAFs are known, with the reports of the flat index and the tree", async () => {
    const all = Object.values(features).filter((d) => d.envelope === "EnvioDTE");
    const xml = (await buildEnvioDte({ ...common(), dtes: all })).xmlString;
    await verifyInbound(xml, SIM); // the CAFs verified once in this isolate
    const before = { ...verifyPaths };
    const report = await verifyInbound(xml, SIM);
    expect(report.ok, report.message).toBe(true);
    expect(verifyPaths.pass - before.pass).toBe(all.length);
    expect(verifyPaths.flat - before.flat).toBe(0);
    expect(report).toEqual(await verifyInbound(xml, { ...SIM, pass: false }));
    expect(report).toEqual(await verifyInbound(xml, { ...SIM, lazy: false }));
  });

  it("verifies a DTE whose stamp is written over several lines (its DD flattened, as the SII signs it) and one received as ISO-8859-1 bytes with accents", async () => {
    const d = set.dtes[33]!;
    const unsigned = d.element.replace(/\n?<Signature xmlns[\s\S]*<\/Signature>\n?/, "");
    const spaced = unsigned.replace(/<DD>[\s\S]*<\/DD>/, (dd) => dd.replace(/></g, ">\n  <"));
    expect(spaced).not.toBe(unsigned);
    const element = await signXml(spaced, d.id, set.signer);
    const xml = (await buildEnvioDte({ ...common(), dtes: [{ ...d, element }] })).xmlString;
    const accented = set.samples.find((s) => s.name === "EnvioDTE to recipient")!.xmlString;
    for (const input of [xml, encodeLatin1(xml), encodeLatin1(accented)]) {
      await verifyInbound(input, SIM);
      const before = verifyPaths.pass;
      const report = await verifyInbound(input, SIM);
      expect(report.ok, report.message).toBe(true);
      expect(verifyPaths.pass - before).toBe(report.documents.length);
      expect(report).toEqual(await verifyInbound(input, { ...SIM, lazy: false }));
    }
    expect(isAscii(encodeLatin1(accented))).toBe(false);
  });

  it("holds the stamp to the document: a receiver's name or first item that differs fails on every path; one that differs only in quotes and spaces, as issuers write them, passes", async () => {
    const d = set.dtes[33]!;
    const unsigned = d.element.replace(/\n?<Signature xmlns[\s\S]*<\/Signature>\n?/, "");
    const name = /<RznSocRecep>([^<]*)<\/RznSocRecep>/.exec(unsigned)![1]!;
    const item = /<NmbItem>([^<]*)<\/NmbItem>/.exec(unsigned)![1]!;
    const variant = async (rewrite: (xml: string) => string) => {
      const element = await signXml(rewrite(unsigned), d.id, set.signer);
      return (await buildEnvioDte({ ...common(), dtes: [{ ...d, element }] })).xmlString;
    };
    const cases: [string, string, string | null][] = [
      ["another receiver", await variant((x) => x.replace(`<RznSocRecep>${name}`, "<RznSocRecep>OTRA EMPRESA SPA")), "RSR differs from RznSocRecep"],
      ["another first item", await variant((x) => x.replace(`<NmbItem>${item}`, "<NmbItem>Otro producto")), "IT1 differs from the first NmbItem"],
      ["the receiver's name with quotes and a double space", await variant((x) => x.replace(`<RznSocRecep>${name}`, `<RznSocRecep>&quot;${name.replace(" ", "  ")}&quot;`)), null],
      ["the receiver's name with a double space", await variant((x) => x.replace(`<RznSocRecep>${name}`, `<RznSocRecep>${name.replace(" ", "  ")}`)), null],
    ];
    for (const [label, xml, mismatch] of cases) {
      await verifyInbound(xml, SIM);
      const before = verifyPaths.pass;
      const report = await verifyInbound(xml, SIM);
      expect(report, label).toEqual(await verifyInbound(xml, { ...SIM, pass: false }));
      expect(report, label).toEqual(await verifyInbound(xml, { ...SIM, lazy: false }));
      if (mismatch === null) {
        expect(report.ok, `${label}: ${report.message}`).toBe(true);
        // `&quot;` is outside the one-pass reader's form (the tree reads it); the double space alone is not.
        expect(verifyPaths.pass - before, label).toBe(label.includes("quotes") ? 0 : 1);
        continue;
      }
      expect(report.ok, label).toBe(false);
      expect(report.documents[0]!.failure, label).toBe("TED_INVALID");
      expect(report.documents[0]!.message, label).toContain(mismatch);
      expect(verifyPaths.pass, label).toBe(before);
    }
  });

  it("hands a DTE it cannot pass to the flat index and the tree: tampered, re-signed by another key, its stamp or CAF changed, each the whole tree's report", async () => {
    const base = (await buildEnvioDte({ ...common(), dtes: [set.dtes[33]!, set.dtes[34]!] })).xmlString;
    await verifyInbound(base, SIM);
    const tampered = {
      "an amount": base.replace("<MntTotal>", "<MntTotal>1"),
      "the stamp's folio": base.replace(/<DD><RE>([^<]+)<\/RE><TD>33<\/TD><F>(\d+)<\/F>/, "<DD><RE>$1</RE><TD>33</TD><F>9$2</F>"),
      "the CAF's range": base.replace(/<RNG><D>(\d+)<\/D>/, "<RNG><D>9$1</D>"),
      "the digest": base.replace(/<DigestValue>([A-Za-z0-9+/]{4})/, "<DigestValue>AAAA"),
      "the Reference": base.replace(/URI="#(F\d+T33)"/, 'URI="#X$1"'),
    };
    for (const [name, xml] of Object.entries(tampered)) {
      expect(xml, name).not.toBe(base);
      const before = verifyPaths.pass;
      const report = await verifyInbound(xml, SIM);
      expect(report.ok, name).toBe(false);
      expect(report, name).toEqual(await verifyInbound(xml, { ...SIM, lazy: false }));
      // The untouched DTE passes in one pass; the tampered one never does (its failure ends the lazy path, then the whole tree).
      expect(verifyPaths.pass - before, name).toBeLessThanOrEqual(1);
    }
  });
});
