/**
 * XML plumbing: ISO-8859-1 bytes, escaping in canonical (C14N) form, the strict parser (tree.ts)
 * and a tiny element writer. The engine writes every XML it produces as text whose
 * escaping already matches C14N, so the bytes that are signed are the bytes that are shipped.
 */
import { EngineError } from "../errors";
import { buildTree, type XDocument, type XElement, type XNode } from "./tree";

export type { XAttr, XDocument, XElement, XNode } from "./tree";

export const NS_SII = "http://www.sii.cl/SiiDte";
export const NS_DSIG = "http://www.w3.org/2000/09/xmldsig#";
export const NS_XSI = "http://www.w3.org/2001/XMLSchema-instance";

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ABOVE_FF = /[^\x00-\xff]/;
const utf8Encoder = new TextEncoder();
/** WHATWG "latin1" is windows-1252: equal to ISO-8859-1 unless a byte 0x80-0x9F maps above U+00FF. */
const w1252Decoder = new TextDecoder("latin1");
/** For ASCII bytes (the same text in every encoding we read): in workerd the UTF-8 decoder is 2–4× faster than windows-1252's. */
const asciiDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** A copy of `s` that does not hold on to the text it was sliced from (a cache key or memo must not keep a whole received file alive). */
export const ownCopy = (s: string) => (" " + s).slice(1);

/** The text of bytes known to be ASCII (isAscii). */
export function asciiText(b: Uint8Array): string {
  return asciiDecoder.decode(b);
}

/** ISO-8859-1 bytes of a string; throws CHARACTER_NOT_LATIN1 for code points above U+00FF. */
export function encodeLatin1(s: string, field = "xml"): Uint8Array<ArrayBuffer> {
  // ASCII text (most XML): the native encoder gives the same bytes (in a buffer of their own).
  if (s.length > 64 && ASCII_ONLY.test(s)) return utf8Encoder.encode(s) as Uint8Array<ArrayBuffer>;
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) throw new EngineError("CHARACTER_NOT_LATIN1", `${field} contains U+${c.toString(16).toUpperCase().padStart(4, "0")}, not representable in ISO-8859-1`, { field });
    out[i] = c;
  }
  return out;
}

export function decodeLatin1(b: Uint8Array): string {
  if (b.length > 64) {
    if (isAscii(b)) return asciiText(b);
    // Native decoding; exact unless a byte 0x80-0x9F took a windows-1252 meaning (then a char > U+00FF shows).
    const s = w1252Decoder.decode(b);
    if (!ABOVE_FF.test(s)) return s;
  }
  let s = "";
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  return s;
}

/**
 * Whether every byte is below 0x80 (ASCII): then the text decoded from them, as ISO-8859-1 or as
 * UTF-8, has each character at its byte's offset. Four bytes at a time (a regex over the decoded
 * text scans a character at a time, several times slower).
 */
export function isAscii(b: Uint8Array): boolean {
  let i = 0;
  const n = b.length;
  for (; i < n && (b.byteOffset + i) % 4 !== 0; i++) if (b[i]! & 0x80) return false;
  // (Bytes that end before a four-byte boundary: no words, and no view to make at an unaligned offset.)
  if (i === n) return true;
  const words = new Uint32Array(b.buffer, b.byteOffset + i, (n - i) >> 2);
  const m = words.length;
  let k = 0;
  // Eight words to a test: a test per word took twice as long.
  for (; k + 8 <= m; k += 8) if ((words[k]! | words[k + 1]! | words[k + 2]! | words[k + 3]! | words[k + 4]! | words[k + 5]! | words[k + 6]! | words[k + 7]!) & 0x80808080) return false;
  for (; k < m; k++) if (words[k]! & 0x80808080) return false;
  for (i += m << 2; i < n; i++) if (b[i]! & 0x80) return false;
  return true;
}

