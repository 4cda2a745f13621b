/**
 * The tree every XML this service reads is parsed into: the nodes `saxes` (a strict, namespace-aware
 * XML 1.0 parser, the one jsdom uses) reports, comments aside, linked as a read-only subset of the DOM (nodeType,
 * nodeName, localName, namespaceURI, firstChild/nextSibling/parentNode, attributes, getAttribute,
 * textContent, lookupNamespaceURI). The bounds of limits.ts are enforced as the parser reports each
 * node, before it goes further. Nothing here reads the text itself: saxes tokenises, checks
 * well-formedness and resolves namespaces; this file only links what it reports.
 */
import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from "saxes";
import { EngineError } from "../errors";
import { ShapeBounds } from "./limits";

const XMLNS_NS = "http://www.w3.org/2000/xmlns/";

/** A node of the tree: the DOM's fields, null where a kind of node has none. */
export class XNode {
  parentNode: XElement | XDocument | null = null;
  firstChild: XNode | null = null;
  nextSibling: XNode | null = null;
  localName: string | null = null;
  namespaceURI: string | null = null;
  constructor(readonly nodeType: number, readonly nodeName: string) {}
  /** The DOM's textContent: the text of the node and its descendants (comments and PIs excluded); null for the document. */
  get textContent(): string | null {
    return null;
  }
}

/** A text (nodeType 3) or CDATA section (4). */
export class XText extends XNode {
  constructor(readonly data: string, cdata: boolean) {
    super(cdata ? 4 : 3, cdata ? "#cdata-section" : "#text");
  }
  override get textContent(): string {
    return this.data;
  }
}

export class XProcessingInstruction extends XNode {
  constructor(readonly target: string, readonly data: string) {
    super(7, target);
  }
  override get textContent(): string {
    return this.data;
  }
}

/** An attribute: `namespaceURI` null when it has no prefix (namespace declarations: the xmlns namespace). */
export interface XAttr {
  readonly name: string;
  readonly localName: string;
  readonly prefix: string | null;
  readonly namespaceURI: string | null;
  readonly value: string;
}

/** The last child of each parent while the tree is built (appending is then constant time). */
type Parent = XElement | XDocument;

export class XElement extends XNode {
  readonly prefix: string | null;
  lastChild: XNode | null = null;
  constructor(tag: SaxesTagNS, readonly attributes: readonly XAttr[]) {
    super(1, tag.name);
    this.localName = tag.local;
    this.prefix = tag.prefix || null;
    this.namespaceURI = tag.uri || null;
  }
  /** The value of the attribute with this qualified name, or null. */
  getAttribute(name: string): string | null {
    const attrs = this.attributes;
    for (let i = 0; i < attrs.length; i++) if (attrs[i]!.name === name) return attrs[i]!.value;
    return null;
  }
  /** The namespace a prefix ("" or null: the default namespace) is bound to here, or null. */
  lookupNamespaceURI(prefix: string | null): string | null {
    const name = prefix ? `xmlns:${prefix}` : "xmlns";
    for (let n: XNode | null = this; n && n.nodeType === 1; n = n.parentNode) {
      const v = (n as XElement).getAttribute(name);
      if (v !== null) return v || null;
    }
    return null;
  }
  override get textContent(): string {
    let s = "";
    for (let c = this.firstChild; c; c = c.nextSibling) if (c.nodeType !== 7) s += c.textContent;
    return s;
  }
}

export class XDocument extends XNode {
  documentElement: XElement | null = null;
  lastChild: XNode | null = null;
  constructor() {
    super(9, "#document");
  }
}

function append(parent: Parent, node: XNode): void {
  node.parentNode = parent;
  if (parent.lastChild) parent.lastChild.nextSibling = node;
  else parent.firstChild = node;
  parent.lastChild = node;
}

/** The attributes of a complete start tag, each within the bounds as it is taken. */
function attributesOf(tag: SaxesTagNS, bounds: ShapeBounds): XAttr[] {
  const out: XAttr[] = [];
  for (const name in tag.attributes) {
    bounds.attribute(name);
    const a = tag.attributes[name] as SaxesAttributeNS;
    const ns = a.prefix === "xmlns" || a.name === "xmlns" ? XMLNS_NS : a.uri || null;
    out.push({ name: a.name, localName: a.local, prefix: a.prefix || null, namespaceURI: ns, value: a.value });
  }
  return out;
}

/**
 * Parses `text` into a tree within the bounds of limits.ts. Throws an EngineError XML_MALFORMED
 * naming `what`: the parser's message (with its line and column) for a file that is not
 * well-formed, the bound for one that crosses a bound.
 */
export function buildTree(text: string, what: string): XDocument {
  const doc = new XDocument();
  const bounds = new ShapeBounds(what, text.length);
  let parent: Parent = doc;
  const parser = new SaxesParser({ xmlns: true, position: true });
  // Six handlers at most: a seventh set on the parser makes V8 keep its fields in a dictionary,
  // which costs the whole parse four to five times. So the bounds of a start tag are checked once
  // it is complete, and comments, which nothing reads (C14N is without comments), are not nodes.
  parser.on("opentag", (tag) => {
    bounds.open(tag.name);
    const attributes = attributesOf(tag, bounds);
    bounds.element(tag.name);
    const el = new XElement(tag, attributes);
    append(parent, el);
    if (parent === doc) doc.documentElement = el;
    parent = el;
  });
  parser.on("closetag", () => {
    bounds.close();
    parent = parent.parentNode as Parent;
  });
  parser.on("text", (t) => {
    if (parent === doc) return; // whitespace around the root (anything else is an error of the parser)
    bounds.node();
    append(parent, new XText(t, false));
  });
  parser.on("cdata", (t) => {
    bounds.node();
    append(parent, new XText(t, true));
  });
  parser.on("processinginstruction", (pi) => {
    bounds.name("a processing instruction's", pi.target ?? "");
    bounds.node();
    append(parent, new XProcessingInstruction(pi.target ?? "", pi.body));
  });
  parser.on("doctype", () => bounds.refuse("it carries a DTD (<!DOCTYPE>), which is not accepted"));
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof EngineError) throw e;
    const reason = (e as Error).message.split("\n")[0]!;
    throw new EngineError("XML_MALFORMED", `${what} is not well-formed XML: ${reason.length > 160 ? `${reason.slice(0, 159)}…` : reason}`, { cause: e });
  }
  return doc;
}
