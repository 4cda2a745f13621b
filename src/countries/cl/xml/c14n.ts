/**
 * Canonical XML 1.0 (http://www.w3.org/TR/2001/REC-xml-c14n-20010315, without comments) over an
 * parsed tree (tree.ts), for a whole document or for one element's subtree as a document subset (the
 * apex element receives every namespace declaration in scope and the inherited xml:* attributes).
 * Options add the variants inbound verification needs: exclusive C14N (xml-exc-c14n, no inclusive
 * prefixes), "no namespaces" (every xmlns declaration dropped), a boundary (the scope starts at an
 * ancestor, as if it were the document's root) and an excluded node (the enveloped-signature
 * transform). A serialiser of a parsed tree: it reads no text.
 */
import { escAttr, escText, type XDocument, type XElement, type XNode } from "./xml";

const XML_NS = "http://www.w3.org/XML/1998/namespace";

export interface C14nOptions {
  exclusive?: boolean;
  stripNamespaces?: boolean;
  /** A node left out of the output with its subtree (enveloped-signature transform). */
  exclude?: XNode | null;
  /** Child nodes left out of the output with their subtrees (a stored DTE's unsigned additions). */
  omit?: ReadonlySet<XNode>;
  /**
   * The apex's namespace scope starts at this ancestor (or the apex itself): prefixed declarations
   * made above it are not in scope; the default namespace in effect at it is. The form of a DTE
   * signed standalone as `<DTE xmlns="http://www.sii.cl/SiiDte">` and then put in an envelope.
   */
  boundary?: XElement | null;
  /**
   * A default namespace in scope above the apex's scope (the document's root or `boundary`): the
   * form of a DTE signed as `<DTE xmlns="http://www.sii.cl/SiiDte">` whose declaration was then
   * dropped from its root. A default declaration in the tree still overrides it.
   */
  defaultNamespace?: string;
  /**
   * Canonical forms shared between calls over the same, unchanging tree (inclusive C14N without
   * `exclude` or `boundary` only). Below the apex an element renders exactly its own declarations
   * that differ from its parent's scope, so the output of the children of an element with an ID
   * (the signed Documento, SetDTE) is a function of the tree: rendered once for an envelope's
   * digest and reused for each DTE's own.
   */
  memo?: WeakMap<object, string>;
}

type NsMap = ReadonlyMap<string, string>; // prefix ("" = default) -> uri

function ownNs(el: XElement): [string, string][] {
  const out: [string, string][] = [];
  const attrs = el.attributes;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i]!;
    if (a.name === "xmlns") out.push(["", a.value]);
    else if (a.name.startsWith("xmlns:")) out.push([a.name.slice(6), a.value]);
  }
  return out;
}

/** The namespaces in scope at `el`, from the document's root or from `boundary` (C14nOptions.boundary), below `defaultNamespace`. */
function inScope(el: XElement, boundary: XElement | null, defaultNamespace?: string): NsMap {
  const chain: XElement[] = [];
  let n: XNode | null = el;
  for (; n && n.nodeType === 1; n = n.parentNode) {
    chain.unshift(n as XElement);
    if (n === boundary) break;
  }
  const m = new Map<string, string>();
  if (defaultNamespace) m.set("", defaultNamespace);
  if (boundary && n === boundary) {
    const def = boundary.lookupNamespaceURI("");
    if (def) m.set("", def);
  }
  for (const e of chain) for (const [p, u] of ownNs(e)) m.set(p, u);
  return m;
}

function prefixOf(qname: string): string {
  const i = qname.indexOf(":");
  return i < 0 ? "" : qname.slice(0, i);
}

export function canonicalize(node: XElement | XDocument, opts: C14nOptions = {}): string {
  const out: string[] = [];
  if (node.nodeType !== 9) {
    renderElement(node as XElement, new Map(), null, opts, out);
    return out.join("");
  }
  // A document: its root element, with the processing instructions around it on lines of their own.
  let afterRoot = false;
  for (let c = (node as XDocument).firstChild; c; c = c.nextSibling) {
    if (c === opts.exclude) continue;
    if (c.nodeType === 1) {
      renderElement(c as XElement, new Map(), null, opts, out);
      afterRoot = true;
    } else if (c.nodeType === 7) {
      const pi = c as unknown as { target: string; data: string };
      if (pi.target === "xml") continue;
      out.push(`${afterRoot ? "\n" : ""}<?${pi.target}${pi.data ? " " + pi.data : ""}?>${afterRoot ? "" : "\n"}`);
    }
  }
  return out.join("");
}

type Attr = { uri: string; local: string; name: string; value: string };

function byUriLocal(a: Attr, b: Attr): number {
  return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : a.local < b.local ? -1 : a.local > b.local ? 1 : 0;
}

