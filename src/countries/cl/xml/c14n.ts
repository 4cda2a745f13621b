/**
 * Canonical XML 1.0 (http://www.w3.org/TR/2001/REC-xml-c14n-20010315, without comments) over an
 * @xmldom/xmldom tree, for a whole document or for one element's subtree as a document subset (the
 * apex element receives every namespace declaration in scope and the inherited xml:* attributes).
 * Options add the variants inbound verification needs: exclusive C14N (xml-exc-c14n, no inclusive
 * prefixes) and "no namespaces" (every xmlns declaration dropped), and an excluded node (the
 * enveloped-signature transform).
 */
import * as xml from "./xml";
import type { XDocument, XElement, XNode } from "./xml";
import * as fast from "./fastxml";
import * as flat from "./flatxml";
import type { FlatIndex } from "./flatxml";

// Module-local copies of what runs per element: a module runner (the tests', the benches') may
// turn each use of an import into a property read through a getter.
const { escAttr, escText } = xml;
const { BODY_CANONICAL, BODY_PLAIN, FElement, OPAQUE, sourceIsFinal } = fast;
const { elementView } = flat;

const XMLNS = "http://www.w3.org/2000/xmlns/";
const XML_NS = "http://www.w3.org/XML/1998/namespace";

export interface C14nOptions {
  exclusive?: boolean;
  stripNamespaces?: boolean;
  /** A node left out of the output with its subtree (enveloped-signature transform). */
  exclude?: XNode | null;
  /**
   * Canonical forms shared between calls over the same, unchanging tree (inclusive C14N without
   * `exclude` only). Below the apex, inclusive C14N has rendered every namespace in scope, so an
   * element renders exactly its own declarations that differ from its parent's scope: its output is
   * a function of the tree, not of the call. The children of an element with an ID (the signed
   * Documento, SetDTE) are therefore rendered once: verifying an envelope canonicalizes every DTE's
   * content for the envelope's digest and again for the DTE's own.
   */
  memo?: WeakMap<object, string>;
}

type NsMap = Map<string, string>; // prefix ("" = default) -> uri
const NO_SCOPE: NsMap = new Map();

function ownNs(el: XElement): [string, string][] {
  const out: [string, string][] = [];
  const attrs = el.attributes;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs.item(i)!;
    if (a.name === "xmlns") out.push(["", a.value]);
    else if (a.name.startsWith("xmlns:")) out.push([a.name.slice(6), a.value]);
  }
  return out;
}

function inScope(el: XElement): NsMap {
  const chain: XElement[] = [];
  for (let n: XNode | null = el; n && n.nodeType === 1; n = n.parentNode) chain.unshift(n as XElement);
  const m: NsMap = new Map();
  for (const e of chain) for (const [p, u] of ownNs(e)) m.set(p, u);
  return m;
}

function prefixOf(qname: string): string {
  const i = qname.indexOf(":");
  return i < 0 ? "" : qname.slice(0, i);
}

export function canonicalize(node: XElement | XDocument, opts: C14nOptions = {}): string {
  if (node.nodeType === 1) {
    const fast = spanCanonical(node as XElement, opts);
    if (fast !== null) return fast;
  }
  const out: string[] = [];
  if (node.nodeType === 9) {
    const doc = node as XDocument;
    let first = true;
    let afterRoot = false;
    for (let c = doc.firstChild; c; c = c.nextSibling) {
      if (c === opts.exclude) continue;
      if (c.nodeType === 1) {
        if (!first) out.push("\n");
        renderElement(c as XElement, new Map(), null, opts, out);
        afterRoot = true;
        first = false;
      } else if (c.nodeType === 7) {
        const pi = c as unknown as { target: string; data: string };
        if (pi.target === "xml") continue;
        if (afterRoot) out.push("\n");
        out.push(`<?${pi.target}${pi.data ? " " + pi.data : ""}?>`);
        if (!afterRoot) out.push("\n");
        first = true;
      }
    }
    // Normalise: a PI before the root already emitted its newline.
    return out.join("").replace(/\n\n/g, "\n");
  }
  renderElement(node as XElement, new Map(), null, opts, out);
  return out.join("");
}

