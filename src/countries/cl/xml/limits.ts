/**
 * Bounds on the shape of XML, enforced while @xmldom/xmldom parses it (its DOMParser takes the class
 * that builds the tree, `domHandler`): a file outside them is refused at the node that crosses one,
 * before the parser goes further or the tree reaches any recursive walk (C14N, the verifications).
 * Received files are untrusted, and a file of a hostile shape must cost no more than an ordinary file
 * of its size (bench/hostile.bench.mjs measures each shape against a signed envelope).
 *
 * The bounds, against what the SII's files hold (an EnvioDTE of 250 facturas: 10 levels, at most 4
 * attributes an element, 55 characters an element and 21 a node of any kind):
 * - depth 64: the deepest SII path is 10 levels (EnvioDTE > SetDTE > DTE > Documento > TED > DD >
 *   CAF > DA > RSAPK > M); deeper nesting costs the parser several times an ordinary element, and
 *   each level is a frame of every recursive walk downstream;
 * - 256 attributes (namespace declarations included) on one element: SII elements have 1 to 4;
 * - 64 namespace declarations in scope (on an element and its ancestors; a prefix declared again
 *   counts again), and in the file 1,000 plus one per 256 characters: SII files have 2 or 3 in
 *   scope (SiiDte, XMLSchema-instance, xmldsig) and about one per 2,500 characters (each DTE and
 *   its Signature declare theirs). C14N and the verification's fallbacks copy the scope at each
 *   element that declares one: thousands in scope (deep elements declaring 250 each) above many
 *   small declaring elements cost minutes for a 1 MB file, and 63 in scope above 60,000 of them 11
 *   times an ordinary file;
 * - names of 128 characters (elements, attributes, processing instructions' targets): the SII's
 *   longest are about 20;
 * - 500,000 elements in a file: a file at the 10 MB limit holds about 190,000 of them in ordinary
 *   DTEs (55 characters an element) and 500,000 in the densest (20 characters: one-line items with
 *   short values);
 * - nodes of any kind (elements, texts, comments, processing instructions, CDATA sections): at most
 *   10,000 plus one per 8 characters of the file. Ordinary files have one per 21 characters,
 *   pretty-printed ones one per 23; the parser's cost is by node (a tiny element costs it as much as
 *   an ordinary element with its text), so a file of tiny nodes (`<a/>` repeated, texts between
 *   them) would otherwise cost 3 to 5 times an ordinary file of its size, and its tree 3 to 6 times the
 *   memory;
 * - no DTD (<!DOCTYPE>): nothing the SII sends declares one, and entities are what it would declare.
 * Long values, texts, comments and processing instructions cost the parser what ordinary text does
 * and are not bounded here (the file's size bounds them); a comment of several megabytes exhausts
 * the stack of xmldom's pattern for comments, and is refused as too long.
 */
import { DOMParser } from "@xmldom/xmldom";
import { EngineError } from "../errors";

export const XML_LIMITS = {
  depth: 64,
  attributes: 256,
  namespacesInScope: 64,
  /** Namespace declarations in a file: `namespaceBase` plus one per `charsPerNamespace` characters. */
  namespaceBase: 1_000,
  charsPerNamespace: 256,
  nameLength: 128,
  elements: 500_000,
  /** Nodes of any kind: `nodeBase` plus one per `charsPerNode` characters of the file. */
  nodeBase: 10_000,
  charsPerNode: 8,
} as const;

/** What xmldom passes to startElement as the attributes (sax.js ElementAttributes). */
interface SaxAttributes {
  length: number;
  getQName(i: number): string;
}

/** xmldom's own tree builder (DOMHandler, which the package does not export): the default of a DOMParser. */
interface DomBuilder {
  startElement(namespaceURI: string | null, localName: string, qName: string, attrs: SaxAttributes): void;
  endElement(namespaceURI: string | null, localName: string, qName: string): void;
  characters(chars: string, start: number, length: number): void;
  comment(chars: string, start: number, length: number): void;
  processingInstruction(target: string, data: string): void;
  startDTD(name: string, publicId: string, systemId: string, internalSubset: string): void;
  reportError(level: string, message: string): void;
}
type DomBuilderClass = new (options: object) => DomBuilder;
const DomHandler = (new DOMParser() as unknown as { domHandler: DomBuilderClass }).domHandler;

/**
 * xmldom's tree builder with the bounds above. A bound crossed throws an EngineError from the
 * callback; the parser catches what a callback throws and reports it as an error (reportError),
 * which throws the same EngineError again, so that the caller receives it as it was made.
 */
