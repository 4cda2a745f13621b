/**
 * A fast, strict XML parser for the common subset of the XML the engine and the simulator read
 * (what the engine itself writes, the SII's answers and most third-party DTEs): an optional XML
 * declaration, elements with ASCII names and quoted attributes, namespace declarations, text with
 * the predefined entities and character references, empty-element tags. It builds a small tree
 * with the part of the DOM interface the engine uses (nodeType, firstChild, nextSibling,
 * parentNode, localName, nodeName, namespaceURI, getAttribute, attributes.item(i), textContent,
 * data, documentElement, lookupNamespaceURI) with the same values @xmldom/xmldom gives.
 *
 * It never guesses: anything outside the subset (DOCTYPE, comments, CDATA, processing
 * instructions other than the declaration, non-ASCII names, unknown entities, raw tabs or line
 * breaks in attribute values, which a parser normalises, undeclared prefixes, duplicate attributes,
 * anything malformed) returns null, and the caller parses with @xmldom/xmldom as before, so errors
 * and edge cases keep their former behaviour. Profiling showed @xmldom/xmldom parsing as the largest
 * CPU cost of signing and of the simulator's validation; this parser is several times faster.
 *
 * It also notes, per element, where it sits in the source text and whether its source is already in
 * canonical form (C14N 1.0): then the canonical form of a subtree is its source text with a rebuilt
 * start tag (c14n.ts, `spanCanonical`), without walking the tree. "Canonical as written" means: start
 * tags as `<name a="v">` (one space, double quotes, namespace declarations first and sorted by prefix,
 * then unprefixed attributes sorted by name, no `/>`), end tags as `</name>`, text and values with
 * only the escapes C14N writes (`&amp;` `&lt;` `&gt;` in text, `&amp;` `&lt;` `&quot;` in values) and
 * no `>` in text. Namespace declarations that repeat the one in scope (C14N drops them) are noted as
 * cuts, ranges of the source left out. Anything else is simply not marked, and the tree walk decides.
 */

export const XML_NS = "http://www.w3.org/XML/1998/namespace";
export const XMLNS_NS = "http://www.w3.org/2000/xmlns/";

abstract class FNode {
  abstract get nodeType(): number;
  parentNode: FNode | null = null;
  firstChild: FNode | null = null;
  lastChild: FNode | null = null;
  nextSibling: FNode | null = null;
  appendChild(c: FNode): void {
    c.parentNode = this;
    if (this.lastChild) this.lastChild.nextSibling = c;
    else this.firstChild = c;
    this.lastChild = c;
  }
}

export class FText extends FNode {
  constructor(public data: string) {
    super();
  }
  get nodeType(): 3 {
    return 3;
  }
  get nodeName(): string {
    return "#text";
  }
  get textContent(): string {
    return this.data;
  }
}

export class FAttr {
  constructor(
    readonly name: string,
    readonly value: string,
    readonly prefix: string | null,
    readonly localName: string,
    readonly namespaceURI: string | null,
  ) {}
  get nodeValue(): string {
    return this.value;
  }
}

export class FAttrs {
  constructor(private readonly list: FAttr[]) {}
  get length(): number {
    return this.list.length;
  }
  item(i: number): FAttr | null {
    return this.list[i] ?? null;
  }
}

/** Shared by every element without attributes (never written to). */
const NO_ATTR_LIST: FAttr[] = [];
const NO_ATTRS = new FAttrs(NO_ATTR_LIST);

/** FElement.flags: the start tag is canonical as written (apart from cuts). */
export const TAG_CANONICAL = 1;
/** FElement.flags: content and end tag are canonical as written (every descendant's tag and content too). */
export const BODY_CANONICAL = 2;
/** FElement.flags: no namespace declaration, prefixed name or prefixed attribute in the subtree below the element. */
export const BODY_PLAIN = 4;
/** FElement.flags: the element's own name and attributes carry no prefix and no namespace declaration. */
export const TAG_PLAIN = 8;
/** FElement.flags: a DTE of an envelope parsed lazily (fastParseEnvelope): its content is built only by `expand`. */
export const OPAQUE = 16;
/** FElement.flags: `expand` (or flatxml.ts `commitIndex`) has run once on this element (its cuts are in the document). */
export const EXPANDED = 32;