type Attr = { uri: string; local: string; name: string; value: string };

function byUriLocal(a: Attr, b: Attr): number {
  return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : a.local < b.local ? -1 : a.local > b.local ? 1 : 0;
}

/**
 * One element and its subtree. For inclusive C14N below the apex only the element's own namespace
 * declarations can differ from what its output parent rendered (everything inherited was rendered
 * there or is never rendered), so only those are considered; the apex and exclusive C14N look at
 * the whole scope.
 */
// Long on purpose: it runs once per element of every signed or verified document (the hot path of
// C14N, tuned with `npm run bench -- engine` and checked against libxml2 in test/node).
function renderElement(el: XElement, rendered: NsMap, parentScope: NsMap | null, opts: C14nOptions, out: string[]): void {
  if (el.attributes.length === 0 && parentScope !== null && !opts.exclusive) {
    // No attributes, no declarations, nothing inherited to add: the common element.
    const name = opts.stripNamespaces ? (el.localName ?? el.nodeName) : el.nodeName;
    out.push(`<${name}>`);
    renderChildren(el, rendered, parentScope, opts, out);
    out.push(`</${name}>`);
    return;
  }
  out.push(startTag(el, rendered, parentScope, opts));
  const name = tagName;
  renderChildren(el, tagRendered, tagScope, opts, out);
  out.push(`</${name}>`);
}

/**
 * The canonical form of an element whose source is canonical as written (fastxml.ts notes it while
 * parsing): its start tag as C14N writes an apex (every namespace in scope, inherited xml:*
 * attributes), then its source text up to the end tag without the redundant namespace
 * declarations. Null when the element did not come from the fast parser, its source is not
 * canonical as written, or the options ask for what only the tree walk does (exclusive C14N, an
 * excluded node, namespaces stripped from a subtree that has any).
 */
function spanCanonical(el: XElement, opts: C14nOptions): string | null {
  if (!(el instanceof FElement) || opts.exclusive || opts.exclude) return null;
  const f = el.flags;
  if (!(f & BODY_CANONICAL) || (opts.stripNamespaces && !(f & BODY_PLAIN)) || !sourceIsFinal(el)) return null;
  const start = startTag(el as unknown as XElement, new Map(), null, opts);
  return start + sourceWithoutCuts(el.doc!.source, el.doc!.cuts, el.contentStart, el.contentEnd) + `</${tagName}>`;
}

/** Inclusive C14N of a fast-parsed element from its source (spanCanonical), or null where only the tree walk can say. */
export function sourceCanonical(el: XElement): string | null {
  return spanCanonical(el, INCLUSIVE);
}

/**
 * Inclusive C14N (`strip`: without namespaces) of element `i` of a flat index (flatxml.ts), from
 * the source as spanCanonical does; null when its source is not canonical as written (then only
 * the tree walk can say).
 */
export function flatCanonical(x: FlatIndex, i: number, strip: boolean): string | null {
  const f = x.flags[i]!;
  if (!(f & BODY_CANONICAL) || (strip && !(f & BODY_PLAIN))) return null;
  const start = startTag(elementView(x, i) as unknown as XElement, NO_SCOPE, null, strip ? STRIP : INCLUSIVE, x.scope[i]);
  return start + sourceWithoutCuts(x.doc.source, x.cuts, x.cs[i]!, x.ce[i]!) + `</${tagName}>`;
}
const STRIP: C14nOptions = { stripNamespaces: true };

/**
 * flatCanonical (inclusive) as the UTF-8 bytes a digest reads: copied from the document's source
 * bytes when it has them (FDocument.bytes: ASCII, each character at its byte's offset) instead of
 * building the text and encoding it; null where flatCanonical gives null.
 */
export function flatCanonicalUtf8(x: FlatIndex, i: number, scratch = false): Uint8Array<ArrayBuffer> | null {
  const bytes = x.doc.bytes;
  if (bytes === null) {
    const text = flatCanonical(x, i, false);
    return text === null ? null : utf8Of(text, scratch);
  }
  if (!(x.flags[i]! & BODY_CANONICAL)) return null;
  const start = startTag(elementView(x, i) as unknown as XElement, NO_SCOPE, null, INCLUSIVE, x.scope[i]);
  return spanUtf8(bytes, x.cuts, x.cs[i]!, x.ce[i]!, start, tagName, scratch);
}