/**
 * Decodes XML bytes using the encoding of the XML declaration (ISO-8859-1/Latin-1/Windows-1252 ->
 * Latin-1, UTF-8 otherwise). Without a declaration: UTF-8 if the bytes are valid UTF-8, else Latin-1.
 * `forceLatin1` is for CAF files, which are Latin-1 whatever they declare.
 */
export function decodeXmlBytes(input: Uint8Array | ArrayBuffer | string, forceLatin1 = false): string {
  if (typeof input === "string") return input;
  const b = input instanceof Uint8Array ? input : new Uint8Array(input);
  let start = 0;
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return new TextDecoder("utf-8").decode(b.subarray(3));
  if (forceLatin1) return decodeLatin1(b);
  // ASCII reads the same whatever the declaration says (and has no BOM).
  if (b.length > 64 && isAscii(b)) return asciiText(b);
  const head = decodeLatin1(b.subarray(start, Math.min(b.length, 200)));
  const m = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(head);
  const enc = m?.[1]?.toLowerCase();
  if (enc && /^(iso-?8859-1|latin-?1|windows-1252|cp1252|us-ascii|ascii)$/.test(enc)) return decodeLatin1(b);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(b);
  } catch {
    return decodeLatin1(b);
  }
}

/**
 * A document's bytes from its text (a canonical form, which has no XML declaration) behind a
 * declaration of the encoding they are written in: ISO-8859-1, the SII's, when every character
 * fits, else UTF-8.
 */