export class FElement extends FNode {
  get nodeType(): 1 {
    return 1;
  }
  attributes: FAttrs = NO_ATTRS;
  /** The document (its source text and cuts), for the canonical form from the source. */
  doc: FDocument | null = null;
  /** Source offsets: after the start tag's `>`, and where the end tag starts (self-closing: -1). */
  contentStart = -1;
  contentEnd = -1;
  /** TAG_CANONICAL | BODY_CANONICAL | BODY_PLAIN | TAG_PLAIN. */
  flags = 0;
  /** The namespaces in scope at an OPAQUE element (what its content is parsed with); null for any other. */
  opaqueScope: Scope | null = null;
  constructor(
    readonly nodeName: string,
    readonly prefix: string | null,
    readonly localName: string,
    readonly namespaceURI: string | null,
    private readonly attrList: FAttr[],
  ) {
    super();
    if (attrList.length) this.attributes = new FAttrs(attrList);
  }
  get tagName(): string {
    return this.nodeName;
  }
  getAttribute(name: string): string | null {
    const l = this.attrList;
    for (let i = 0; i < l.length; i++) if (l[i]!.name === name) return l[i]!.value;
    return null;
  }
  hasAttribute(name: string): boolean {
    return this.getAttribute(name) !== null;
  }
  get textContent(): string {
    const f = this.firstChild;
    if (f === null) return "";
    if (f.nodeType === 3 && f.nextSibling === null) return (f as FText).data;
    let s = "";
    const walk = (n: FNode) => {
      for (let c = n.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) s += (c as FText).data;
        else if (c.nodeType === 1) walk(c);
      }
    };
    walk(this);
    return s;
  }
  /**
   * As @xmldom/xmldom 0.9 answers it: the nearest declaration of `prefix` ("" = default namespace).
   * Like xmldom, a null prefix is looked up as the prefix "null" (so it finds nothing in practice).
   */
  lookupNamespaceURI(prefix: string | null): string | null {
    const key = String(prefix);
    const want = key === "" ? "xmlns" : `xmlns:${key}`;
    for (let n: FNode | null = this; n && n.nodeType === 1; n = n.parentNode) {
      const v = (n as FElement).getAttribute(want);
      if (v !== null) return v;
    }
    return null;
  }
}

export class FDocument extends FNode {
  get nodeType(): 9 {
    return 9;
  }
  get nodeName(): string {
    return "#document";
  }
  documentElement: FElement | null = null;
  /** The parsed text (line ends normalised). */
  source = "";
  /**
   * The bytes `source` was decoded from, when each character is the byte at the same offset (ASCII
   * text, nothing normalised): the UTF-8 of a canonical form is then taken from them (c14n.ts
   * `flatCanonicalUtf8`) instead of encoding its text. Null when not known so.
   */
  bytes: Uint8Array | null = null;
  /** Ranges [cuts[2i], cuts[2i+1]) of the source that C14N leaves out: redundant namespace declarations. */
  readonly cuts: number[] = [];
  /** Elements by the value of their ID attribute, document order (XMLDSig references and the wrapping check). */
  readonly ids = new Map<string, FElement[]>();
  /** Every ID value met (expanded DTEs included, even once collapsed), and whether one repeated. */
  readonly idsSeen = new Set<string>();
  duplicateIds = false;
  /** The OPAQUE elements of a lazily parsed envelope, and how many were never expanded. */
  readonly opaque: FElement[] = [];
  unexpanded = 0;
  get textContent(): null {
    return null;
  }
}

const NAME = "[A-Za-z_][A-Za-z0-9_.\\-]*(?::[A-Za-z_][A-Za-z0-9_.\\-]*)?";
/** NAME's characters by code: 1 may start a name (A-Z a-z _), 2 only continue it (0-9 . -). */
export const NAME_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  NAME_CHAR[c] = /[A-Za-z_]/.test(ch) ? 1 : /[0-9.\-]/.test(ch) ? 2 : 0;
}
// Raw tabs and line breaks in attribute values are left out: a parser normalises them (xmldom does).
export const ATTR = new RegExp(`[ \\t\\n]+(${NAME})[ \\t\\n]*=[ \\t\\n]*(?:"([^"<\\t\\n]*)"|'([^'<\\t\\n]*)')`, "y");
export const START_END = /[ \t\n]*(\/?)>/y;

/** The attribute readAttribute read last: its name, its value as written, whether it is written as C14N writes it. */
export const ATTRIBUTE = { name: "", raw: "", canonicalForm: false };
/**
 * The attribute at `p` in a start tag (ATTR's form), into ATTRIBUTE: where it ends, or -1 when none
 * is there. Written as C14N writes it (most are) it is read by hand (plainAttribute), any other form
 * by ATTR (a regex match per attribute cost a tenth of an envelope's parse).
 */