/** sourceCanonical as UTF-8 bytes, from the source bytes when the document has them (flatCanonicalUtf8). */
export function sourceCanonicalUtf8(el: XElement, scratch = false): Uint8Array<ArrayBuffer> | null {
  const bytes = el instanceof FElement ? el.doc!.bytes : null;
  if (bytes === null) {
    const text = sourceCanonical(el);
    return text === null ? null : utf8Of(text, scratch);
  }
  const f = (el as unknown as InstanceType<typeof FElement>).flags;
  if (!(f & BODY_CANONICAL) || !sourceIsFinal(el as unknown as InstanceType<typeof FElement>)) return null;
  const fe = el as unknown as InstanceType<typeof FElement>;
  const start = apexTag(fe);
  return spanUtf8(bytes, fe.doc!.cuts, fe.contentStart, fe.contentEnd, start, tagName, scratch);
}

/**
 * startTag of `el` as an apex (every namespace in scope, the xml:* attributes it inherits): a
 * function of the names and attributes of `el` and its ancestors, which a sender writes the same
 * in envelope after envelope (EnvioDTE's namespaces, SetDTE's ID). The last one is kept with what
 * it was made from (copies: they are slices of a received file) and taken again when they compare
 * equal; sets tagName as startTag does.
 */
function apexTag(el: InstanceType<typeof FElement>): string {
  const last = lastApexTag;
  if (last !== null && sameChain(el, last.chain)) {
    tagName = last.name;
    return last.tag;
  }
  const tag = startTag(el as unknown as XElement, new Map(), null, INCLUSIVE);
  const chain: (string | number)[] = [];
  for (let e: XNode | null = el as unknown as XElement; e !== null && e.nodeType === 1; e = e.parentNode) {
    const attrs = (e as XElement).attributes;
    chain.push(xml.ownCopy((e as XElement).nodeName), attrs.length);
    for (let i = 0; i < attrs.length; i++) chain.push(xml.ownCopy(attrs.item(i)!.name), xml.ownCopy(attrs.item(i)!.value));
  }
  lastApexTag = { chain, tag: xml.ownCopy(tag), name: xml.ownCopy(tagName) };
  return tag;
}
let lastApexTag: { chain: (string | number)[]; tag: string; name: string } | null = null;

/** Whether `el` and its ancestors have the names and attributes listed in `chain` (apexTag). */
function sameChain(el: InstanceType<typeof FElement>, chain: (string | number)[]): boolean {
  let k = 0;
  for (let e: XNode | null = el as unknown as XElement; e !== null && e.nodeType === 1; e = e.parentNode) {
    const attrs = (e as XElement).attributes;
    if (chain[k] !== (e as XElement).nodeName || chain[k + 1] !== attrs.length) return false;
    k += 2;
    for (let i = 0; i < attrs.length; i++, k += 2) {
      const a = attrs.item(i)!;
      if (chain[k] !== a.name || chain[k + 1] !== a.value) return false;
    }
  }
  return k === chain.length;
}

const utf8 = new TextEncoder();
/**
 * The namespace declarations inclusive C14N writes on an apex element whose scope is `scope` (every
 * namespace in scope but xml's, the default first, then by prefix), as startTag writes them: for an
 * element read in one pass (exchange/verify-pass.ts), whose apex tag is `<name` + these + its
 * attributes as written + `>`.
 */
export function apexNamespaces(scope: ReadonlyMap<string, string>): string {
  const decls: [string, string][] = [];
  for (const [p, u] of scope) if (p !== "xml" && u !== "") decls.push([p, u]);
  if (decls.length > 1) decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let s = "";
  for (const [p, u] of decls) s += p ? ` xmlns:${p}="${escAttr(u)}"` : ` xmlns="${escAttr(u)}"`;
  return s;
}

