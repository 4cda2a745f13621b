/**
 * The canonicaliser equals an independent reference one (c14n-reference.ts) on every element of
 * every golden output, as apex, in every mode, with and without the enveloped-signature exclusion.
 */
import { describe, expect, it } from "vitest";
import { canonicalize, type C14nOptions } from "../../src/countries/cl/xml/c14n";
import { decodeLatin1, encodeLatin1, parseXml, type XDocument, type XElement, type XNode } from "../../src/countries/cl/xml/xml";
import goldenText from "../fixtures/cl/signing-golden.json?raw";
import { canonicalizeReference } from "./c14n-reference";

const golden = JSON.parse(goldenText) as { cafs: Record<string, string>; outputs: Record<string, string> };

function elements(doc: XDocument): XElement[] {
  const out: XElement[] = [];
  const walk = (n: XNode) => {
    for (let c = n.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) (out.push(c as XElement), walk(c));
  };
  walk(doc);
  return out;
}

const EXTRA = [
  '<p:a xmlns:p="urn:p" xmlns="urn:d" xmlns:q="urn:q" p:x="1" y="2" q:z="3" xml:lang="es"><b xmlns="" q:w="4"><c xmlns:p="urn:p2" p:k="v"/></b><p:d xmlns:q="urn:q"/><e xml:lang="en"><f/></e></p:a>',
  '<a xmlns="urn:a" xmlns:x="urn:x"><b xmlns="urn:b"><c xmlns="urn:a" x:y="&quot;&#9;&#xA;&#xD;&amp;&lt;"> t&#xD;&gt; </c></b><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><d/></Signature></a>',
  "<a><!-- c --><b>x<![CDATA[<&>]]>y</b><?pi data?></a>",
];

describe("C14N", () => {
  it("equals the reference implementation on every element, every mode", () => {
    const modes: C14nOptions[] = [{}, { exclusive: true }, { stripNamespaces: true }];
    let checked = 0;
    for (const text of [...Object.values(golden.outputs), ...Object.values(golden.cafs), ...EXTRA]) {
      for (const doc of [parseXml(text)]) {
        const sigs = elements(doc).filter((e) => e.localName === "Signature");
        for (const o of modes) {
          for (const exclude of [null, ...sigs]) {
            const opts = { ...o, exclude };
            expect(canonicalize(doc, opts)).toBe(canonicalizeReference(doc, opts));
            for (const e of elements(doc)) {
              expect(canonicalize(e, opts)).toBe(canonicalizeReference(e, opts));
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });

  it("a shared memo changes no output: every element, every mode, in document order and in reverse, one memo per tree", () => {
    const modes: C14nOptions[] = [{}, { exclusive: true }, { stripNamespaces: true }];
    let hits = 0;
    for (const text of [...Object.values(golden.outputs), ...EXTRA, '<r xmlns="urn:r" xmlns:q="urn:q"><s ID="S"><a><b x="1">t</b></a><c xmlns:p="urn:p"><p:d/></c><e xmlns="urn:r"><f/></e><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><d/></Signature></s><s2 ID="T"><s ID="U"><a q:z="1"/></s></s2></r>']) {
      for (const order of ["forward", "reverse"]) {
        const doc = parseXml(text);
        const memo = new WeakMap<object, string>();
        const all = [doc as XDocument | XElement, ...elements(doc)];
        if (order === "reverse") all.reverse();
        for (const o of modes) {
          for (const exclude of [null, ...elements(doc).filter((e) => e.localName === "Signature")]) {
            for (const e of all) expect(canonicalize(e, { ...o, exclude, memo })).toBe(canonicalizeReference(e, { ...o, exclude }));
          }
        }
        for (const e of elements(doc)) if (memo.has(e)) hits++;
      }
    }
    expect(hits).toBeGreaterThan(100);
  });
});

describe("ISO-8859-1 codecs", () => {
  it("decodeLatin1/encodeLatin1 are exact for every byte, short and long inputs (0x80-0x9F included)", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    for (const bytes of [all, all.subarray(0x20, 0x40), all.subarray(0x80, 0xa0), Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) % 256), new TextEncoder().encode("<a>plain ascii text, long enough for the native path ....................</a>")]) {
      const s = decodeLatin1(bytes);
      expect(s.length).toBe(bytes.length);
      for (let i = 0; i < bytes.length; i++) expect(s.charCodeAt(i)).toBe(bytes[i]);
      expect(encodeLatin1(s)).toEqual(bytes);
    }
    expect(() => encodeLatin1("x".repeat(100) + "€")).toThrow(/U\+20AC/);
  });
});