export function readAttribute(text: string, p: number): number {
  const valueEnd = plainAttribute(text, p);
  if (valueEnd > 0) {
    ATTRIBUTE.name = text.slice(p + 1, plainNameEnd);
    ATTRIBUTE.raw = text.slice(plainNameEnd + 2, valueEnd);
    ATTRIBUTE.canonicalForm = true;
    return valueEnd + 1;
  }
  ATTR.lastIndex = p;
  const am = ATTR.exec(text);
  if (!am) return -1;
  const end = ATTR.lastIndex;
  ATTRIBUTE.name = am[1]!;
  ATTRIBUTE.raw = am[2] ?? am[3]!;
  ATTRIBUTE.canonicalForm = am[3] === undefined && text.charCodeAt(p) === 32 && end - p === ATTRIBUTE.name.length + ATTRIBUTE.raw.length + 4;
  return end;
}

/** Where the name of the attribute plainAttribute read last ends (at its `=`). */
let plainNameEnd = 0;
/**
 * An attribute written as C14N writes it from `p` on (one space, a name of ATTR's, `="`, a value
 * without `"` `<` tab or line break, `"`): the offset of its closing quote (its name ends at
 * plainNameEnd); -1 for any other form (then ATTR reads it: it matches this one the same way).
 */
function plainAttribute(text: string, p: number): number {
  if (text.charCodeAt(p) !== 32 || NAME_CHAR[text.charCodeAt(p + 1)] !== 1) return -1;
  let q = p + 2;
  while (NAME_CHAR[text.charCodeAt(q)]! > 0) q++;
  if (text.charCodeAt(q) === 58 /* : */) {
    if (NAME_CHAR[text.charCodeAt(++q)] !== 1) return -1;
    while (NAME_CHAR[text.charCodeAt(++q)]! > 0);
  }
  if (text.charCodeAt(q) !== 61 /* = */ || text.charCodeAt(q + 1) !== 34 /* " */) return -1;
  for (let v = q + 2; v < text.length; v++) {
    const c = text.charCodeAt(v);
    if (c === 34) {
      plainNameEnd = q;
      return v;
    }
    if (c === 60 || c === 9 || c === 10) return -1;
  }
  return -1;
}
export const END = new RegExp(`</(${NAME})[ \\t\\n]*>`, "y");
const DECL = /<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(["'])1\.0\1(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(["'])(?:yes|no)\3)?[ \t\n]*\?>/y;
const WS_ONLY = /^[ \t\n]*$/;
const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6}));/g;
const PREDEFINED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
/** Characters outside XML 1.0's Char production, and surrogates (left to @xmldom/xmldom). */
const NOT_CHAR = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;
const ABOVE_LATIN1 = /[^\x00-\xFF]/;
/** NOT_CHAR's control characters: all it can match in a string of one-byte characters (ISO-8859-1 or ASCII input). */
const CONTROL = /[\x00-\x08\x0B\x0C\x0E-\x1F]/;

/**
 * Whether `text` holds a character NOT_CHAR matches (same answer). A string of one-byte characters
 * (V8 fails ABOVE_LATIN1 on it at once) can only hold its controls: one scan for them (in workerd
 * a third of the time of an indexOf per control character at 8 KB, five sixths at 240 KB).
 */
export function hasNotChar(text: string): boolean {
  return ABOVE_LATIN1.test(text) ? NOT_CHAR.test(text) : CONTROL.test(text);
}

/** Text as written is what C14N writes for it: no `>`, and `&` only in `&amp;` `&lt;` `&gt;`. */
export function canonicalText(raw: string): boolean {
  if (raw.indexOf(">") >= 0) return false;
  for (let i = raw.indexOf("&"); i >= 0; i = raw.indexOf("&", i + 1)) {
    if (!(raw.startsWith("amp;", i + 1) || raw.startsWith("lt;", i + 1) || raw.startsWith("gt;", i + 1))) return false;
  }
  return true;
}

/** An attribute value as written (double-quoted, no tab or line break) is what C14N writes: `&` only in `&amp;` `&lt;` `&quot;`. */
export function canonicalValue(raw: string): boolean {
  for (let i = raw.indexOf("&"); i >= 0; i = raw.indexOf("&", i + 1)) {
    if (!(raw.startsWith("amp;", i + 1) || raw.startsWith("lt;", i + 1) || raw.startsWith("quot;", i + 1))) return false;
  }
  return true;
}