/**
 * The canonical form, as UTF-8, of an element of `doc` whose content (`from` to `to`) is canonical
 * as written without cuts, behind its apex start tag `start` + `startTail` (a part that repeats, and
 * one that may not: spanUtf8): from the source bytes when the document has them (as
 * flatCanonicalUtf8), else the text encoded; in the scratch buffer with `scratch`.
 */
export function spanCanonicalUtf8(doc: InstanceType<typeof fast.FDocument>, start: string, from: number, to: number, name: string, scratch = false, startTail = ""): Uint8Array<ArrayBuffer> {
  const bytes = doc.bytes;
  if (bytes === null) return utf8Of(start + startTail + doc.source.slice(from, to) + `</${name}>`, scratch);
  return spanUtf8(bytes, NO_CUTS, from, to, start, name, scratch, startTail);
}
const NO_CUTS: number[] = [];

/** The index of the first cut (start, end pairs, in source order) that starts at or after `from`, counted in pairs. */
function firstCutFrom(cuts: number[], from: number): number {
  let lo = 0;
  let hi = cuts.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cuts[mid << 1]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The buffer the `scratch` forms of flatCanonicalUtf8 and sourceCanonicalUtf8 write into, one per
 * isolate, reused: for input that a digest or a verify reads at once (WebCrypto copies the bytes it
 * is given when it is called, before its promise settles), so that a DTE's Documento or an
 * envelope's SetDTE costs no fresh ArrayBuffer (an allocation per digest was the larger part of
 * copying them). Kept up to SCRATCH_MAX bytes; a longer form gets a buffer of its own. 4 MiB holds
 * the SetDTE of an envelope of some 800 DTEs (500 DTEs: 2.4 MB, whose fresh buffer per envelope,
 * with the collections it brought on, was 3 % of its verification in a workerd profile); the
 * isolate keeps that much only once it has verified an envelope that large.
 */
let scratchBuffer = new Uint8Array(0);
const SCRATCH_MAX = 4 << 20;
function output(length: number, scratch: boolean): Uint8Array<ArrayBuffer> {
  if (!scratch || length > SCRATCH_MAX) return new Uint8Array(length);
  if (scratchBuffer.length < length) scratchBuffer = new Uint8Array(Math.min(SCRATCH_MAX, Math.max(length, 2 * scratchBuffer.length, 8192)));
  return scratchBuffer.subarray(0, length);
}

/** The UTF-8 of `text`: a fresh buffer, or with `scratch` a view of the scratch buffer (as spanUtf8). */
function utf8Of(text: string, scratch: boolean): Uint8Array<ArrayBuffer> {
  // At most three bytes per UTF-16 code unit.
  if (!scratch || 3 * text.length > SCRATCH_MAX) return utf8.encode(text) as Uint8Array<ArrayBuffer>;
  const out = output(3 * text.length, true);
  return out.subarray(0, utf8.encodeInto(text, out).written);
}

/**
 * `start` + `startTail` (UTF-8), the source bytes from `from` to `to` without the cuts inside, and
 * `</name>` (an ASCII name), in one buffer: a fresh one, or with `scratch` a view of the isolate's
 * scratch buffer, which the next scratch form writes over (the caller hands it to WebCrypto before
 * anything else runs). `start` is the part of a start tag that repeats (a memo's string: its bytes
 * are kept, startBytes), `startTail` a short one that may not (a DTE's ID).
 */
function spanUtf8(bytes: Uint8Array, cuts: number[], from: number, to: number, start: string, name: string, scratch = false, startTail = ""): Uint8Array<ArrayBuffer> {
  const lo = firstCutFrom(cuts, from);
  let body = to - from;
  let end = lo << 1;
  for (; end < cuts.length && cuts[end]! < to; end += 2) body -= cuts[end + 1]! - cuts[end]!;
  const head = startBytes(start);
  let out: Uint8Array<ArrayBuffer>;
  let w = 0;
  if (head !== null && isAsciiText(startTail)) {
    out = output(head.length + startTail.length + body + name.length + 3, scratch);
    out.set(head);
    w = head.length;
    for (let k = 0; k < startTail.length; k++) out[w++] = startTail.charCodeAt(k);
  } else {
    // A character reference in an attribute value: the start tag's UTF-8 is longer than its text.
    const tag = utf8.encode(start + startTail);
    out = output(tag.length + body + name.length + 3, scratch);
    out.set(tag);
    w = tag.length;
  }
  let at = from;
  for (let c = lo << 1; c < end; c += 2) {
    out.set(bytes.subarray(at, cuts[c]), w);
    w += cuts[c]! - at;
    at = cuts[c + 1]!;
  }
  out.set(bytes.subarray(at, to), w);
  w += to - at;
  out[w++] = 60; // <
  out[w++] = 47; // /
  for (let k = 0; k < name.length; k++) out[w++] = name.charCodeAt(k);
  out[w] = 62; // >
  return out;
}

