/**
 * A flat index of one element's subtree, built from the source text without a tree of objects:
 * per element its name, namespace, parent, first child, next sibling, source offsets and the
 * canonical-form flags of fastxml.ts; attributes in parallel arrays. Reception verifies each DTE of
 * an envelope over this index (exchange/verify-flat.ts: the schema walk, the signature, the stamp)
 * instead of building its tree (fastxml.ts `expand`); a profile showed building the tree as a
 * third of the JavaScript time of verifying a DTE.
 *
 * It accepts exactly what `expand` accepts (same subset, same checks, same flags, cuts and IDs),
 * and like it returns null for anything outside the subset. Elements are numbers: 0 is the element
 * the index was built from (its start tag parsed already, by the envelope's lazy parse), -1 is none.
 */
import * as fast from "./fastxml";
import { FDocument, FElement, type Scope } from "./fastxml";

// Module-local copies of what the hot loop reads: a module runner (the tests', the benches') may
// turn each use of an import into a property read through a getter, once per character here.
const { ATTRIBUTE, BODY_CANONICAL, BODY_PLAIN, END, EXPANDED, NAME_CHAR, OPAQUE, readAttribute, START_END, TAG_CANONICAL, TAG_PLAIN, UNSUPPORTED, XML_NS, XMLNS_NS } = fast;
const { canonicalText, canonicalValue, decode, documentScope } = fast;

export interface FlatIndex {
  doc: FDocument;
  /** Element 0. */
  root: FElement;
  /** How many elements and attributes (the arrays may be longer: an index is reused from DTE to DTE, see indexElement). */
  n: number;
  na: number;
  qname: string[];
  local: string[];
  ns: (string | null)[];
  parent: number[];
  first: number[];
  next: number[];
  /** Where the start tag begins, where its content begins (after `>`), where the end tag begins, after the end tag (self-closing: -1 content offsets). */
  start: number[];
  cs: number[];
  ce: number[];
  end: number[];
  /** fastxml.ts flags: TAG_CANONICAL | BODY_CANONICAL | BODY_PLAIN | TAG_PLAIN. */
  flags: number[];
  /** The namespaces in scope at each element (its own declarations included; prefix "" the default, "xml" always there). */
  scope: Scope[];
  /** Attributes of element i: positions attrAt[i] to attrAt[i] + attrN[i] of the a* arrays. */
  attrAt: number[];
  attrN: number[];
  aName: string[];
  aValue: string[];
  aLocal: string[];
  aNs: (string | null)[];
  /** Elements by ID value (document order, element 0 included), and the ID values in the order met. */
  ids: Map<string, number[]>;
  idList: string[];
  /** Ranges of the source C14N leaves out (redundant namespace declarations), in source order. */
  cuts: number[];
}

/**
 * The flat index of `el`'s subtree (an OPAQUE DTE of a lazily parsed envelope, or any element of a
 * fast-parsed tree); null outside the subset. `reuse`: an index no longer needed, whose arrays are
 * written over (growing arrays element by element cost more than building the tree: the DTEs of
 * an envelope share one index, one after the other).
 */
export function indexElement(el: FElement, reuse?: FlatIndex): FlatIndex | null {
  if (!el.doc || el.contentStart < 0) return null;
  try {
    return build(el, el.opaqueScope ?? scopeOf(el), reuse);
  } catch (e) {
    if (e === UNSUPPORTED) return null;
    throw e;
  }
}

/** The namespaces in scope at a tree element (its own declarations included). */
function scopeOf(el: FElement): Scope {
  const chain: FElement[] = [];
  for (let n: unknown = el; n instanceof FElement; n = n.parentNode) chain.unshift(n);
  const scope = documentScope();
  for (const e of chain) {
    for (let i = 0; i < e.attributes.length; i++) {
      const a = e.attributes.item(i)!;
      if (a.name === "xmlns") scope.set("", a.value);
      else if (a.name.startsWith("xmlns:")) scope.set(a.name.slice(6), a.value);
    }
  }
  return scope;
}

