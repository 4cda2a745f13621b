/**
 * Schema validity of a received DTE inside the Worker, and of a whole EnvioDTE / EnvioBOLETA in the
 * simulator: the element tree is checked against the SII's structure (dte-model.ts, generated from
 * DTE_v10.xsd, EnvioDTE_v10.xsd and EnvioBOLETA_v11.xsd): element names and namespace,
 * order, required and repeated elements, choices, attributes (required, fixed, declared), and every
 * value against its simple type (base type, lengths, digits, ranges, code lists, pattern). The
 * official XSD run by libxml2 (xmllint-wasm, test/reception/schema.node.test.ts) is the
 * independent check that both agree. ds:Signature is left to the XMLDSig verification.
 *
 * Limits (documented, not guessed): identity constraints (xs:ID uniqueness) are checked by the
 * signature verification's wrapping check, not here; numeric bounds are compared as numbers.
 */
import * as xml from "../xml/xml";
import type { XElement } from "../xml/xml";
import { DTE_MODEL, ENVIO_BOLETA_MODEL, ENVIO_DTE_MODEL, SIMPLE_TYPES } from "./dte-model";

// Module-local copies of what the walks read per element: a module runner (the tests', the
// benches') may turn each use of an import into a property read through a getter.
const { NS_DSIG, NS_SII } = xml;

export interface SimpleType {
  b: string;
  en?: string[];
  minL?: number;
  maxL?: number;
  len?: number;
  pat?: string;
  td?: number;
  fd?: number;
  min?: string;
  max?: string;
  /** min and max as numbers (worked out once, see TYPES). */
  minN?: number;
  maxN?: number;
  /** pat compiled (anchored), and en's values as numbers (worked out once, see TYPES). */
  re?: RegExp;
  enN?: Set<number>;
  /** Whether a value is checked as written, its white space not collapsed (worked out once, see TYPES; simpleProblem). */
  asIs?: boolean;
}
export type AttributeDecl = [name: string, required: number, type: number, fixed: string | null];
export type ElementType = number | "sig" | { a: AttributeDecl[]; m: Group | null } | { t: number; a: AttributeDecl[] };
export type ElementDecl = [name: string, min: number, max: number, type: ElementType];
export interface Group {
  s?: Particle[];
  c?: Particle[];
  min?: number;
  max?: number;
  /** Worked out by the checker on first use: the names that can start the group, and whether it may match nothing. */
  first?: Set<string>;
  optional?: boolean;
}
export type Particle = ElementDecl | Group;

/** At most this many problems are reported per DTE (the first ones, in document order). */
const MAX_ERRORS = 10;

const DATE = /^(\d{4})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const ULONG_MAX = 2n ** 64n - 1n;

const patterns = new Map<string, RegExp>();
const anchored = (p: string) => {
  let r = patterns.get(p);
  if (!r) patterns.set(p, (r = new RegExp(`^(?:${p})$`, "u")));
  return r;
};

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function validDate(y: string, m: string, d: string): boolean {
  return validDateOf(Number(y), Number(m), Number(d));
}
function validDateOf(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  if (month !== 2) return day <= MONTH_DAYS[month - 1]!;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (leap ? 29 : 28);
}

/** The number written by the `n` ASCII digits of `v` from `at`, or -1 if one of them is not a digit. */
function digitsAt(v: string, at: number, n: number): number {
  let x = 0;
  for (let i = at; i < at + n; i++) {
    const c = v.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    x = 10 * x + c;
  }
  return x;
}

/**
 * Whether `v` written as YYYY-MM-DD from `at` (no sign, no zone) is a date DATE takes and validDate
 * accepts: true or false; null for any other form (then the regex decides).
 */