/**
 * The bytes of an ASCII start tag (null for any other), the last few kept: the tags of a DTE's
 * SignedInfo and of its signed branch, of an envelope's SetDTE, come from memos and repeat DTE after
 * DTE (a tag of some 150 characters copied a character at a time cost some 0.5 µs in workerd, its
 * native encoding 0.2 µs, copying its kept bytes a tenth of that).
 */
function startBytes(start: string): Uint8Array | null {
  for (let k = 0; k < keptStarts.length; k++) if (keptStarts[k] === start) return keptStartBytes[k]!;
  const b = utf8.encode(start);
  if (b.length !== start.length) return null;
  keptStarts[nextKept] = xml.ownCopy(start);
  keptStartBytes[nextKept] = b;
  nextKept = (nextKept + 1) % KEPT_STARTS;
  return b;
}
const KEPT_STARTS = 4;
const keptStarts: string[] = [];
const keptStartBytes: Uint8Array[] = [];
let nextKept = 0;

function isAsciiText(s: string): boolean {
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) > 0x7f) return false;
  return true;
}
const INCLUSIVE: C14nOptions = {};

/** The source text from `from` to `to` without the cuts (redundant namespace declarations) inside. */
function sourceWithoutCuts(source: string, cuts: number[], from: number, to: number): string {
  const lo = firstCutFrom(cuts, from);
  let out = "";
  let at = from;
  for (let i = lo << 1; i < cuts.length && cuts[i]! < to; i += 2) {
    out += source.slice(at, cuts[i]);
    at = cuts[i + 1]!;
  }
  return out + source.slice(at, to);
}

// What startTag worked out besides the tag: the element's name as written, its namespace scope and
// the namespaces rendered up to it (module state instead of a result object: it runs per element).
let tagName = "";
let tagScope: NsMap = new Map();
let tagRendered: NsMap = tagScope;

