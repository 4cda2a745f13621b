/**
 * The fast parser (src/countries/cl/fastxml.ts) must give the same tree values as @xmldom/xmldom on
 * everything it accepts, and must refuse (return null, so xmldom decides) everything outside its
 * subset. Checked on every signed output of the golden set, CAF files, hand-written edge cases and
 * random mutations of a signed DTE.
 */
import { describe, expect, it } from "vitest";
import { canonicalize } from "../../src/countries/cl/xml/c14n";
import fc from "fast-check";
import { fastParse, hasNotChar } from "../../src/countries/cl/xml/fastxml";
import { isAscii, parseXml, parseXmlDom, type XDocument, type XElement, type XNode } from "../../src/countries/cl/xml/xml";
import goldenText from "../fixtures/cl/signing-golden.json?raw";

const golden = JSON.parse(goldenText) as { cafs: Record<string, string>; outputs: Record<string, string> };

interface Shape {
  name: string;
  local: string | null;
  ns: string | null;
  attrs: [string, string, string | null, string | null][];
  kids: (Shape | string)[];
}

function shape(e: XElement): Shape {
  const attrs: Shape["attrs"] = [];
  for (let i = 0; i < e.attributes.length; i++) {
    const a = e.attributes.item(i)!;
    attrs.push([a.name, a.value, a.localName ?? null, a.namespaceURI ?? null]);
    expect(e.getAttribute(a.name)).toBe(a.value);
  }
  const kids: (Shape | string)[] = [];
  for (let c: XNode | null = e.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 1) kids.push(shape(c as XElement));
    else if (c.nodeType === 3) {
      const t = (c as unknown as { data: string }).data;
      if (typeof kids[kids.length - 1] === "string") kids[kids.length - 1] += t;
      else kids.push(t);
    } else throw new Error(`unexpected node type ${c.nodeType}`);
    expect(c.parentNode).toBe(e);
  }
  return { name: e.nodeName, local: e.localName ?? null, ns: e.namespaceURI ?? null, attrs, kids };
}

function deepest(e: XElement): XElement {
  let last: XElement | null = null;
  for (let c: XNode | null = e.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) last = c as XElement;
  return last ? deepest(last) : e;
}

function views(doc: XDocument) {
  const root = doc.documentElement as XElement;
  return {
    shape: shape(root),
    text: root.textContent,
    c14n: canonicalize(doc),
    exclusive: canonicalize(root, { exclusive: true }),
    stripped: canonicalize(root, { stripNamespaces: true }),
    defaultNs: [null, "", "xsi", "p", "xml", "null"].map((p) => root.lookupNamespaceURI(p)),
    deepestDefaultNs: [null, "", "xsi", "p"].map((p) => deepest(root).lookupNamespaceURI(p)),
    missing: root.getAttribute("no-such-attribute"),
  };
}

/** fastParse(text) is null or equal to xmldom's tree; returns whether it parsed. */
function same(text: string): boolean {
  const fast = fastParse(text);
  if (!fast) return false;
  let dom: XDocument;
  try {
    dom = parseXmlDom(text);
  } catch (e) {
    throw new Error(`fast parser accepted what xmldom refuses: ${JSON.stringify(text.slice(0, 300))}: ${(e as Error).message}`);
  }
  expect(views(fast as unknown as XDocument)).toEqual(views(dom));
  return true;
}