function plainDate(v: string, at: number): boolean | null {
  if (v.charCodeAt(at + 4) !== 45 || v.charCodeAt(at + 7) !== 45) return null;
  const y = digitsAt(v, at, 4);
  const m = digitsAt(v, at + 5, 2);
  const d = digitsAt(v, at + 8, 2);
  if (y < 0 || m < 0 || d < 0) return null;
  return validDateOf(y, m, d);
}

/** DATE_TIME and its range checks for the usual form YYYY-MM-DDTHH:MM:SS (no fraction, no zone); null for any other form. */
function plainDateTime(v: string): boolean | null {
  if (v.length !== 19 || v.charCodeAt(10) !== 84 /* T */ || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return null;
  const date = plainDate(v, 0);
  const h = digitsAt(v, 11, 2);
  const m = digitsAt(v, 14, 2);
  const sec = digitsAt(v, 17, 2);
  if (date === null || h < 0 || m < 0 || sec < 0) return null;
  return date && h <= 23 && m <= 59 && sec <= 59;
}

/** /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(v): an optional sign, then digits with at most one point, at least one digit. */
function isDecimal(v: string): boolean {
  const c0 = v.charCodeAt(0);
  let digits = 0;
  let points = 0;
  for (let i = c0 === 43 || c0 === 45 ? 1 : 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c === 46 && points === 0) points++;
    else return false;
  }
  return digits > 0;
}

/** What digits() works out: total significant digits and fraction digits (two variables instead of an array per value). */
let totalDigits = 0;
let fractionDigits = 0;
/** Digits of a decimal lexical value, into totalDigits and fractionDigits. */
function digits(v: string): void {
  let start = v.charCodeAt(0) === 43 || v.charCodeAt(0) === 45 ? 1 : 0;
  while (start < v.length - 1 && v.charCodeAt(start) === 48 && v.charCodeAt(start + 1) !== 46) start++;
  const dot = v.indexOf(".");
  if (dot < 0) {
    totalDigits = Math.max(1, v.length - start);
    fractionDigits = 0;
    return;
  }
  let end = v.length;
  while (end > dot + 1 && v.charCodeAt(end - 1) === 48) end--;
  const int = dot - start - (v.charCodeAt(start) === 48 ? 1 : 0);
  const frac = end - dot - 1;
  totalDigits = Math.max(1, int + frac);
  fractionDigits = frac;
}
/** A numeric enumeration's values as numbers (worked out once per type). */
const numericEnums = new WeakMap<SimpleType, Set<number>>();
function numericValues(t: SimpleType): Set<number> {
  let set = numericEnums.get(t);
  if (!set) numericEnums.set(t, (set = new Set(t.en!.map(Number))));
  return set;
}
const SURROGATE = /[\uD800-\uDFFF]/;
const NON_SPACE = /\S/;

/**
 * The simple types as the walks use them: every facet present (undefined when the type has none),
 * so that every type has the same shape (the checks read them at one site for all types), the
 * numeric bounds as numbers, the pattern compiled and a numeric enumeration as a set of numbers.
 */
export const TYPES: SimpleType[] = SIMPLE_TYPES.map((t) => ({
  b: t.b, en: t.en, minL: t.minL, maxL: t.maxL, len: t.len, pat: t.pat, td: t.td, fd: t.fd, min: t.min, max: t.max,
  minN: t.min === undefined ? undefined : Number(t.min), maxN: t.max === undefined ? undefined : Number(t.max),
  re: t.pat === undefined ? undefined : anchored(t.pat), enN: t.en === undefined ? undefined : new Set(t.en.map(Number)),
  asIs: valueAsWritten(t),
}));

/** /[\t\n\r ]/.test(s): whether `s` holds a tab, line break, carriage return or space. */
function hasWhiteSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13) return true;
  }
  return false;
}

/**
 * Number(v) where /^[+-]?\d+$/ matches `v` (an optional sign, then ASCII digits), NaN for anything
 * else: worked out as the digits are checked below 16 characters (exact there), by Number above
 * (Number's own parse of a string was a third of the time of a numeric value's check in workerd).
 */
