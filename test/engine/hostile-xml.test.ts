/**
 * Hostile XML: the bounds of src/countries/cl/xml/limits.ts refuse, while the file is parsed, what
 * no SII file holds (deep nesting, hundreds of attributes, long names, a DTD, more nodes than its
 * size allows); every hostile shape of the bench (test/helpers/hostile-xml.ts) gets a clear answer
 * from verifyInbound and from the upload endpoint, never a 500; ordinary envelopes still verify.
 * The shapes' costs are the bench's (npm run bench -- hostile), not asserted here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { receptionCafTrust, verifyInbound, verifySignedXml } from "../../src/countries/cl/exchange/verify";
import { XML_LIMITS } from "../../src/countries/cl/xml/limits";
import { decodeLatin1, encodeLatin1, parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { engineError } from "../helpers/engine-error";
import { HOSTILE_SHAPES } from "../helpers/hostile-xml";
import { envelope, signedDte } from "../sii/helpers";
import { receptionFixture, upload, type Receiver } from "../reception/helpers";

/** Long enough for each shape to cross its bound (the node bound allows any file 10,000 nodes). */
const LENGTH = 200_000;
const trust = receptionCafTrust("simulator");
/** How many child nodes (of any kind) an element has. */
const childCount = (el: XElement) => {
  let n = 0;
  for (let c = el.firstChild; c; c = c.nextSibling) n++;
  return n;
};