function newIndex(el: FElement, scope: Scope, reuse?: FlatIndex): FlatIndex {
  const x: FlatIndex = reuse ?? {
    doc: el.doc!, root: el, n: 0, na: 0, qname: [], local: [], ns: [], parent: [], first: [], next: [], start: [], cs: [], ce: [], end: [], flags: [], scope: [],
    attrAt: [], attrN: [], aName: [], aValue: [], aLocal: [], aNs: [], ids: new Map(), idList: [], cuts: [],
  };
  if (reuse) {
    x.doc = el.doc!;
    x.root = el;
    x.n = 0;
    x.na = 0;
    x.ids.clear();
    x.idList.length = 0;
    x.cuts.length = 0;
  }
  const attrs = el.attributes;
  pushElement(x, el.nodeName, el.localName, known(el.namespaceURI), -1, -1, el.contentStart, el.flags & (TAG_CANONICAL | TAG_PLAIN), scope);
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs.item(i)!;
    x.aName[i] = a.name;
    x.aValue[i] = a.value;
    x.aLocal[i] = a.localName;
    x.aNs[i] = a.namespaceURI;
    if (a.name === "ID") x.ids.set(a.value, [0]);
  }
  x.na = attrs.length;
  x.attrN[0] = attrs.length;
  return x;
}

function pushElement(x: FlatIndex, qname: string, local: string, ns: string | null, parent: number, start: number, cs: number, flags: number, scope: Scope): number {
  const i = x.n++;
  x.qname[i] = qname;
  x.local[i] = local;
  x.ns[i] = ns;
  x.parent[i] = parent;
  x.first[i] = -1;
  x.next[i] = -1;
  x.start[i] = start;
  x.cs[i] = cs;
  x.ce[i] = -1;
  x.end[i] = -1;
  x.flags[i] = flags;
  x.scope[i] = scope;
  x.attrAt[i] = x.na;
  x.attrN[i] = 0;
  return i;
}