function integerValue(v: string): number {
  const c0 = v.charCodeAt(0);
  let i = c0 === 43 || c0 === 45 ? 1 : 0;
  if (i >= v.length) return NaN;
  let n = 0;
  for (; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return NaN;
    n = n * 10 + (c - 48);
  }
  if (v.length > 15) return Number(v);
  return c0 === 45 ? -n : n;
}

/**
 * Whether `v` without its white space is base64 (BASE64, a multiple of four characters), read in
 * one pass; null when it holds a character \s matches beyond tab, line break, carriage return and
 * space (then the regexes answer).
 */
function base64Form(v: string): boolean | null {
  let n = 0;
  let pad = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13) continue;
    n++;
    if (c === 61 /* = */) pad++;
    else if (BASE64_CHAR[c] === 1) {
      if (pad) return false;
    } else return c > 127 || (c >= 11 && c <= 12) ? null : false;
  }
  return pad <= 2 && n % 4 === 0;
}
const BASE64_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) BASE64_CHAR[c] = /[A-Za-z0-9+/]/.test(String.fromCharCode(c)) ? 1 : 0;

/** Whether a value of `t` is checked as written (SimpleType.asIs). */
function valueAsWritten(t: SimpleType): boolean {
  return t.b === "string" || (t.b === "base64Binary" && t.en === undefined && t.len === undefined && t.minL === undefined && t.maxL === undefined && t.pat === undefined);
}