describe("fast XML parser", () => {
  it("equals xmldom on every golden output and CAF file", () => {
    for (const [name, text] of [...Object.entries(golden.outputs), ...Object.entries(golden.cafs)]) expect(same(text), name).toBe(true);
  });

  it("accepts the common subset and equals xmldom on it", () => {
    const ok = [
      "<a/>",
      "<a></a>",
      '<?xml version="1.0"?><a b="1"/>',
      "<?xml version='1.0' encoding='ISO-8859-1' standalone='yes'?>\n<a/>\n",
      '<a  b = "x&amp;y&lt;&gt;&quot;&apos;"   c=\'q"r\' >t &#65;&#x42; &#9;&#xA;&#xD; x</a>',
      '<p:a xmlns:p="urn:p" xmlns="urn:d" p:x="1" y="2"><b xmlns=""><c/></b><p:d/></p:a>',
      '<a xml:lang="es"><b xml:space="preserve"> </b></a>',
      '<a xmlns="urn:a"><b xmlns="urn:b"/><c/></a>',
      "<a>ñ á ü ½ &#241; é</a>",
      "<a>x > y</a>",
      "<a>\n  <b>1</b>\n  <b>2</b>\n</a>",
    ];
    for (const t of ok) expect(same(t), t).toBe(true);
  });

  it("leaves everything outside the subset to xmldom (null), including malformed input", () => {
    const refused = [
      "<!DOCTYPE a><a/>",
      "<a><!-- c --></a>",
      "<a><![CDATA[x]]></a>",
      "<a><?pi x?></a>",
      "<a>&nbsp;</a>",
      "<a>&amp</a>",
      "<a>a & b</a>",
      "<a>]]></a>",
      '<a b="x\ty"/>',
      '<a b="x\ny"/>',
      '<a b="1" b="2"/>',
      '<a xmlns:p="u" xmlns:q="u" p:x="1" q:x="2"/>',
      "<p:a/>",
      '<a p:b="1"/>',
      '<a b="1"c="2"/>',
      "<a><b></a></b>",
      "<a>",
      "<a/><b/>",
      "<a/>x",
      "x<a/>",
      " <?xml version=\"1.0\"?><a/>",
      "<?xml version=\"1.1\"?><a/>",
      "<ñ/>",
      "<a>\u0001</a>",
      "<a>&#0;</a>",
      "<a>&#xD800;</a>",
      '<a xmlns:p=""/>',
      "<a b=\"<\"/>",
      "\uFEFF<a/>",
      "",
    ];
    for (const t of refused) expect(fastParse(t), JSON.stringify(t)).toBeNull();
    // parseXml still gives xmldom's verdict on them: malformed input is an XML_MALFORMED error.
    expect(() => parseXml("<a><b></a></b>")).toThrow(/not well-formed/);
    expect(parseXml("<a><!-- c -->x</a>").documentElement?.textContent).toBe("x");
  });

  it("markup xmldom would repair with only a warning is refused as malformed, in the parser's own words", () => {
    // An unquoted value, a value missing, no space between attributes: not XML (XML 1.0 §3.1).
    for (const t of ["<a x=1/>", "<a b></a>", '<a x="1"y="2"/>', "<a><!-- c --><b c=d/></a>"]) {
      expect(fastParse(t), t).toBeNull();
      expect(() => parseXml(t, "The file"), t).toThrow(/^The file is not well-formed XML: attribute /);
    }
    expect(() => parseXml("hello", "The file")).toThrow(/^The file is not XML: it does not begin with "<"$/);
    expect(() => parseXml("  \n<a>", "The file")).toThrow(/^The file is not well-formed XML: /);
    // the parser's words are bounded even when they quote what it stopped at
    expect(() => parseXml(`<a/>${"x".repeat(2000)}`, "The file")).toThrow(/^The file is not well-formed XML: .{1,160}$/);
    // A U+FFFD in the text (xmldom's other warning) is a character like any other.
    expect(parseXmlDom("<a><!-- c -->\uFFFD</a>").documentElement?.textContent).toBe("\uFFFD");
  });

  it("random mutations of a signed DTE: whatever the fast parser accepts, xmldom parses to the same tree", () => {
    const base = golden.outputs["DTE 33-escapes"]!.slice(0, 3000).replace(/<TED[\s\S]*$/, "</Documento></DTE>");
    expect(same(base)).toBe(true);
    const alphabet = ["<", ">", "&", '"', "'", "=", "/", ":", " ", "\t", "\n", ";", "#", "x", "a", "!", "?", "]", "amp;", "&lt;", "<b>", "</b>", 'c="1"', "xmlns:q=\"u\"", "q:"];
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let accepted = 0;
    for (let i = 0; i < 1500; i++) {
      let t = base;
      for (let k = 1 + rnd(3); k > 0; k--) {
        const at = rnd(t.length);
        const op = rnd(3);
        if (op === 0) t = t.slice(0, at) + t.slice(at + 1 + rnd(4));
        else if (op === 1) t = t.slice(0, at) + alphabet[rnd(alphabet.length)] + t.slice(at);
        else t = t.slice(0, at) + alphabet[rnd(alphabet.length)] + t.slice(at + 1);
      }
      if (same(t)) accepted++;
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it("a root start tag written as the last document's parses as it did there, whatever came between and whatever follows it", () => {
    // The parser keeps the last root start tag it read; each document below must still equal
    // xmldom's, in any order, with its own content under the kept tag's namespaces.
    const roots = [
      '<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd" version="1.0">',
      '<EnvioDTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd" version="1.0" >',
      '<EnvioDTE xmlns="urn:other" version="1.0">',
      '<EnvioDTE xmlns:xml="http://www.w3.org/XML/1998/namespace" xml:lang="es" version="1.0">',
      // Declarations C14N does not write (cut from the source's canonical form).
      '<EnvioDTE xmlns:xml="http://www.w3.org/XML/1998/namespace" version="1.0">',
      '<EnvioDTE xmlns="" version="1.0">',
      '<p:EnvioDTE xmlns:p="urn:p" p:a="1">',
      "<EnvioDTE>",
    ];
    const bodies = ["", "<SetDTE ID=\"S\"><p:x xmlns:p=\"urn:q\"/></SetDTE>", "<a xsi:type=\"t\">1</a>", "<p:b/>", "texto &amp; más"];
    const close = (root: string) => `</${/^<([^ >]+)/.exec(root)![1]}>`;
    const doc = fc.tuple(fc.nat(roots.length - 1), fc.nat(bodies.length - 1), fc.boolean()).map(([r, b, decl]) => `${decl ? '<?xml version="1.0"?>\n' : ""}${roots[r]}${bodies[b]}${close(roots[r]!)}`);
    let parsed = 0;
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 6 }), (texts) => {
        for (const t of texts) {
          const fast = fastParse(t);
          let dom: XDocument | null = null;
          try {
            dom = parseXmlDom(t);
          } catch {
            // An unbound prefix: the fast parser must refuse it too.
          }
          if (dom === null) expect(fast).toBeNull();
          else {
            expect(fast).not.toBeNull();
            expect(views(fast as unknown as XDocument)).toEqual(views(dom));
            parsed++;
          }
        }
      }),
      { numRuns: 400, seed: 20261202 },
    );
    expect(parsed).toBeGreaterThan(500);
  });

  it("finds the characters outside XML's Char production as the plain regex does, on one-byte and wider text", () => {
    const NOT_CHAR = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;
    // Characters near every boundary of the production, among ordinary text.
    const special = fc.constantFrom(..."\x00\x08\t\n\x0B\x0C\r\x0E\x1F \x7F\x80\xFF\u0100\u20AC\uD7FF\uD800\uDBFF\uDC00\uDFFF\uE000\uFFFD\uFFFE\uFFFF");
    const text = fc.array(fc.oneof(fc.string({ maxLength: 40 }), special, fc.constant("<a>ñandú</a>")), { maxLength: 20 }).map((p) => p.join(""));
    fc.assert(fc.property(text, (t) => hasNotChar(t) === NOT_CHAR.test(t)), { numRuns: 3000 });
    for (const t of ["", "plain", "a\x01b", "ñ\x1F", "€\x01", "€", "ok\uFFFE", "\uD83D\uDE00", "\t\n\r"]) expect(hasNotChar(t)).toBe(NOT_CHAR.test(t));
  });

  it("isAscii answers whether every byte is below 0x80, at any alignment and length (a few bytes at an odd offset among them)", () => {
    const byte = fc.oneof(fc.constantFrom(0, 9, 10, 13, 32, 65, 126, 127, 128, 200, 255), fc.integer({ min: 32, max: 126 }));
    const input = fc.record({ bytes: fc.array(fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 32, max: 126 }) }, { weight: 1, arbitrary: byte }), { maxLength: 80 }), offset: fc.integer({ min: 0, max: 7 }) });
    fc.assert(
      fc.property(input, ({ bytes, offset }) => {
        const b = new Uint8Array(offset + bytes.length).subarray(offset);
        b.set(bytes);
        expect(isAscii(b)).toBe(bytes.every((c) => c < 0x80));
      }),
      { numRuns: 5000, seed: 3 },
    );
    const line = new TextEncoder().encode("<a>texto</a>\n".repeat(40));
    for (const at of [0, 1, 2, 3, 7, 31, 32, 255, line.length - 1]) {
      const b = line.slice();
      b[at] = 0x80;
      expect(isAscii(b), `0x80 at ${at}`).toBe(false);
    }
  });
});