class Unsupported extends Error {}
/** Thrown inside the parsers (here and flatxml.ts) for input outside the subset; never leaves them. */
export const UNSUPPORTED = new Unsupported();

function validCodePoint(c: number): boolean {
  return c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

export function decode(s: string): string {
  if (s.indexOf("&") < 0) return s;
  let bad = false;
  const out = s.replace(ENTITY, (_m, named: string | undefined, dec: string | undefined, hex: string | undefined) => {
    if (named) return PREDEFINED[named]!;
    const cp = dec !== undefined ? parseInt(dec, 10) : parseInt(hex!, 16);
    if (!validCodePoint(cp)) {
      bad = true;
      return "";
    }
    return String.fromCodePoint(cp);
  });
  // A '&' left in the source that was not part of a reference is malformed (or an entity we do not define).
  if (bad || s.replace(ENTITY, "").indexOf("&") >= 0) throw UNSUPPORTED;
  return out;
}

/** How many elements in the subtree of `root` (itself included) have ID="id", from the document's index. */
export function idCount(root: FElement, id: string): number {
  let n = 0;
  for (const e of root.doc?.ids.get(id) ?? []) {
    for (let a: FNode | null = e; a; a = a.parentNode) {
      if (a === root) {
        n++;
        break;
      }
    }
  }
  return n;
}

/** The first element in document order with ID="id" below `root` (root itself excluded, as xml.ts findById). */
export function byId(root: FElement | FDocument, id: string): FElement | undefined {
  const doc = root instanceof FDocument ? root : root.doc;
  for (const e of doc?.ids.get(id) ?? []) {
    for (let a: FNode | null = e.parentNode; a; a = a.parentNode) if (a === root) return e;
  }
  return undefined;
}

export type Scope = Map<string, string>;

/**
 * Parses `text` (line ends already normalised to LF) into the small tree above, or returns null
 * when the text is outside the supported subset (then parse it with @xmldom/xmldom).
 */
export function fastParse(text: string): FDocument | null {
  try {
    return parse(text);
  } catch (e) {
    if (e === UNSUPPORTED) return null;
    throw e;
  }
}

// One function on purpose: the hot loop of every parse (a DTE, an envelope of 500), measured by
// `npm run bench -- engine`; splitting it into per-token calls cost about a fifth of its speed.
function parse(text: string, lazy: Lazy = NOT_LAZY): FDocument {
  if (hasNotChar(text)) throw UNSUPPORTED;
  const doc = new FDocument();
  doc.source = text;
  let pos = 0;
  DECL.lastIndex = 0;
  if (DECL.test(text)) pos = DECL.lastIndex;
  lastTag = null;
  try {
    parseRange(doc, pos, text.length, null, documentScope(), lazy, doc.cuts, null);
  } finally {
    lastTag = null;
  }
  if (!doc.documentElement) throw UNSUPPORTED;
  return doc;
}

/**
 * Parses doc.source from `from` to `to`: the whole document (base null), or the content of `base`
 * (its start tag already parsed, `scope` its namespaces) into `base`. Cuts go to `cuts`, ID values
 * also to `idsOut` when given. Returns the content's BODY_CANONICAL | BODY_PLAIN. With `lazy`, the
 * DTEs of an envelope's SetDTE are not built: they are marked OPAQUE and skipped to their end tag.
 */
function parseRange(doc: FDocument, from: number, to: number, base: FElement | null, baseScope: Scope, lazy: Lazy, cuts: number[], idsOut: string[] | null): number {
  const text = doc.source;
  let pos = from;
  const stack: FElement[] = [];
  const scopes: Scope[] = [];
  // BODY_CANONICAL | BODY_PLAIN of the open element while its content holds up; the enclosing ones' on `bodies`.
  const bodies: number[] = [];
  let body = BODY_CANONICAL | BODY_PLAIN;
  let parent: FNode = base ?? doc;
  let scope = baseScope;
  let rootDone = false;
  const len = to;
  while (pos < len) {
    let lt = text.indexOf("<", pos);
    if (lt >= len) lt = -1;
    const end = lt < 0 ? len : lt;
    if (end > pos) {
      const raw = text.slice(pos, end);
      if (stack.length === 0 && base === null) {
        if (!WS_ONLY.test(raw)) throw UNSUPPORTED;
      } else {
        if (raw.indexOf(">") >= 0) {
          if (raw.indexOf("]]>") >= 0) throw UNSUPPORTED;
          body &= ~BODY_CANONICAL;
        }
        if (raw.indexOf("&") < 0) parent.appendChild(new FText(raw));
        else {
          parent.appendChild(new FText(decode(raw)));
          if (!canonicalText(raw)) body &= ~BODY_CANONICAL;
        }
      }
    }
    if (lt < 0) break;
    pos = lt;
    const next = text.charCodeAt(lt + 1);
    if (next === 47 /* / */) {
      const open = stack.pop();
      if (!open) throw UNSUPPORTED;
      const name = open.nodeName;
      if (lt + 3 + name.length > len) throw UNSUPPORTED;
      let endAt: number;
      if (text.startsWith(name, lt + 2) && text.charCodeAt(lt + 2 + name.length) === 62 /* > */) endAt = lt + 3 + name.length;
      else {
        END.lastIndex = lt;
        const m = END.exec(text);
        if (!m || m[1] !== name) throw UNSUPPORTED;
        endAt = END.lastIndex;
        body &= ~BODY_CANONICAL;
      }
      open.contentEnd = lt;
      const f = (open.flags |= body);
      body = bodies.pop()!;
      if (!(f & TAG_CANONICAL) || !(f & BODY_CANONICAL)) body &= ~BODY_CANONICAL;
      if (!(f & TAG_PLAIN) || !(f & BODY_PLAIN)) body &= ~BODY_PLAIN;
      pos = endAt;
      scope = scopes.pop()!;
      parent = open.parentNode!;
      if (stack.length === 0 && base === null) rootDone = true;
      continue;
    }
    if (next === 33 /* ! */ || next === 63 /* ? */) throw UNSUPPORTED;
    if (rootDone) throw UNSUPPORTED;
    // The root's start tag written as the last document's (an envelope's carries the same
    // namespaces and schema location whoever wrote it): parsed as that one was.
    const isRoot = stack.length === 0 && base === null;
    const root = isRoot ? lastRoot : null;
    if (root !== null && text.slice(lt, lt + root.text.length) === root.text) {
      for (let k = 0; k < root.cuts.length; k++) cuts.push(lt + root.cuts[k]!);
      const el = new FElement(root.qname, root.prefix, root.local, root.ns, root.attrs);
      el.doc = doc;
      el.contentStart = pos = lt + root.text.length;
      el.flags = root.tag;
      parent.appendChild(el);
      doc.documentElement = el;
      stack.push(el);
      bodies.push(body);
      body = BODY_CANONICAL | BODY_PLAIN;
      scopes.push(scope);
      scope = root.elScope;
      parent = el;
      continue;
    }
    // A DTE's start tag written as the one before it, in the same scope (an envelope's DTEs mostly
    // repeat theirs): parsed as that one was (the same text parses the same way).
    const memo = stack.length === 2 ? lastTag : null;
    // (Compared as a slice: startsWith reads a long text a character at a time, xml.ts writtenAt.)
    if (memo !== null && memo.parent === parent && text.slice(lt, lt + memo.text.length) === memo.text) {
      for (let k = 0; k < memo.cuts.length; k++) cuts.push(lt + memo.cuts[k]!);
      const el = new FElement(memo.qname, null, memo.qname, memo.ns, memo.attrs);
      el.doc = doc;
      el.contentStart = lt + memo.text.length;
      el.flags = memo.tag;
      parent.appendChild(el);
      pos = skipOpaque(doc, el, memo.elScope);
      body &= memo.body;
      continue;
    }
    const cutsBefore = cuts.length;
    // The name: NAME (see above), scanned by character classes (a regex here cost a tenth of the parse).
    let p = lt + 1;
    if (NAME_CHAR[text.charCodeAt(p)] !== 1) throw UNSUPPORTED;
    while (NAME_CHAR[text.charCodeAt(++p)]! > 0);
    if (text.charCodeAt(p) === 58 /* : */) {
      if (NAME_CHAR[text.charCodeAt(++p)] !== 1) throw UNSUPPORTED;
      while (NAME_CHAR[text.charCodeAt(++p)]! > 0);
    }
    const qname = text.slice(lt + 1, p);
    let names: string[] | null = null;
    let values: string[] | null = null;
    let own: Scope | null = null;
    // Whether the start tag is canonical as written, and plain (see the flags); `last` is the
    // previous namespace prefix or attribute name, for the order C14N writes them in.
    let tag = qname.indexOf(":") < 0 ? TAG_CANONICAL | TAG_PLAIN : TAG_CANONICAL;
    let inAttrs = false;
    let last = "";
    let id: string | null = null;
    // Attributes only when the name is not directly followed by ">" (most elements have none).
    const after = text.charCodeAt(p);
    for (; after !== 62 /* > */; ) {
      const from = p;
      p = readAttribute(text, p);
      if (p < 0) {
        p = from;
        break;
      }
      const { name, raw: rawValue, canonicalForm } = ATTRIBUTE;
      const value = decode(rawValue);
      names ??= [];
      values ??= [];
      if (names.includes(name)) throw UNSUPPORTED;
      names.push(name);
      values.push(value);
      if (!canonicalForm || !canonicalValue(rawValue)) tag &= ~TAG_CANONICAL;
      if (name === "xmlns" || name.startsWith("xmlns:")) {
        const pre = name === "xmlns" ? "" : name.slice(6);
        if (pre === "xmlns" || (pre === "xml" ? value !== XML_NS : value === XML_NS) || value === XMLNS_NS) throw UNSUPPORTED;
        if (pre !== "" && value === "") throw UNSUPPORTED;
        tag &= ~TAG_PLAIN;
        if (inAttrs || (names.length > 1 && pre <= last)) tag &= ~TAG_CANONICAL;
        last = pre;
        // A declaration equal to the one in scope (or of the xml prefix) is not written by C14N, and changes no scope.
        if (pre === "xml" || (pre === "" ? (scope.get("") ?? "") === value : scope.get(pre) === value)) cuts.push(from, p);
        else (own ??= new Map(scope)).set(pre, value);
      } else {
        if (name === "ID") id = value;
        if (name.indexOf(":") >= 0) tag &= ~(TAG_CANONICAL | TAG_PLAIN);
        else if (inAttrs && name <= last) tag &= ~TAG_CANONICAL;
        inAttrs = true;
        last = name;
      }
    }
    let selfClosing: boolean;
    if (after === 62) {
      selfClosing = false;
      pos = p + 1;
    } else {
      START_END.lastIndex = p;
      const em = START_END.exec(text);
      if (!em) throw UNSUPPORTED;
      pos = START_END.lastIndex;
      selfClosing = em[1] === "/";
      if (pos - p !== 1) tag &= ~TAG_CANONICAL;
    }
    const elScope = own ?? scope;
    const colon = qname.indexOf(":");
    const prefix = colon < 0 ? null : qname.slice(0, colon);
    const local = colon < 0 ? qname : qname.slice(colon + 1);
    let ns: string | null;
    if (prefix === null) ns = elScope.get("") || null;
    else {
      if (prefix === "xmlns") throw UNSUPPORTED;
      const u = elScope.get(prefix);
      if (u === undefined) throw UNSUPPORTED;
      ns = u;
    }
    const attrs: FAttr[] = names === null ? NO_ATTR_LIST : [];
    if (names !== null && values !== null) {
      let expanded: Set<string> | null = null;
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        const c = name.indexOf(":");
        let aPrefix: string | null = null;
        let aLocal = name;
        let aNs: string | null = null;
        if (name === "xmlns") aNs = XMLNS_NS;
        else if (c >= 0) {
          aPrefix = name.slice(0, c);
          aLocal = name.slice(c + 1);
          if (aPrefix === "xmlns") aNs = XMLNS_NS;
          else {
            const u = elScope.get(aPrefix);
            if (u === undefined) throw UNSUPPORTED;
            aNs = u;
          }
        }
        if (aNs !== null && aNs !== XMLNS_NS) {
          const key = `${aNs}|${aLocal}`;
          if (expanded?.has(key)) throw UNSUPPORTED;
          (expanded ??= new Set()).add(key);
        }
        attrs.push(new FAttr(name, values[i]!, aPrefix, aLocal, aNs));
      }
    }
    const el = new FElement(qname, prefix, local, ns, attrs);
    el.doc = doc;
    el.contentStart = pos;
    el.flags = tag;
    if (id !== null) {
      const same = doc.ids.get(id);
      if (same) same.push(el);
      else doc.ids.set(id, [el]);
      if (doc.idsSeen.has(id)) doc.duplicateIds = true;
      doc.idsSeen.add(id);
      idsOut?.push(id);
    }
    parent.appendChild(el);
    if (isRoot) {
      doc.documentElement = el;
      if (!selfClosing && id === null) lastRoot = keptRoot(text.slice(lt, pos), { qname, prefix, local, ns }, attrs, tag, elScope, cuts.slice(cutsBefore), lt);
    }
    if (selfClosing) {
      // C14N writes <a></a>: neither this element nor its ancestors are canonical as written.
      body &= ~BODY_CANONICAL;
      if (!(tag & TAG_PLAIN)) body &= ~BODY_PLAIN;
      if (stack.length === 0 && base === null) rootDone = true;
      continue;
    }
    if (lazy !== NOT_LAZY && skipped(lazy, stack, local, ns)) {
      const kept = (tag & TAG_CANONICAL ? BODY_CANONICAL : 0) | (tag & TAG_PLAIN ? BODY_PLAIN : 0) | ~(BODY_CANONICAL | BODY_PLAIN);
      if (stack.length === 2 && prefix === null && id === null) {
        lastTag = { parent, text: text.slice(lt, pos), qname, ns, attrs, tag, elScope, body: kept, cuts: cuts.slice(cutsBefore).map((c) => c - lt) };
      }
      pos = skipOpaque(doc, el, elScope);
      body &= kept;
      continue;
    }
    stack.push(el);
    bodies.push(body);
    body = BODY_CANONICAL | BODY_PLAIN;
    scopes.push(scope);
    scope = elScope;
    parent = el;
  }
  if (stack.length !== 0) throw UNSUPPORTED;
  return body;
}