/** Why `raw` is not a value of `t`, or null. */
export function simpleProblem(raw: string, t: SimpleType): string | null {
  // A value's white space is collapsed (all but strings); base64 without facets reads past it anyway (base64Form, and the regex path removes all).
  const asIs = t.asIs ?? valueAsWritten(t);
  const v = asIs || !hasWhiteSpace(raw) ? raw : raw.replace(/[\t\n\r ]+/g, " ").trim();
  let num: number | null = null;
  switch (t.b) {
    case "string":
      break;
    case "positiveInteger":
    case "nonNegativeInteger":
    case "integer":
    case "long":
    case "unsignedLong": {
      num = integerValue(v);
      if (num !== num) return `'${v}' is not an integer`;
      if (t.b === "positiveInteger" && num < 1) return `'${v}' is not a positive integer`;
      if ((t.b === "nonNegativeInteger" || t.b === "unsignedLong") && num < 0) return `'${v}' is negative`;
      if (v.length > 15) {
        const n = BigInt(v);
        if (t.b === "long" && (n < LONG_MIN || n > LONG_MAX)) return `'${v}' is out of range`;
        if (t.b === "unsignedLong" && n > ULONG_MAX) return `'${v}' is out of range`;
      }
      break;
    }
    case "decimal":
      if (!isDecimal(v)) return `'${v}' is not a decimal number`;
      // Without a point it is an integer's form (most amounts): worked out as integerValue does.
      num = v.indexOf(".") < 0 ? integerValue(v) : Number(v);
      break;
    case "date": {
      // The usual form read by hand (DATE.exec's match array and three Number calls per value), any other by the regex.
      const plain = v.length === 10 ? plainDate(v, 0) : null;
      if (plain === true) break;
      const m = plain === null ? DATE.exec(v) : null;
      if (!m || !validDate(m[1]!, m[2]!, m[3]!)) return `'${v}' is not a date (YYYY-MM-DD)`;
      break;
    }
    case "dateTime": {
      const plain = plainDateTime(v);
      if (plain === true) break;
      const m = plain === null ? DATE_TIME.exec(v) : null;
      if (!m || !validDate(m[1]!, m[2]!, m[3]!) || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return `'${v}' is not a date and time (YYYY-MM-DDTHH:MM:SS)`;
      break;
    }
    case "base64Binary": {
      // Without white space (the usual value) one native scan; anything else through base64Form.
      const ok = BASE64.test(v) ? v.length % 4 === 0 : base64Form(v);
      if (ok === false) return "not base64";
      if (ok === null) {
        const b = v.replace(/\s+/g, "");
        if (!BASE64.test(b) || b.length % 4 !== 0) return "not base64";
      }
      break;
    }
    case "ID":
      if (!NCNAME.test(v)) return `'${v}' is not an XML name`;
      break;
    default:
      return `type ${t.b} is not supported`;
  }
  return facetProblem(v, t, num);
}

/** Why `v` (a value of the base type, `num` its number when numeric) breaks a facet of `t`, or null. */
function facetProblem(v: string, t: SimpleType, num: number | null): string | null {
  if (t.en) {
    const ok = num === null ? t.en.includes(v) : (t.enN ?? numericValues(t)).has(num);
    if (!ok) return `'${v}' is not one of ${t.en.join(", ")}`;
  }
  // The length in code points is between half the UTF-16 length and all of it: worked out only when that range is not enough.
  if (t.len !== undefined || (t.minL !== undefined && v.length < 2 * t.minL) || (t.maxL !== undefined && v.length > t.maxL)) {
    const length = SURROGATE.test(v) ? [...v].length : v.length;
    if (t.len !== undefined && length !== t.len) return `'${v}' must be ${t.len} characters long`;
    if (t.minL !== undefined && length < t.minL) return `'${v}' is shorter than ${t.minL} characters`;
    if (t.maxL !== undefined && length > t.maxL) return `'${v.slice(0, 40)}…' is longer than ${t.maxL} characters`;
  }
  if (t.pat !== undefined && !(t.re ?? anchored(t.pat)).test(v)) return `'${v}' does not match ${t.pat}`;
  if (num !== null) {
    if (t.td !== undefined || t.fd !== undefined) digits(v);
    if (t.td !== undefined && totalDigits > t.td) return `'${v}' has more than ${t.td} digits`;
    if (t.fd !== undefined && fractionDigits > t.fd) return `'${v}' has more than ${t.fd} decimals`;
    if (t.min !== undefined && num < (t.minN ?? Number(t.min))) return `'${v}' is below ${t.min}`;
    if (t.max !== undefined && num > (t.maxN ?? Number(t.max))) return `'${v}' is above ${t.max}`;
  } else if (t.b === "date" || t.b === "dateTime") {
    if (t.min !== undefined && v < t.min) return `'${v}' is before ${t.min}`;
    if (t.max !== undefined && v.slice(0, t.max.length) > t.max) return `'${v}' is after ${t.max}`;
  }
  return null;
}

export const isElement = (p: Particle): p is ElementDecl => Array.isArray(p);
/** Names that can start a group (worked out once per group and kept on it: the walk asks for every element). */
export function first(p: Group): Set<string> {
  let f = p.first;
  if (f) return f;
  f = new Set<string>();
  if (p.c) for (const q of p.c) for (const n of names(q)) f.add(n);
  else {
    for (const q of p.s ?? []) {
      for (const n of names(q)) f.add(n);
      if (!optional(q)) break;
    }
  }
  return (p.first = f);
}
const names = (p: Particle): Iterable<string> => (isElement(p) ? [p[0]] : first(p));
/** Whether `name` can start the particle. */
function starts(p: Particle, name: string): boolean {
  return isElement(p) ? p[0] === name : first(p).has(name);
}
/** Whether a particle may match nothing (memoised on the group). */
export function optional(p: Particle): boolean {
  if (isElement(p)) return p[1] === 0;
  return (p.optional ??= (p.min ?? 1) === 0 || (p.c ? p.c.some(optional) : (p.s ?? []).every(optional)));
}

/** The schema walk over a tree, and the problems it records (at most MAX_ERRORS). */
class Checker {
  readonly errors: string[] = [];

  /** `opaque`: elements taken as they are, like ds:Signature (a TED not yet stamped); `unqualified`: the namespace of elements in none; `ignored`: not walked. */
  constructor(private readonly opaque: ReadonlySet<string> | null = null, private readonly unqualified: string | null = null, private readonly ignored: ReadonlySet<XElement> | null = null) {}

  add(path: string, message: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push(`${path}: ${message}`);
  }

  /** An attribute's value as written (`v`, null when absent) against its declaration. */
  private attributeValue(path: string, [name, required, type, fixed]: AttributeDecl, v: string | null): void {
    if (v === null) {
      if (required) this.add(path, `attribute ${name} is required`);
      return;
    }
    if (fixed !== null && v !== fixed) this.add(path, `attribute ${name} must be '${fixed}'`);
    const p = simpleProblem(v, TYPES[type]!);
    if (p) this.add(`${path}@${name}`, p);
  }

  element(el: XElement, decl: ElementDecl, path: string): void {
    const type = decl[3];
    if (type === "sig" || this.opaque?.has(decl[0])) return;
    const simple = typeof type === "number" ? type : "t" in type ? type.t : null;
    if (el.attributes.length || (typeof type === "object" && type.a.length)) this.attributes(el, typeof type === "number" ? [] : type.a, path);
    if (simple !== null) {
      for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) return this.add(path, "must hold a value, not elements");
      const p = simpleProblem(el.textContent ?? "", TYPES[simple]!);
      if (p) this.add(path, p);
      return;
    }
    const kids: XElement[] = [];
    let text = false;
    for (let c = el.firstChild; c; c = c.nextSibling) {
      const type = c.nodeType;
      if (type === 1 && !this.ignored?.has(c as XElement)) kids.push(c as XElement);
      else if (!text && (type === 3 || type === 4)) {
        const data = (c as unknown as { data: string }).data;
        text = data !== "\n" && NON_SPACE.test(data);
      }
    }
    if (text) this.add(path, "holds text where only elements are allowed");
    const m = (type as { m: Group | null }).m;
    const at = m ? this.group(m, kids, 0, path) : 0;
    if (at < kids.length) this.add(`${path}/${kids[at]!.localName}`, `unexpected element (not allowed here by the schema)`);
  }

  attributes(el: XElement, decls: AttributeDecl[], path: string): void {
    const attrs = el.attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs[i]!;
      if (a.name === "xmlns" || a.name.startsWith("xmlns:") || a.namespaceURI === "http://www.w3.org/2001/XMLSchema-instance") continue;
      let declared = false;
      for (let j = 0; j < decls.length && !declared; j++) declared = decls[j]![0] === a.name;
      if (!declared) this.add(path, `attribute ${a.name} is not allowed`);
    }
    for (const decl of decls) this.attributeValue(path, decl, el.getAttribute(decl[0]));
  }

  /** Matches `g` (its own occurrences included) from kids[i]; returns the index after it. */
  group(g: Group, kids: XElement[], i: number, path: string): number {
    const max = g.max ?? 1;
    const min = g.min ?? 1;
    let n = 0;
    while (max === -1 || n < max) {
      const next = kids[i];
      if (n >= min && (!next || !first(g).has(next.localName ?? ""))) break;
      const j = this.once(g, kids, i, path);
      n++;
      if (j === i) break;
      i = j;
    }
    return i;
  }

  once(g: Group, kids: XElement[], i: number, path: string): number {
    if (g.c) {
      const next = kids[i];
      const name = next?.localName ?? "";
      const alt = next && g.c.find((p) => starts(p, name));
      if (!alt) {
        if (!g.c.some(optional)) this.add(path, `expected one of ${[...first(g)].join(", ")}${next ? `, found ${next.localName}` : ""}`);
        return i;
      }
      return this.particle(alt, kids, i, path);
    }
    for (const p of g.s ?? []) i = this.particle(p, kids, i, path);
    return i;
  }

  particle(p: Particle, kids: XElement[], i: number, path: string): number {
    if (!isElement(p)) {
      const next = kids[i];
      if (optional(p) && (!next || !first(p).has(next.localName ?? ""))) return i;
      return this.group(p, kids, i, path);
    }
    const name = p[0];
    const min = p[1];
    const max = p[2];
    let n = 0;
    while ((max === -1 || n < max) && kids[i] && kids[i]!.localName === name) {
      const k = kids[i]!;
      const ns = p[3] === "sig" ? NS_DSIG : NS_SII;
      const at = max === 1 ? `${path}/${name}` : `${path}/${name}[${n + 1}]`;
      if ((k.namespaceURI ?? this.unqualified) !== ns) this.add(at, `must be in namespace ${ns}`);
      this.element(k, p, at);
      n++;
      i++;
    }
    if (n < min) this.add(path, `${name} is missing${kids[i] ? ` (found ${kids[i]!.localName} instead)` : ""}`);
    else if (max > 1 && n === max && kids[i]?.localName === name) this.add(`${path}/${name}`, `more than ${max} (the schema's maximum)`);
    return i;
  }
}