/** What each shape's file gets from verifyInbound, whole tree or lazily: its failure and the start of its message. */
const EXPECTED: Record<string, [string, RegExp]> = {
  attributes: ["XML_MALFORMED", /^The received file is refused: <SetDTE> has more than 256 attributes$/],
  nesting: ["XML_MALFORMED", /^The received file is refused: its elements nest more than 64 levels deep$/],
  "attribute-value": ["SIGNATURE_INVALID", /^Envelope: The digest of #\S+ does not match/],
  "character-references": ["SIGNATURE_INVALID", /^Envelope: The digest of #\S+ does not match/],
  "long-name": ["XML_MALFORMED", /^The received file is refused: an element name of 19\d,\d{3} characters \(at most 128\)$/],
  namespaces: ["XML_MALFORMED", /^The received file is refused: <SetDTE> has more than 256 attributes$/],
  "namespaces-spread": ["XML_MALFORMED", /^The received file is refused: more than 64 namespace declarations are in scope at <n>$/],
  "namespaces-in-scope": ["XML_MALFORMED", /^The received file is refused: it holds more than 1,781 namespace declarations for its size, more than one per 256 characters$/],
  comment: ["", /^$/],
  pi: ["SIGNATURE_INVALID", /^Envelope: The digest of #\S+ does not match/],
  "tiny-elements": ["XML_MALFORMED", /^The received file is refused: it holds more than 35,\d{3} nodes \(elements, texts\) for its size, more than one per 8 characters/],
  "tiny-nodes": ["XML_MALFORMED", /^The received file is refused: it holds more than 35,\d{3} nodes/],
  // Comments are not nodes of the tree (nothing reads them): they cost the parse only, by their size;
  // the text that pads the file to its length is inside the signed SetDTE.
  comments: ["SIGNATURE_INVALID", /^Envelope: The digest of #\S+ does not match/],
  "empty-dtes": ["ENVELOPE_INVALID", /^The envelope holds 7\d{3} DTEs; an EnvioDTE holds at most 2000$/],
};

let r: Receiver;
let one: string;

beforeAll(async () => {
  const f = await receptionFixture();
  r = f.r;
  one = decodeLatin1((await envelope([await signedDte(f.caf33, 1, f.cert)], f.cert)).xml);
});

describe("hostile XML", () => {
  it("every shape of the bench is covered here", () => {
    expect(HOSTILE_SHAPES.map((s) => s.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const shape of HOSTILE_SHAPES) {
    it(`${shape.name} (${shape.label}): a clear answer from verifyInbound and from the upload`, async () => {
      const bytes = encodeLatin1(shape.build(one, LENGTH));
      expect(bytes.length).toBe(LENGTH);
      const [failure, message] = EXPECTED[shape.name]!;
      const report = await verifyInbound(bytes, trust);
      expect(report.failure ?? "").toBe(failure);
      expect(report.message ?? "").toMatch(message);
      expect(report.ok).toBe(failure === "");
      const res = await upload(r, bytes, `${shape.name}.xml`);
      if (failure === "XML_MALFORMED" || failure === "ENVELOPE_INVALID") {
        // Refused: nothing stored, the refusal in the error envelope.
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.error.code).toBe("RECEPTION_FILE_INVALID");
        expect(res.body.error.message).toMatch(new RegExp(`^The file was not taken in: ${message.source.slice(1)}`));
      } else {
        // Parsed: its DTE is taken in, with the envelope's signature failed when the payload altered the SetDTE.
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.documents).toHaveLength(1);
      }
    });
  }
});

describe("the parser's bounds", () => {
  const namespaces = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ` xmlns:${prefix}${i}="urn:${prefix}${i}"`).join("");
  const nested = (levels: number) => "<a>".repeat(levels) + "</a>".repeat(levels);
  const withAttributes = (n: number) => `<a${Array.from({ length: n }, (_, i) => ` b${i}=""`).join("")}/>`;

  it("nesting: 64 levels parse, 65 are refused", () => {
    expect(parseXml(nested(XML_LIMITS.depth)).documentElement!.localName).toBe("a");
    expect(engineError(() => parseXml(nested(XML_LIMITS.depth + 1), "The file")).message).toBe("The file is refused: its elements nest more than 64 levels deep");
  });

  it("attributes: 256 on one element parse, 257 are refused; namespace declarations count", () => {
    expect(parseXml(withAttributes(XML_LIMITS.attributes)).documentElement!.attributes.length).toBe(256);
    expect(engineError(() => parseXml(withAttributes(XML_LIMITS.attributes + 1), "The file")).message).toBe("The file is refused: <a> has more than 256 attributes");
    const namespaces = `<a${Array.from({ length: 257 }, (_, i) => ` xmlns:p${i}="urn:p"`).join("")}/>`;
    expect(engineError(() => parseXml(namespaces, "The file")).code).toBe("XML_MALFORMED");
  });

  it("namespaces: 64 declarations in scope parse, 65 are refused, wherever they are declared", () => {
    const scoped = (outer: number, inner: number) => `<a${namespaces(outer, "o")}><b/><b${namespaces(inner, "i")}/><b/></a>`;
    expect(childCount(parseXml(scoped(32, 32)).documentElement!)).toBe(3);
    // Declarations of an element that has ended are out of scope again.
    expect(childCount(parseXml(`<a${namespaces(32, "o")}>${`<b${namespaces(32, "i")}/>`.repeat(3)}</a>`).documentElement!)).toBe(3);
    expect(engineError(() => parseXml(scoped(32, 33), "The file")).message).toBe("The file is refused: more than 64 namespace declarations are in scope at <b>");
    expect(engineError(() => parseXml(`<a${namespaces(65, "o")}/>`, "The file")).message).toBe("The file is refused: more than 64 namespace declarations are in scope at <a>");
  });

  it("namespace declarations in a file: 1,000 plus one per 256 characters; one more is refused", () => {
    // <r>, 1,100 elements declaring one each and </r>: 17,607 characters, then spaces after the root.
    const file = (spaces: number) => `<r>${'<a xmlns:q="u"/>'.repeat(1100)}</r>${" ".repeat(spaces)}`;
    expect(childCount(parseXml(file(25_600 - 17_607)).documentElement!)).toBe(1100);
    expect(engineError(() => parseXml(file(25_599 - 17_607), "The file")).message).toBe("The file is refused: it holds more than 1,099 namespace declarations for its size, more than one per 256 characters");
  });

  it("a comment, a text and an attribute value of megabytes each parse whole (the parser reads each character once)", () => {
    const big = "x".repeat(10_000_000);
    const root = parseXml(`<a b="${big}"><!--${big}-->${big}</a>`, "The file").documentElement!;
    expect(root.getAttribute("b")).toHaveLength(10_000_000);
    expect((root.firstChild as unknown as { data: string }).data).toHaveLength(10_000_000);
    expect(root.textContent).toHaveLength(10_000_000);
  });

  it("names: 128 characters parse, 129 are refused, for elements, attributes and processing instructions", () => {
    const name = (n: number) => "n".repeat(n);
    expect(parseXml(`<${name(128)} ${name(128)}="v"><?${name(128)}?></${name(128)}>`).documentElement!.localName).toHaveLength(128);
    expect(engineError(() => parseXml(`<${name(129)}/>`, "The file")).message).toBe("The file is refused: an element name of 129 characters (at most 128)");
    expect(engineError(() => parseXml(`<a ${name(129)}="v"/>`, "The file")).message).toBe("The file is refused: an attribute name of 129 characters (at most 128)");
    expect(engineError(() => parseXml(`<a><?${name(129)}?></a>`, "The file")).message).toBe("The file is refused: a processing instruction's name of 129 characters (at most 128)");
  });

  it("nodes: 10,000 plus one per 8 characters of the file; one more is refused", () => {
    // <r>, 20,000 <a/> and </r>: 20,001 nodes in 80,007 characters, then spaces after the root (no node).
    const file = (spaces: number) => `<r>${"<a/>".repeat(20_000)}</r>${" ".repeat(spaces)}`;
    expect(childCount(parseXml(file(1)).documentElement!)).toBe(20_000);
    expect(engineError(() => parseXml(file(0), "The file")).message).toMatch(/^The file is refused: it holds more than 20,000 nodes/);
  });

  it("a DTD is refused by the parser itself, not only by the received files' text search", async () => {
    expect(engineError(() => parseXml('<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', "The file")).message).toBe("The file is refused: it carries a DTD (<!DOCTYPE>), which is not accepted");
    expect(engineError(() => parseXml("<!DOCTYPE a><a/>", "The file")).code).toBe("XML_MALFORMED");
    // verifySignedXml (buyers' replies) has no text search for a DTD.
    const report = await verifySignedXml('<!DOCTYPE RespuestaDTE><RespuestaDTE version="1.0"/>');
    expect(report).toMatchObject({ ok: false, failure: "XML_MALFORMED", message: "The signed file is refused: it carries a DTD (<!DOCTYPE>), which is not accepted" });
  });

  it("an ordinary envelope of 150 DTEs (some 700 KB) still verifies, whole tree and lazily", async () => {
    const f = await receptionFixture();
    const dtes = [];
    for (let folio = 1; folio <= 150; folio++) dtes.push(await signedDte(f.caf33, folio, f.cert));
    const xml = (await envelope(dtes, f.cert)).xml;
    expect(xml.length).toBeGreaterThan(500_000);
    const report = await verifyInbound(xml, trust);
    expect(report.ok, report.message).toBe(true);
    expect(report.documents).toHaveLength(150);
  });
});