/**
 * The start tag of the element a lazy parse left OPAQUE last below `parent` (an envelope's SetDTE),
 * for the next one (a parse is synchronous and drops it when it ends, so it never holds a file): its
 * text, what parsing it gave, the cuts in it as offsets from its `<`, and what it leaves of the
 * parent's content flags.
 */
let lastTag: { parent: FNode; text: string; qname: string; ns: string | null; attrs: FAttr[]; tag: number; elScope: Scope; body: number; cuts: number[] } | null = null;

/**
 * The last document's root start tag (text, what parsing it gave, its cuts as offsets from its
 * `<`), for the next parse. Kept across parses, so every string in it is a copy: a slice would hold
 * the whole received file.
 */
type RootTag = { text: string; qname: string; prefix: string | null; local: string; ns: string | null; attrs: FAttr[]; tag: number; elScope: Scope; cuts: number[] };
let lastRoot: RootTag | null = null;
// xml.ts ownCopy, which this module cannot import (xml.ts imports it).
const copyOf = (s: string) => (" " + s).slice(1);
const copyOrNull = (s: string | null) => (s === null ? null : copyOf(s));

function keptRoot(text: string, name: { qname: string; prefix: string | null; local: string; ns: string | null }, parsed: FAttr[], tag: number, scope: Scope, cuts: number[], lt: number): RootTag {
  const elScope: Scope = new Map();
  for (const [k, v] of scope) elScope.set(copyOf(k), copyOf(v));
  const attrs = parsed.length === 0 ? NO_ATTR_LIST : parsed.map((a) => new FAttr(copyOf(a.name), copyOf(a.value), copyOrNull(a.prefix), copyOf(a.localName), copyOrNull(a.namespaceURI)));
  for (let k = 0; k < cuts.length; k++) cuts[k]! -= lt;
  return { text: copyOf(text), qname: copyOf(name.qname), prefix: copyOrNull(name.prefix), local: copyOf(name.local), ns: copyOrNull(name.ns), attrs, tag, elScope, cuts };
}