class LimitedDomHandler extends DomHandler {
  private depth = 0;
  /** Namespace declarations in scope, and how many each open element made. */
  private namespaces = 0;
  private readonly declared: number[] = [];
  private declarations = 0;
  private elements = 0;
  private nodes = 0;
  private refusal: EngineError | null = null;

  constructor(options: object, private readonly what: string, private readonly limits: { nodes: number; declarations: number }) {
    super(options);
  }

  private refuse(reason: string): never {
    this.refusal = new EngineError("XML_MALFORMED", `${this.what} is refused: ${reason}`);
    throw this.refusal;
  }

  private node() {
    if (++this.nodes > this.limits.nodes) this.refuse(`it holds more than ${this.limits.nodes.toLocaleString("en-US")} nodes (elements, texts, comments) for its size, more than one per ${XML_LIMITS.charsPerNode} characters; SII files have about one per 20`);
  }

  private name(kind: string, name: string) {
    if (name.length > XML_LIMITS.nameLength) this.refuse(`${kind} name of ${name.length.toLocaleString("en-US")} characters (at most ${XML_LIMITS.nameLength})`);
  }

  override startElement(namespaceURI: string | null, localName: string, qName: string, attrs: SaxAttributes) {
    this.name("an element", qName);
    if (++this.depth > XML_LIMITS.depth) this.refuse(`its elements nest more than ${XML_LIMITS.depth} levels deep`);
    if (++this.elements > XML_LIMITS.elements) this.refuse(`it holds more than ${XML_LIMITS.elements.toLocaleString("en-US")} elements`);
    if (attrs.length > XML_LIMITS.attributes) this.refuse(`<${qName}> has ${attrs.length.toLocaleString("en-US")} attributes (at most ${XML_LIMITS.attributes})`);
    let declares = 0;
    for (let i = 0; i < attrs.length; i++) {
      const q = attrs.getQName(i);
      this.name("an attribute", q);
      if (q.startsWith("xmlns") && (q.length === 5 || q.charCodeAt(5) === 58 /* : */)) declares++;
    }
    this.declared.push(declares);
    if ((this.namespaces += declares) > XML_LIMITS.namespacesInScope) this.refuse(`more than ${XML_LIMITS.namespacesInScope} namespace declarations are in scope at <${qName}>`);
    if ((this.declarations += declares) > this.limits.declarations) this.refuse(`it holds more than ${this.limits.declarations.toLocaleString("en-US")} namespace declarations for its size, more than one per ${XML_LIMITS.charsPerNamespace} characters`);
    this.node();
    super.startElement(namespaceURI, localName, qName, attrs);
  }

  override endElement(namespaceURI: string | null, localName: string, qName: string) {
    this.depth--;
    this.namespaces -= this.declared.pop()!;
    super.endElement(namespaceURI, localName, qName);
  }

  override characters(chars: string, start: number, length: number) {
    if (length > 0) this.node();
    super.characters(chars, start, length);
  }

  override comment(chars: string, start: number, length: number) {
    this.node();
    super.comment(chars, start, length);
  }

  override processingInstruction(target: string, data: string) {
    this.name("a processing instruction's", target);
    this.node();
    super.processingInstruction(target, data);
  }

  override startDTD(): void {
    this.refuse("it carries a DTD (<!DOCTYPE>), which is not accepted");
  }

  override reportError(level: string, message: string) {
    if (this.refusal) throw this.refusal;
    // xmldom matches a comment with a regular expression that exhausts the stack on one of several megabytes.
    if (message.includes("Maximum call stack size exceeded")) this.refuse("a part of it (a comment of megabytes, say) is too long for the XML parser");
    super.reportError(level, message);
  }
}

/**
 * The `domHandler` option of a DOMParser that parses `length` characters of `what` (named in the
 * refusal: "The received file is refused: …") within XML_LIMITS.
 */
export function limitedDomHandler(what: string, length: number): unknown {
  const limits = { nodes: XML_LIMITS.nodeBase + Math.floor(length / XML_LIMITS.charsPerNode), declarations: XML_LIMITS.namespaceBase + Math.floor(length / XML_LIMITS.charsPerNamespace) };
  // xmldom calls `new domHandler(options)`: a function that returns an object makes that object the
  // result, so one class serves every parse (a class made per parse would make xmldom's calls on
  // its builder polymorphic).
  return function (options: object) {
    return new LimitedDomHandler(options, what, limits);
  };
}