/**
 * Schema problems of a <DTE> (none when valid; at most MAX_ERRORS, as "DTE/Documento/…/FchEmis: why").
 * `opaque`: elements checked only for presence and place. Received DTEs: `unqualified`, the namespace
 * a DTE declaring none is read in; `issuerExtras`: an issuer's DocPersonalizado left out.
 */
export function dteSchemaProblems(dte: XElement, opts: { opaque?: ReadonlySet<string>; boleta?: boolean; unqualified?: string; issuerExtras?: boolean } = {}): string[] {
  const ignored = opts.issuerExtras ? new Set(xml.childElements(dte, "DocPersonalizado").filter((e) => e.namespaceURI === null || e.namespaceURI === NS_SII)) : null;
  const c = new Checker(opts.opaque ?? null, opts.unqualified ?? null, ignored?.size ? ignored : null);
  if (dte.localName !== "DTE" || (dte.namespaceURI ?? opts.unqualified) !== NS_SII) return [`the root is <${dte.nodeName}>, not a DTE in ${NS_SII}`];
  c.element(dte, opts.boleta ? BOLETA_DTE : DTE_MODEL, "DTE");
  return c.errors;
}


/** The declaration of `name` in the top-level sequence of `decl`'s content. */
function childDecl(decl: ElementDecl, name: string): ElementDecl {
  const t = decl[3] as { m: Group | null };
  const found = (t.m?.s ?? []).find((p): p is ElementDecl => isElement(p) && p[0] === name);
  if (!found) throw new Error(`${decl[0]} has no ${name} in the generated model`);
  return found;
}
/** A boleta's DTE as EnvioBOLETA_v11.xsd defines it (boletas are no DTE_v10 documents). */
const BOLETA_DTE = childDecl(childDecl(ENVIO_BOLETA_MODEL, "SetDTE"), "DTE");

const ENVELOPE_MODELS = { EnvioDTE: ENVIO_DTE_MODEL, EnvioBOLETA: ENVIO_BOLETA_MODEL } as const;

/**
 * Schema problems of a whole envelope (Caratula, SubTotDTE and the number of DTEs, every DTE in it
 * against EnvioDTE_v10.xsd with DTE_v10.xsd, or against EnvioBOLETA_v11.xsd's own boleta DTE), at
 * most MAX_ERRORS in document order, each as "EnvioDTE/SetDTE/DTE/…: why".
 */
export function envelopeSchemaProblems(root: XElement, kind: keyof typeof ENVELOPE_MODELS): string[] {
  const c = new Checker();
  if (root.localName !== kind || root.namespaceURI !== NS_SII) return [`the root is <${root.nodeName}>, not an ${kind} in ${NS_SII}`];
  c.element(root, ENVELOPE_MODELS[kind], kind);
  return c.errors;
}