/**
 * An element of a lazy parse left OPAQUE (its start tag parsed, `scope` its namespaces): skipped to
 * its end tag, which must be written as </name> (`expand` parses the content in between, and fails,
 * so that the caller parses the whole file, unless it is balanced); where the parse goes on.
 */
function skipOpaque(doc: FDocument, el: FElement, scope: Scope): number {
  const qname = el.nodeName;
  // The end tag searched for is made once per name (a DTE's, one after the other).
  if (qname !== lastSkipped) {
    // A copy, not a slice of the received file.
    lastSkipped = copyOf(qname);
    lastEndTag = `</${qname}>`;
  }
  const close = doc.source.indexOf(lastEndTag, el.contentStart);
  if (close < 0) throw UNSUPPORTED;
  el.contentEnd = close;
  el.flags |= OPAQUE | BODY_CANONICAL | BODY_PLAIN;
  doc.opaque.push(el);
  doc.unexpanded++;
  el.opaqueScope = scope;
  return close + qname.length + 3;
}

let lastSkipped = "";
let lastEndTag = "";

/** What a lazy parse leaves OPAQUE: nothing, the DTEs of an envelope's SetDTE, or also its Caratula and the root's XMLDSig Signature. */
type Lazy = 0 | 1 | 2;
const NOT_LAZY: Lazy = 0;
const LAZY_DTES: Lazy = 1;
const NS_DSIG_URI = "http://www.w3.org/2000/09/xmldsig#";