// One function on purpose, like fastxml.ts parseRange, which it follows step by step (the hot loop
// of reception: every element of every received DTE). The open elements are the chain of `parent`
// (their scopes the index's), and what a text run, an end tag, a canonical attribute or a tag's end
// usually is, is read character by character here instead of by a search or a regex, which the
// unusual forms still go through (same answers).
function build(el: FElement, baseScope: Scope, reuse?: FlatIndex): FlatIndex {
  const x = newIndex(el, baseScope, reuse);
  const text = x.doc.source;
  const len = el.contentEnd;
  let pos = el.contentStart;
  const bodies: number[] = [];
  /** The last child element of the open element so far (to link siblings), -1 none yet. */
  let prev = -1;
  let body = BODY_CANONICAL | BODY_PLAIN;
  let parent = 0;
  let scope = baseScope;
  // The `&`s of the source, searched once per document (most DTEs have none): `amps[ampAt]` is the next one.
  const amps = ampersands(x.doc);
  let ampAt = firstAtOrAfter(amps, pos);
  /** The default namespace in scope (scope.get("")), kept along with the scope. */
  let defaultNs = known(scope.get("") || null);
  const defaults: (string | null)[] = [];
  while (pos < len) {
    // The text run up to the next `<`: a short one read here (noting a `>` or `&` in it), a long one searched.
    let lt = pos;
    let seen = 0;
    const stop = pos + RUN < len ? pos + RUN : len;
    for (let c = text.charCodeAt(lt); lt < stop && c !== 60 /* < */; c = text.charCodeAt(++lt)) {
      if (c === 62 /* > */) seen |= 1;
      else if (c === 38 /* & */) seen |= 2;
    }
    if (lt === stop && stop < len) {
      lt = text.indexOf("<", stop);
      seen = 3;
    }
    if (lt >= len) lt = -1;
    const end = lt < 0 ? len : lt;
    if (end > pos && seen !== 0) {
      const gt = seen & 1 ? text.indexOf(">", pos) : -1;
      if (gt >= 0 && gt < end) {
        const r = text.indexOf("]]>", pos);
        if (r >= 0 && r + 3 <= end) throw UNSUPPORTED;
        body &= ~BODY_CANONICAL;
      }
      while (ampAt < amps.length && amps[ampAt]! < pos) ampAt++;
      if (seen & 2 && ampAt < amps.length && amps[ampAt]! < end) {
        const raw = text.slice(pos, end);
        decode(raw);
        if (!canonicalText(raw)) body &= ~BODY_CANONICAL;
      }
    }
    if (lt < 0) break;
    pos = lt;
    const nextCh = text.charCodeAt(lt + 1);
    if (nextCh === 47 /* / */) {
      const open = parent;
      if (open === 0) throw UNSUPPORTED;
      const name = x.qname[open]!;
      const nameEnd = lt + 2 + name.length;
      if (nameEnd + 1 > len) throw UNSUPPORTED;
      let endAt = text.charCodeAt(nameEnd) === 62 /* > */ && text.startsWith(name, lt + 2) ? nameEnd + 1 : -1;
      if (endAt < 0) {
        END.lastIndex = lt;
        const m = END.exec(text);
        if (!m || m[1] !== name) throw UNSUPPORTED;
        endAt = END.lastIndex;
        body &= ~BODY_CANONICAL;
      }
      x.ce[open] = lt;
      x.end[open] = endAt;
      const f = (x.flags[open]! |= body);
      body = bodies.pop()!;
      if (!(f & TAG_CANONICAL) || !(f & BODY_CANONICAL)) body &= ~BODY_CANONICAL;
      if (!(f & TAG_PLAIN) || !(f & BODY_PLAIN)) body &= ~BODY_PLAIN;
      pos = endAt;
      parent = x.parent[open]!;
      scope = x.scope[parent]!;
      defaultNs = defaults.pop()!;
      prev = open;
      continue;
    }
    if (nextCh === 33 /* ! */ || nextCh === 63 /* ? */) throw UNSUPPORTED;
    let p = lt + 1;
    let colon = -1;
    if (NAME_CHAR[text.charCodeAt(p)] !== 1) throw UNSUPPORTED;
    while (NAME_CHAR[text.charCodeAt(++p)]! > 0);
    if (text.charCodeAt(p) === 58 /* : */) {
      colon = p - lt - 1;
      if (NAME_CHAR[text.charCodeAt(++p)] !== 1) throw UNSUPPORTED;
      while (NAME_CHAR[text.charCodeAt(++p)]! > 0);
    }
    const qname = text.slice(lt + 1, p);
    let tag = colon < 0 ? TAG_CANONICAL | TAG_PLAIN : TAG_CANONICAL;
    let inAttrs = false;
    let last = "";
    let id: string | null = null;
    let own: Scope | null = null;
    const attrFrom = x.na;
    let prefixedAttrs = false;
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
      for (let k = attrFrom; k < x.na; k++) if (x.aName[k] === name) throw UNSUPPORTED;
      x.aName[x.na] = name;
      x.aValue[x.na++] = value;
      if (!canonicalForm || !canonicalValue(rawValue)) tag &= ~TAG_CANONICAL;
      if (name === "xmlns" || name.startsWith("xmlns:")) {
        const pre = name === "xmlns" ? "" : name.slice(6);
        if (pre === "xmlns" || (pre === "xml" ? value !== XML_NS : value === XML_NS) || value === XMLNS_NS) throw UNSUPPORTED;
        if (pre !== "" && value === "") throw UNSUPPORTED;
        tag &= ~TAG_PLAIN;
        if (inAttrs || (x.na - attrFrom > 1 && pre <= last)) tag &= ~TAG_CANONICAL;
        last = pre;
        if (pre === "xml" || (pre === "" ? (scope.get("") ?? "") === value : scope.get(pre) === value)) x.cuts.push(from, p);
        own ??= new Map(scope);
        own.set(pre, known(value)!);
      } else {
        if (name === "ID") id = value;
        if (name.indexOf(":") >= 0) {
          tag &= ~(TAG_CANONICAL | TAG_PLAIN);
          prefixedAttrs = true;
        } else if (inAttrs && name <= last) tag &= ~TAG_CANONICAL;
        inAttrs = true;
        last = name;
      }
    }
    let selfClosing: boolean;
    const close = text.charCodeAt(p);
    if (close === 62 /* > */) {
      selfClosing = false;
      pos = p + 1;
    } else if (close === 47 /* / */ && text.charCodeAt(p + 1) === 62) {
      selfClosing = true;
      pos = p + 2;
      tag &= ~TAG_CANONICAL;
    } else {
      START_END.lastIndex = p;
      const em = START_END.exec(text);
      if (!em) throw UNSUPPORTED;
      pos = START_END.lastIndex;
      selfClosing = em[1] === "/";
      if (pos - p !== 1) tag &= ~TAG_CANONICAL;
    }
    const elScope = own ?? scope;
    let ns: string | null;
    let local = qname;
    const elDefault = own === null ? defaultNs : own.get("") || null;
    if (colon < 0) ns = elDefault;
    else {
      const prefix = qname.slice(0, colon);
      local = qname.slice(colon + 1);
      if (prefix === "xmlns") throw UNSUPPORTED;
      const u = elScope.get(prefix);
      if (u === undefined) throw UNSUPPORTED;
      ns = u;
    }
    attributeNames(x, attrFrom, elScope, prefixedAttrs);
    const i = pushElement(x, qname, local, ns, parent, lt, pos, tag, elScope);
    x.attrAt[i] = attrFrom;
    x.attrN[i] = x.na - attrFrom;
    if (prev < 0) x.first[parent] = i;
    else x.next[prev] = i;
    if (id !== null) {
      const same = x.ids.get(id);
      if (same) same.push(i);
      else x.ids.set(id, [i]);
      x.idList.push(id);
    }
    if (selfClosing) {
      body &= ~BODY_CANONICAL;
      if (!(tag & TAG_PLAIN)) body &= ~BODY_PLAIN;
      x.end[i] = pos;
      prev = i;
      continue;
    }
    bodies.push(body);
    body = BODY_CANONICAL | BODY_PLAIN;
    scope = elScope;
    defaults.push(defaultNs);
    defaultNs = elDefault;
    prev = -1;
    parent = i;
  }
  if (parent !== 0) throw UNSUPPORTED;
  x.flags[0] = (x.root.flags & (TAG_CANONICAL | TAG_PLAIN)) | body;
  x.ce[0] = len;
  return x;
}