/** The canonical start tag of `el` (apex when parentScope is null, its scope `apexScope` when known), `>` included; sets tagName, tagScope, tagRendered. */
function startTag(el: XElement, rendered: NsMap, parentScope: NsMap | null, opts: C14nOptions, apexScope?: NsMap): string {
  const apex = parentScope === null;
  const a0 = el.attributes;
  const nAttrs = a0.length;
  let own: [string, string][] | null = null;
  for (let i = 0; i < nAttrs; i++) {
    const a = a0.item(i)!;
    const n = a.name;
    if (n === "xmlns") (own ??= []).push(["", a.value]);
    else if (n.charCodeAt(0) === 120 /* x */ && n.startsWith("xmlns:")) (own ??= []).push([n.slice(6), a.value]);
  }
  let scope: NsMap;
  // Without namespaces (the TED's DD, a CAF) no declaration is rendered: the apex needs no scope.
  // (A flat index knows an apex's scope: apexScope, which may also hold "xml", never rendered.)
  if (apex) scope = opts.stripNamespaces ? NO_SCOPE : (apexScope ?? inScope(el));
  else if (own === null) scope = parentScope;
  else {
    scope = new Map(parentScope);
    for (const [p, u] of own) scope.set(p, u);
  }

  // Namespace declarations to render
  let decls: [string, string][] | null = null;
  let nextRendered: NsMap = rendered;
  if (!opts.stripNamespaces) {
    let candidates: Iterable<[string, string]>;
    if (opts.exclusive) {
      const used = new Set<string>([prefixOf(el.nodeName)]);
      for (let i = 0; i < nAttrs; i++) {
        const a = a0.item(i)!;
        if (a.name === "xmlns" || a.name.startsWith("xmlns:")) continue;
        const p = prefixOf(a.name);
        if (p && p !== "xml") used.add(p);
      }
      candidates = [...used].map((p) => [p, scope.get(p) ?? ""] as [string, string]);
    } else if (apex) {
      candidates = scope.entries();
    } else {
      candidates = own ?? [];
    }
    for (const [p, u] of candidates) {
      if (p === "xml") continue;
      const prev = rendered.get(p) ?? "";
      if (p === "") {
        if (u === prev) continue;
      } else if (u === "" || rendered.get(p) === u) continue;
      (decls ??= []).push([p, u]);
      if (nextRendered === rendered) nextRendered = new Map(rendered);
      nextRendered.set(p, u);
    }
    if (decls && decls.length > 1) decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  const name = opts.stripNamespaces ? (el.localName ?? el.nodeName) : el.nodeName;
  let s = "<" + name;
  if (decls) for (const [p, u] of decls) s += p ? ` xmlns:${p}="${escAttr(u)}"` : ` xmlns="${escAttr(u)}"`;

  // Attributes
  const inherit = apex && !opts.exclusive;
  if (nAttrs > (own?.length ?? 0) || inherit) {
    const attrs: Attr[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < nAttrs; i++) {
      const a = a0.item(i)!;
      if (a.name === "xmlns" || a.name.startsWith("xmlns:")) continue;
      const uri = a.namespaceURI ?? "";
      if (opts.stripNamespaces && uri && uri !== XML_NS) {
        attrs.push({ uri: "", local: a.localName ?? a.name, name: a.localName ?? a.name, value: a.value });
        continue;
      }
      attrs.push({ uri, local: a.localName ?? a.name, name: a.name, value: a.value });
      seen.add(a.name);
    }
    if (inherit) {
      // Inherited xml:* attributes (inclusive C14N of a document subset).
      for (let p = el.parentNode; p && p.nodeType === 1; p = p.parentNode) {
        const pa = (p as XElement).attributes;
        for (let i = 0; i < pa.length; i++) {
          const a = pa.item(i)!;
          if (a.name.startsWith("xml:") && !a.name.startsWith("xmlns") && !seen.has(a.name)) {
            seen.add(a.name);
            attrs.push({ uri: XML_NS, local: a.localName ?? a.name.slice(4), name: a.name, value: a.value });
          }
        }
      }
    }
    if (attrs.length > 1) attrs.sort(byUriLocal);
    for (const a of attrs) s += ` ${a.name}="${escAttr(a.value)}"`;
  }
  tagName = name;
  tagScope = scope;
  tagRendered = nextRendered;
  return s + ">";
}

function renderChildren(el: XElement, nextRendered: NsMap, scope: NsMap, opts: C14nOptions, out: string[]): void {
  // A DTE of a lazily parsed envelope whose content is not built (fastxml.ts expand): never render it as empty.
  if (el.firstChild === null && el instanceof FElement && el.flags & OPAQUE) throw new Error("The content of this DTE was not parsed");
  const memo = opts.memo && !opts.exclude && !opts.exclusive && !opts.stripNamespaces && el.getAttribute("ID") !== null ? opts.memo : undefined;
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c === opts.exclude) continue;
    switch (c.nodeType) {
      case 1: {
        if (!memo) {
          renderElement(c as XElement, nextRendered, scope, opts, out);
          break;
        }
        let text = memo.get(c);
        if (text === undefined) {
          const start = out.length;
          renderElement(c as XElement, nextRendered, scope, opts, out);
          memo.set(c, (text = out.splice(start).join("")));
        }
        out.push(text);
        break;
      }
      case 3:
      case 4:
        out.push(escText((c as unknown as { data: string }).data));
        break;
      case 7: {
        const pi = c as unknown as { target: string; data: string };
        out.push(`<?${pi.target}${pi.data ? " " + pi.data : ""}?>`);
        break;
      }
      default:
        break; // comments and others are not part of C14N without comments
    }
  }
}

export { XMLNS };