/** Whether the element just opened (`local` in `ns`, below `stack`) is left OPAQUE by a lazy parse. */
function skipped(lazy: Lazy, stack: FElement[], local: string, ns: string | null): boolean {
  if (stack.length === 2) return (local === "DTE" || (lazy !== LAZY_DTES && local === "Caratula")) && stack[1]!.localName === "SetDTE";
  return lazy !== LAZY_DTES && stack.length === 1 && local === "Signature" && ns === NS_DSIG_URI;
}

/**
 * An envelope (EnvioDTE, EnvioBOLETA) parsed without building its DTEs (OPAQUE until `expand`), so
 * that a large envelope never holds every DTE's tree at once; null when outside the subset. With
 * `parts`, its Caratula and the root's Signature are OPAQUE too (reception reads them over a flat
 * index, exchange/verify-flat.ts). The SetDTE's and the root's canonical flags assume every OPAQUE
 * element canonical until `expand` or `commitIndex` says otherwise: canonicalize them only after
 * every one was seen.
 */
export function fastParseEnvelope(text: string, parts = false): FDocument | null {
  try {
    return parse(text, parts ? 2 : LAZY_DTES);
  } catch (e) {
    if (e === UNSUPPORTED) return null;
    throw e;
  }
}

/**
 * Builds the content of an OPAQUE element (false: outside the subset or not balanced). Its flags
 * become the real ones, and an ancestor whose flags assumed it canonical loses that.
 */
