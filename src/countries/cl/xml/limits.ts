/**
 * Bounds on the shape of XML, enforced while the parser reports each node (tree.ts): a file outside them is refused at the node that crosses one,
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
 * - nodes of any kind (elements, texts, processing instructions, CDATA sections; comments are no
 *   nodes of the tree): at most
 *   10,000 plus one per 8 characters of the file. Ordinary files have one per 21 characters,
 *   pretty-printed ones one per 23; the parser's cost is by node (a tiny element costs it as much as
 *   an ordinary element with its text), so a file of tiny nodes (`<a/>` repeated, texts between
 *   them) would otherwise cost 3 to 5 times an ordinary file of its size, and its tree 3 to 6 times the
 *   memory;
 * - no DTD (<!DOCTYPE>): nothing the SII sends declares one, and entities are what it would declare.
 * Long values, texts, comments and processing instructions cost the parser what ordinary text does
 * and are not bounded here (the file's size bounds them), nor are they by the parser's design: it reads each character once.
 */
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

const n = (x: number) => x.toLocaleString("en-US");

/**
 * The bounds of one parse of `length` characters of `what` (named in the refusal: "The received
 * file is refused: …"). For each complete start tag the tree builder calls `open`, then
 * `attribute` for each attribute and `element`; `close` at its end and `node` at every other node;
 * a bound crossed throws an EngineError XML_MALFORMED at once.
 */
export class ShapeBounds {
  private depth = 0;
  /** Namespace declarations in scope, and how many each open element made. */
  private namespaces = 0;
  private readonly declared: number[] = [];
  private declarations = 0;
  private elements = 0;
  private nodes = 0;
  private attributes = 0;
  private declaring = 0;
  private current = "";
  private readonly maxNodes: number;
  private readonly maxDeclarations: number;

  constructor(private readonly what: string, length: number) {
    this.maxNodes = XML_LIMITS.nodeBase + Math.floor(length / XML_LIMITS.charsPerNode);
    this.maxDeclarations = XML_LIMITS.namespaceBase + Math.floor(length / XML_LIMITS.charsPerNamespace);
  }

  refuse(reason: string): never {
    throw new EngineError("XML_MALFORMED", `${this.what} is refused: ${reason}`);
  }

  node(): void {
    if (++this.nodes > this.maxNodes) this.refuse(`it holds more than ${n(this.maxNodes)} nodes (elements, texts) for its size, more than one per ${XML_LIMITS.charsPerNode} characters; SII files have about one per 20`);
  }

  name(kind: string, name: string): void {
    if (name.length > XML_LIMITS.nameLength) this.refuse(`${kind} name of ${n(name.length)} characters (at most ${XML_LIMITS.nameLength})`);
  }

  open(qName: string): void {
    this.name("an element", qName);
    if (++this.depth > XML_LIMITS.depth) this.refuse(`its elements nest more than ${XML_LIMITS.depth} levels deep`);
    if (++this.elements > XML_LIMITS.elements) this.refuse(`it holds more than ${n(XML_LIMITS.elements)} elements`);
    this.node();
    this.attributes = 0;
    this.declaring = 0;
    this.current = qName;
  }

  attribute(qName: string): void {
    if (++this.attributes > XML_LIMITS.attributes) this.refuse(`<${this.current}> has more than ${XML_LIMITS.attributes} attributes`);
    this.name("an attribute", qName);
    if (qName.startsWith("xmlns") && (qName.length === 5 || qName.charCodeAt(5) === 58 /* : */)) {
      this.declaring++;
      if (++this.declarations > this.maxDeclarations) this.refuse(`it holds more than ${n(this.maxDeclarations)} namespace declarations for its size, more than one per ${XML_LIMITS.charsPerNamespace} characters`);
    }
  }

  element(qName: string): void {
    this.declared.push(this.declaring);
    if ((this.namespaces += this.declaring) > XML_LIMITS.namespacesInScope) this.refuse(`more than ${XML_LIMITS.namespacesInScope} namespace declarations are in scope at <${qName}>`);
  }

  close(): void {
    this.depth--;
    this.namespaces -= this.declared.pop()!;
  }
}