export function xmlDocumentBytes(text: string): { bytes: Uint8Array; charset: "ISO-8859-1" | "UTF-8" } {
  if (!ABOVE_FF.test(text)) return { bytes: encodeLatin1(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${text}`), charset: "ISO-8859-1" };
  return { bytes: utf8Encoder.encode(`<?xml version="1.0" encoding="UTF-8"?>\n${text}`), charset: "UTF-8" };
}

/** C14N text escaping: & < > and CR. */
const TEXT_SPECIAL = /[&<>\r]/;
const ATTR_SPECIAL = /[&<"\t\n\r]/;
export function escText(s: string): string {
  if (!TEXT_SPECIAL.test(s)) return s;
  return s.replace(/[&<>\r]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&#xD;"));
}

/** C14N attribute escaping: & < " TAB LF CR. */
export function escAttr(s: string): string {
  if (!ATTR_SPECIAL.test(s)) return s;
  return s.replace(/[&<"\t\n\r]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === '"' ? "&quot;" : c === "\t" ? "&#x9;" : c === "\n" ? "&#xA;" : "&#xD;",
  );
}

/**
 * Parses XML text strictly (no recovery) into the tree of tree.ts, the one parser of every XML this
 * service reads. Throws XML_MALFORMED. Line ends are normalised to LF, attribute values as XML 1.0
 * says (whitespace characters to spaces).
 */
export function parseXml(text: string, what = "XML"): XDocument {
  // A file that does not begin with markup is not XML at all (a text, a PDF): say that, not the parser's complaint about its content.
  if (!/^\uFEFF?\s*</.test(text.slice(0, 1024))) throw new EngineError("XML_MALFORMED", `${what} is not XML: it does not begin with "<"`);
  const doc = buildTree(text, what);
  if (!doc.documentElement) throw new EngineError("XML_MALFORMED", `${what} has no root element`);
  return doc;
}

/** Child elements of `el` with a given local name (any namespace). */
export function childElements(el: XElement, localName?: string): XElement[] {
  const out: XElement[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (localName === undefined || (n as XElement).localName === localName)) out.push(n as XElement);
  }
  return out;
}

export function firstChild(el: XElement, localName: string): XElement | undefined {
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as XElement).localName === localName) return n as XElement;
  }
  return undefined;
}

/** Text of the first child element with that local name, trimmed; undefined if absent. */
export function childText(el: XElement, localName: string): string | undefined {
  const c = firstChild(el, localName);
  return c ? (c.textContent ?? "").trim() : undefined;
}

/** All descendant elements with a local name, document order. */
export function descendants(root: XElement | XDocument, localName: string): XElement[] {
  const out: XElement[] = [];
  const walk = (n: XNode) => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1) {
        if ((c as XElement).localName === localName) out.push(c as XElement);
        walk(c);
      }
    }
  };
  walk(root as XNode);
  return out;
}

/** Finds the element whose attribute ID equals id, in document order (`skip`: subtrees not looked into). */
export function findById(root: XDocument | XElement, id: string, skip?: ReadonlySet<XNode>): XElement | undefined {
  let found: XElement | undefined;
  const walk = (n: XNode): boolean => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1 && !skip?.has(c)) {
        if ((c as XElement).getAttribute("ID") === id) {
          found = c as XElement;
          return true;
        }
        if (walk(c)) return true;
      }
    }
    return false;
  };
  walk(root as XNode);
  return found;
}

/** How many elements have the attribute ID `id`: `root` itself (an element) and its descendants, `skip`'s subtrees left out. */
export function countById(root: XDocument | XElement, id: string, skip?: ReadonlySet<XNode>): number {
  let n = root.nodeType === 1 && (root as XElement).getAttribute("ID") === id ? 1 : 0;
  const walk = (p: XNode) => {
    for (let c = p.firstChild; c; c = c.nextSibling) {
      if (c.nodeType !== 1 || skip?.has(c)) continue;
      if ((c as XElement).getAttribute("ID") === id) n++;
      walk(c);
    }
  };
  walk(root as XNode);
  return n;
}

/**
 * Minimal writer of element trees. Text is escaped in C14N form; attributes are written in the order
 * given (callers give them in C14N order: namespace declarations first, then attributes sorted).
 */
export type XmlChild = XmlEl | string | null | undefined | false;
export interface XmlEl {
  name: string;
  attrs?: [string, string][];
  children: XmlChild[];
  /** Raw, already-serialised XML inserted verbatim (e.g. a signed DTE, the CAF). */
  raw?: string;
}

export function el(name: string, attrs: [string, string][] | null, ...children: (XmlChild | XmlChild[])[]): XmlEl {
  return { name, attrs: attrs ?? [], children: children.flat() };
}
/** Leaf with text; omitted (null) when value is undefined or empty. */
export function leaf(name: string, value: string | number | bigint | undefined | null): XmlEl | null {
  if (value === undefined || value === null || value === "") return null;
  return { name, children: [String(value)] };
}
export function raw(xml: string): XmlEl {
  return { name: "", children: [], raw: xml };
}

/**
 * Serialises an element tree. `indent` null = compact (one line); a string = one element per line,
 * indented by `indent` per level (elements with only text stay on one line), LF line ends. Empty
 * elements are written as start+end tag (C14N form).
 */
export function serialize(node: XmlEl, indent: string | null = null, level = 0): string {
  if (node.raw !== undefined) return node.raw;
  const pad = indent !== null ? "\n" + indent.repeat(level) : "";
  const attrs = (node.attrs ?? []).map(([k, v]) => ` ${k}="${escAttr(v)}"`).join("");
  const kids = node.children.filter((c): c is XmlEl | string => c !== null && c !== undefined && c !== false);
  if (kids.length === 0) return `<${node.name}${attrs}></${node.name}>`;
  if (kids.every((k) => typeof k === "string")) return `<${node.name}${attrs}>${kids.map((k) => escText(k as string)).join("")}</${node.name}>`;
  let out = `<${node.name}${attrs}>`;
  for (const k of kids) {
    if (typeof k === "string") out += escText(k);
    else out += (indent !== null ? "\n" + indent.repeat(level + 1) : "") + serialize(k, indent, level + 1);
  }
  return out + pad + `</${node.name}>`;
}

/** Removes whitespace between tags (`>\s+<` -> `><`), the SII "flattened" form. */
export function flatten(xml: string): string {
  return xml.replace(/>\s+</g, "><").trim();
}