export function expand(el: FElement): boolean {
  const doc = el.doc!;
  const scope = el.opaqueScope;
  if (!scope || el.firstChild) return false;
  const cuts: number[] = [];
  const ids: string[] = [];
  let body: number;
  try {
    body = parseRange(doc, el.contentStart, el.contentEnd, el, scope, NOT_LAZY, cuts, ids);
  } catch (e) {
    if (e === UNSUPPORTED) return false;
    throw e;
  }
  expandedIds.set(el, ids);
  el.flags = (el.flags & ~(BODY_CANONICAL | BODY_PLAIN)) | body;
  for (let a = el.parentNode; a instanceof FElement; a = a.parentNode) {
    if (!(body & BODY_CANONICAL)) a.flags &= ~BODY_CANONICAL;
    if (!(body & BODY_PLAIN)) a.flags &= ~BODY_PLAIN;
  }
  if (!(el.flags & EXPANDED)) {
    doc.unexpanded--;
    // Kept in source order: after the last cut before this element.
    let at = doc.cuts.length;
    while (at > 0 && doc.cuts[at - 2]! > el.contentStart) at -= 2;
    if (cuts.length) doc.cuts.splice(at, 0, ...cuts);
  }
  el.flags |= EXPANDED;
  return true;
}
const expandedIds = new WeakMap<FElement, string[]>();
/** The namespaces in scope at a document's root: only `xml` (a Map built without an iterable: that costs a microsecond per parse). */
export function documentScope(): Scope {
  const scope: Scope = new Map();
  scope.set("xml", XML_NS);
  return scope;
}

/** Whether the canonical form of `el` may be taken from the source: not while an OPAQUE element below it was never expanded. */
export function sourceIsFinal(el: FElement): boolean {
  if (el.doc === null || el.doc.unexpanded === 0) return true;
  // Only the root and SetDTE (depth 1 and 2) hold OPAQUE elements.
  const p = el.parentNode;
  return !(p instanceof FDocument || (p !== null && p.parentNode instanceof FDocument));
}

/** Drops the content `expand` built (its IDs leave the index), so it can be collected. */
export function collapse(el: FElement): void {
  const doc = el.doc!;
  for (const id of expandedIds.get(el) ?? []) {
    const left = (doc.ids.get(id) ?? []).filter((e) => !isWithin(e, el));
    if (left.length) doc.ids.set(id, left);
    else doc.ids.delete(id);
  }
  expandedIds.delete(el);
  el.firstChild = null;
  el.lastChild = null;
}

function isWithin(e: FNode, root: FNode): boolean {
  for (let a: FNode | null = e; a; a = a.parentNode) if (a === root) return true;
  return false;
}