/** How far build reads a text run character by character before it searches for its end. */
const RUN = 48;

const NS_SII = "http://www.sii.cl/SiiDte";
const NS_DSIG = "http://www.w3.org/2000/09/xmldsig#";
/** The SII's and XMLDSig's namespace as the constants the schema walk compares with (the same string object compares at once). */
function known(uri: string | null): string | null {
  return uri === NS_SII ? NS_SII : uri === NS_DSIG ? NS_DSIG : uri;
}

/** The index of the first entry of the sorted `list` that is at least `pos`. */
function firstAtOrAfter(list: number[], pos: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The offsets of every `&` in a document's source, found once per document. */
const ampersandsOf = new WeakMap<FDocument, number[]>();
function ampersands(doc: FDocument): number[] {
  let list = ampersandsOf.get(doc);
  if (!list) {
    list = [];
    for (let i = doc.source.indexOf("&"); i >= 0; i = doc.source.indexOf("&", i + 1)) list.push(i);
    ampersandsOf.set(doc, list);
  }
  return list;
}

/** Local names and namespaces of the attributes from `from` on (fastxml.ts does the same per attribute). */
function attributeNames(x: FlatIndex, from: number, scope: Scope, prefixed: boolean): void {
  let expanded: Set<string> | null = null;
  for (let k = from; k < x.na; k++) {
    const name = x.aName[k]!;
    if (!prefixed && name !== "xmlns" && !name.startsWith("xmlns:")) {
      x.aLocal[k] = name;
      x.aNs[k] = null;
      continue;
    }
    const c = name.indexOf(":");
    let aLocal = name;
    let aNs: string | null = null;
    if (name === "xmlns") aNs = XMLNS_NS;
    else if (c >= 0) {
      const aPrefix = name.slice(0, c);
      aLocal = name.slice(c + 1);
      if (aPrefix === "xmlns") aNs = XMLNS_NS;
      else {
        const u = scope.get(aPrefix);
        if (u === undefined) throw UNSUPPORTED;
        aNs = u;
      }
    }
    if (aNs !== null && aNs !== XMLNS_NS) {
      const key = `${aNs}|${aLocal}`;
      expanded ??= new Set();
      if (expanded.has(key)) throw UNSUPPORTED;
      expanded.add(key);
    }
    x.aLocal[k] = aLocal;
    x.aNs[k] = aNs;
  }
}

/**
 * What `expand` records in the document for an element it built, for an element verified over its
 * index instead: its canonical flags (and its ancestors'), its cuts, its IDs (a repeated one marks
 * the document), and that it was seen (the envelope's canonical form from the source needs every DTE seen).
 */
export function commitIndex(x: FlatIndex): void {
  commitSeen(x.root, x.flags[0]! & (BODY_CANONICAL | BODY_PLAIN), x.cuts, x.idList);
}

/**
 * Records an OPAQUE element of a lazily parsed envelope as seen without building it (commitIndex,
 * and exchange/verify-pass.ts after reading a DTE in one pass): its content's flags `body`
 * (BODY_CANONICAL | BODY_PLAIN, passed on to its ancestors), the cuts in it, its IDs.
 */
export function commitSeen(el: FElement, body: number, cuts: readonly number[], ids: readonly string[]): void {
  const doc = el.doc!;
  el.flags = (el.flags & ~(BODY_CANONICAL | BODY_PLAIN)) | body;
  for (let a = el.parentNode; a instanceof FElement; a = a.parentNode) {
    if (!(body & BODY_CANONICAL)) a.flags &= ~BODY_CANONICAL;
    if (!(body & BODY_PLAIN)) a.flags &= ~BODY_PLAIN;
  }
  if (!(el.flags & EXPANDED)) {
    if (el.flags & OPAQUE) doc.unexpanded--;
    let at = doc.cuts.length;
    while (at > 0 && doc.cuts[at - 2]! > el.contentStart) at -= 2;
    if (cuts.length) doc.cuts.splice(at, 0, ...cuts);
  }
  el.flags |= EXPANDED;
  for (const id of ids) {
    if (doc.idsSeen.has(id)) doc.duplicateIds = true;
    doc.idsSeen.add(id);
  }
}

/**
 * The trimmed text of the first child named `names[k]` of an OPAQUE element whose content is plain
 * as written (start tags `<name>` with no attributes, prefix or white space, end tags `</name>`, no
 * `&`, no `>` in text, balanced), as childTextOf over its index would give it ("" for each name
 * absent: undefined), and the element recorded as seen as commitIndex would (canonical, plain, no
 * cuts, no IDs); null for anything else (then build its index). An envelope's Caratula, without an
 * index: its nine elements cost a third of the time of the DTE's eighty over `build`.
 */
export function plainChildTexts(el: FElement, names: readonly string[]): (string | undefined)[] | null {
  const doc = el.doc;
  if (!doc || el.contentStart < 0 || !(el.flags & OPAQUE) || el.flags & EXPANDED) return null;
  const text = doc.source;
  const len = el.contentEnd;
  let pos = el.contentStart;
  // (The element's own text searched: every `&` of the document is found only when an index needs them.)
  if (text.slice(pos, len).indexOf("&") >= 0) return null;
  const out: (string | undefined)[] = new Array(names.length).fill(undefined);
  const stack: string[] = [];
  let childAt = 0;
  let nested = false;
  while (pos < len) {
    let lt = text.indexOf("<", pos);
    if (lt < 0 || lt >= len) lt = len;
    const gt = text.indexOf(">", pos);
    if (gt >= 0 && gt < lt) return null;
    if (lt === len) break;
    if (text.charCodeAt(lt + 1) === 47 /* / */) {
      const name = stack.pop();
      if (name === undefined || lt + 3 + name.length > len || !text.startsWith(name, lt + 2) || text.charCodeAt(lt + 2 + name.length) !== 62) return null;
      if (stack.length === 0) {
        const k = names.indexOf(name);
        if (k >= 0 && out[k] === undefined) {
          if (nested) return null;
          out[k] = text.slice(childAt, lt).trim();
        }
      }
      pos = lt + 3 + name.length;
      continue;
    }
    let p = lt + 1;
    if (NAME_CHAR[text.charCodeAt(p)] !== 1) return null;
    while (NAME_CHAR[text.charCodeAt(++p)]! > 0);
    if (text.charCodeAt(p) !== 62 /* > */) return null;
    if (stack.length === 0) {
      childAt = p + 1;
      nested = false;
    } else nested = true;
    stack.push(text.slice(lt + 1, p));
    pos = p + 1;
  }
  if (stack.length !== 0) return null;
  el.flags |= BODY_CANONICAL | BODY_PLAIN | EXPANDED;
  doc.unexpanded--;
  return out;
}

/**
 * An index kept for reuse (indexElement's `reuse`) without holding on to its document: its
 * references to the source (the document, names, values, scopes) are dropped, its arrays keep their size.
 */
export function releaseIndex(x: FlatIndex): FlatIndex {
  // Released already (taken for an envelope that needed no index): nothing refers to a document.
  if (x.doc === null) return x;
  x.doc = null as unknown as FDocument;
  x.root = null as unknown as FElement;
  for (const a of [x.qname, x.local, x.ns, x.scope, x.aName, x.aValue, x.aLocal, x.aNs] as unknown[][]) a.fill(null);
  x.ids.clear();
  x.idList.length = 0;
  return x;
}

/** The first child element of `i` with that local name, or -1. */
export function child(x: FlatIndex, i: number, local: string): number {
  for (let c = x.first[i]!; c >= 0; c = x.next[c]!) if (x.local[c] === local) return c;
  return -1;
}

/** The value of attribute `name` of `i`, or null. */
export function attr(x: FlatIndex, i: number, name: string): string | null {
  const at = x.attrAt[i]!;
  for (let k = at; k < at + x.attrN[i]!; k++) if (x.aName[k] === name) return x.aValue[k]!;
  return null;
}

/** The text content of `i` (all descendant text, decoded), as FElement.textContent. */
export function textOf(x: FlatIndex, i: number): string {
  const text = x.doc.source;
  const c0 = x.first[i]!;
  if (c0 < 0) {
    if (x.ce[i]! < 0) return "";
    const raw = text.slice(x.cs[i], x.ce[i]);
    return raw.indexOf("&") < 0 ? raw : decode(raw);
  }
  let s = "";
  let at = x.cs[i]!;
  for (let c = c0; c >= 0; c = x.next[c]!) {
    s += gap(text, at, x.start[c]!) + textOf(x, c);
    at = x.end[c]!;
  }
  return s + gap(text, at, x.ce[i]!);
}

function gap(text: string, from: number, to: number): string {
  if (to <= from) return "";
  const raw = text.slice(from, to);
  return raw.indexOf("&") < 0 ? raw : decode(raw);
}

/** childText of xml.ts: the trimmed text of the first child named `local`, undefined without one. */
export function childTextOf(x: FlatIndex, i: number, local: string): string | undefined {
  const c = child(x, i, local);
  return c < 0 ? undefined : textOf(x, c).trim();
}

/** Whether the text between `i`'s child elements (decoded) holds anything but white space. */
export function hasText(x: FlatIndex, i: number, nonSpace: RegExp): boolean {
  const text = x.doc.source;
  let at = x.cs[i]!;
  if (x.ce[i]! < 0) return false;
  for (let c = x.first[i]!; ; c = x.next[c]!) {
    const to = c >= 0 ? x.start[c]! : x.ce[i]!;
    for (let k = at; k < to; k++) {
      const ch = text.charCodeAt(k);
      if (ch !== 10 && ch !== 32 && ch !== 9) {
        if (nonSpace.test(gap(text, at, to))) return true;
        break;
      }
    }
    if (c < 0) return false;
    at = x.end[c]!;
  }
}

/**
 * Element `i` as the part of the DOM interface C14N's start tag reads (name, attributes, parent
 * chain): element 0 is the tree element the index was built from, whose parents are the tree's.
 */
export function elementView(x: FlatIndex, i: number): FElement | FlatView {
  return i === 0 ? x.root : new FlatView(x, i);
}

export class FlatView {
  constructor(
    private readonly x: FlatIndex,
    private readonly i: number,
  ) {}
  get nodeType(): 1 {
    return 1;
  }
  get nodeName(): string {
    return this.x.qname[this.i]!;
  }
  get localName(): string {
    return this.x.local[this.i]!;
  }
  get parentNode(): FElement | FlatView {
    return elementView(this.x, this.x.parent[this.i]!);
  }
  /** The element is its own attribute list (length, item), as C14N reads it. */
  get attributes(): FlatView {
    return this;
  }
  get length(): number {
    return this.x.attrN[this.i]!;
  }
  item(k: number): { name: string; value: string; localName: string; namespaceURI: string | null } | null {
    const { x, i } = this;
    if (k >= x.attrN[i]!) return null;
    const at = x.attrAt[i]! + k;
    return { name: x.aName[at]!, value: x.aValue[at]!, localName: x.aLocal[at]!, namespaceURI: x.aNs[at]! };
  }
}
