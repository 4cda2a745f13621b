/**
 * The C14N implementation as it was before its speed-up (src/countries/cl/c14n.ts, now xml/c14n.ts, at commit c7a0bfb),
 * kept only as the reference the optimised one is compared with in c14n.test.ts.
 */
/* eslint-disable */
/**
 * Canonical XML 1.0 (http://www.w3.org/TR/2001/REC-xml-c14n-20010315, without comments) over an
 * parsed tree (src/countries/cl/xml/tree.ts), for a whole document or for one element's subtree as a document subset (the
 * apex element receives every namespace declaration in scope and the inherited xml:* attributes).
 * Options add the variants inbound verification needs: exclusive C14N (xml-exc-c14n, no inclusive
 * prefixes) and "no namespaces" (every xmlns declaration dropped), and an excluded node (the
 * enveloped-signature transform).
 */
import { escAttr, escText, type XDocument, type XElement, type XNode } from "../../src/countries/cl/xml/xml";

const XMLNS = "http://www.w3.org/2000/xmlns/";
const XML_NS = "http://www.w3.org/XML/1998/namespace";

export interface C14nOptions {
  exclusive?: boolean;
  stripNamespaces?: boolean;
  /** A node left out of the output with its subtree (enveloped-signature transform). */
  exclude?: XNode | null;
}

type NsMap = Map<string, string>; // prefix ("" = default) -> uri

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

export function canonicalizeReference(node: XElement | XDocument, opts: C14nOptions = {}): string {
  const out: string[] = [];
  if (node.nodeType === 9) {
    const doc = node as XDocument;
    let afterRoot = false;
    for (let c = doc.firstChild; c; c = c.nextSibling) {
      if (c === opts.exclude) continue;
      if (c.nodeType === 1) {
        renderElement(c as XElement, new Map(), null, opts, out);
        afterRoot = true;
      } else if (c.nodeType === 7) {
        const pi = c as unknown as { target: string; data: string };
        if (pi.target === "xml") continue;
        if (afterRoot) out.push("\n");
        out.push(`<?${pi.target}${pi.data ? " " + pi.data : ""}?>`);
        if (!afterRoot) out.push("\n");
      }
    }
    // (Whitespace text around an excluded node stays: "\n\n" where an enveloped Signature was.)
    return out.join("");
  }
  renderElement(node as XElement, new Map(), null, opts, out);
  return out.join("");
}

function renderElement(el: XElement, rendered: NsMap, parentScope: NsMap | null, opts: C14nOptions, out: string[]): void {
  const apex = parentScope === null;
  let scope: NsMap;
  if (apex) scope = inScope(el);
  else {
    const own = ownNs(el);
    if (own.length === 0) scope = parentScope;
    else {
      scope = new Map(parentScope);
      for (const [p, u] of own) scope.set(p, u);
    }
  }

  // Namespace declarations to render
  const decls: [string, string][] = [];
  const nextRendered: NsMap = new Map(rendered);
  if (!opts.stripNamespaces) {
    let candidates: [string, string][];
    if (opts.exclusive) {
      const used = new Set<string>([prefixOf(el.nodeName)]);
      const attrs = el.attributes;
      for (let i = 0; i < attrs.length; i++) {
        const a = attrs[i]!;
        if (a.name === "xmlns" || a.name.startsWith("xmlns:")) continue;
        const p = prefixOf(a.name);
        if (p && p !== "xml") used.add(p);
      }
      candidates = [...used].map((p) => [p, scope.get(p) ?? ""] as [string, string]);
    } else {
      candidates = [...scope.entries()];
    }
    for (const [p, u] of candidates) {
      if (p === "xml") continue;
      const prev = rendered.get(p) ?? "";
      if (p === "") {
        if (u === prev) continue;
      } else if (u === "" || rendered.get(p) === u) continue;
      decls.push([p, u]);
      nextRendered.set(p, u);
    }
  }
  decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

  // Attributes
  const attrs: { uri: string; local: string; name: string; value: string }[] = [];
  const seen = new Set<string>();
  const a0 = el.attributes;
  for (let i = 0; i < a0.length; i++) {
    const a = a0[i]!;
    if (a.name === "xmlns" || a.name.startsWith("xmlns:")) continue;
    const uri = a.namespaceURI ?? "";
    if (opts.stripNamespaces && uri && uri !== XML_NS) {
      attrs.push({ uri: "", local: a.localName ?? a.name, name: a.localName ?? a.name, value: a.value });
      continue;
    }
    attrs.push({ uri, local: a.localName ?? a.name, name: a.name, value: a.value });
    seen.add(a.name);
  }
  if (apex && !opts.exclusive) {
    // Inherited xml:* attributes (inclusive C14N of a document subset).
    for (let p = el.parentNode; p && p.nodeType === 1; p = p.parentNode) {
      const pa = (p as XElement).attributes;
      for (let i = 0; i < pa.length; i++) {
        const a = pa[i]!;
        if (a.name.startsWith("xml:") && !a.name.startsWith("xmlns") && !seen.has(a.name)) {
          seen.add(a.name);
          attrs.push({ uri: XML_NS, local: a.localName ?? a.name.slice(4), name: a.name, value: a.value });
        }
      }
    }
  }
  attrs.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : a.local < b.local ? -1 : a.local > b.local ? 1 : 0));

  const name = opts.stripNamespaces ? (el.localName ?? el.nodeName) : el.nodeName;
  let s = `<${name}`;
  for (const [p, u] of decls) s += p ? ` xmlns:${p}="${escAttr(u)}"` : ` xmlns="${escAttr(u)}"`;
  for (const a of attrs) s += ` ${a.name}="${escAttr(a.value)}"`;
  out.push(s + ">");
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c === opts.exclude) continue;
    switch (c.nodeType) {
      case 1:
        renderElement(c as XElement, nextRendered, scope, opts, out);
        break;
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
  out.push(`</${name}>`);
}