/** One element and its subtree; `parentScope` null marks the apex. */
function renderElement(el: XElement, rendered: NsMap, parentScope: NsMap | null, opts: C14nOptions, out: string[]): void {
  const apex = parentScope === null;
  const own = ownNs(el);
  let scope: NsMap;
  if (apex) scope = opts.stripNamespaces ? new Map() : inScope(el, opts.boundary ?? null, opts.defaultNamespace);
  else if (own.length === 0) scope = parentScope;
  else {
    const m = new Map(parentScope);
    for (const [p, u] of own) m.set(p, u);
    scope = m;
  }
  const { decls, nextRendered } = namespaceDecls(el, scope, rendered, apex ? [...scope] : own, opts);
  const name = opts.stripNamespaces ? (el.localName ?? el.nodeName) : el.nodeName;
  let s = "<" + name;
  for (const [p, u] of decls) s += p ? ` xmlns:${p}="${escAttr(u)}"` : ` xmlns="${escAttr(u)}"`;
  for (const a of attributesOf(el, apex && !opts.exclusive, opts)) s += ` ${a.name}="${escAttr(a.value)}"`;
  out.push(s + ">");
  renderChildren(el, nextRendered, scope, opts, out);
  out.push(`</${name}>`);
}

/** The namespace declarations an element renders, sorted, and what is rendered below it. */
function namespaceDecls(el: XElement, scope: NsMap, rendered: NsMap, candidates: [string, string][], opts: C14nOptions): { decls: [string, string][]; nextRendered: NsMap } {
  const decls: [string, string][] = [];
  if (opts.stripNamespaces) return { decls, nextRendered: rendered };
  if (opts.exclusive) {
    const used = new Set<string>([prefixOf(el.nodeName)]);
    const attrs = el.attributes;
    for (let i = 0; i < attrs.length; i++) {
      const n = attrs[i]!.name;
      if (n === "xmlns" || n.startsWith("xmlns:")) continue;
      const p = prefixOf(n);
      if (p && p !== "xml") used.add(p);
    }
    candidates = [...used].map((p) => [p, scope.get(p) ?? ""]);
  }
  let nextRendered = rendered;
  for (const [p, u] of candidates) {
    if (p === "xml") continue;
    const prev = rendered.get(p) ?? "";
    if (p === "" ? u === prev : u === "" || rendered.get(p) === u) continue;
    decls.push([p, u]);
    if (nextRendered === rendered) nextRendered = new Map(rendered);
    (nextRendered as Map<string, string>).set(p, u);
  }
  decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { decls, nextRendered };
}

/** An element's attributes in canonical order; `inherit`: with the xml:* attributes of its ancestors (an inclusive apex). */
function attributesOf(el: XElement, inherit: boolean, opts: C14nOptions): Attr[] {
  const attrs: Attr[] = [];
  const seen = new Set<string>();
  const a0 = el.attributes;
  for (let i = 0; i < a0.length; i++) {
    const a = a0[i]!;
    if (a.name === "xmlns" || a.name.startsWith("xmlns:")) continue;
    const uri = a.namespaceURI ?? "";
    const local = a.localName ?? a.name;
    if (opts.stripNamespaces && uri && uri !== XML_NS) attrs.push({ uri: "", local, name: local, value: a.value });
    else attrs.push({ uri, local, name: a.name, value: a.value });
    seen.add(a.name);
  }
  if (inherit) {
    for (let p = el.parentNode; p && p.nodeType === 1; p = p.parentNode) {
      const pa = (p as XElement).attributes;
      for (let i = 0; i < pa.length; i++) {
        const a = pa[i]!;
        if (!a.name.startsWith("xml:") || seen.has(a.name)) continue;
        seen.add(a.name);
        attrs.push({ uri: XML_NS, local: a.localName ?? a.name.slice(4), name: a.name, value: a.value });
      }
    }
  }
  return attrs.sort(byUriLocal);
}

function renderChildren(el: XElement, rendered: NsMap, scope: NsMap, opts: C14nOptions, out: string[]): void {
  const memo = opts.memo && !opts.exclude && !opts.omit && !opts.exclusive && !opts.stripNamespaces && !opts.boundary && !opts.defaultNamespace && el.getAttribute("ID") !== null ? opts.memo : undefined;
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c === opts.exclude || opts.omit?.has(c)) continue;
    switch (c.nodeType) {
      case 1: {
        if (!memo) {
          renderElement(c as XElement, rendered, scope, opts, out);
          break;
        }
        let text = memo.get(c);
        if (text === undefined) {
          const start = out.length;
          renderElement(c as XElement, rendered, scope, opts, out);
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

