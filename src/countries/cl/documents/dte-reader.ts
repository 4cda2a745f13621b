/**
 * A received DTE read in one pass over its source text, the SII's schema driving the reading: each
 * tag is met once, checked against the content model where it stands (the same greedy decisions as
 * dte-schema.ts's walks, in the same order), each value against its simple type as it is read, and
 * the source is held to C14N's form as written (start tags `<name a="v">` with one space, double
 * quotes and the attributes in order, `</name>` end tags, `&` only in `&amp;` `&lt;` `&gt;`, no `>`
 * in text, no empty-element tags, no namespace declaration but the Signature's; the compiled model
 * is dte-reader-model.ts). What the verification needs comes out of the
 * same pass: the fields of the report, the stamp's DD and CAF, the XMLDSig's parts and spans.
 *
 * It only ever says "valid and canonical as written": `readDte` returns null for anything else (a
 * schema problem, an entity, a prefix, another form of the XMLDSig, anything unusual), and the
 * caller then reads the DTE over its flat index or its tree, which say what is wrong. So a DTE it
 * accepts is one dte-schema.ts finds no problem in (test/reception/one-pass.test.ts holds that on
 * every DTE the engine makes and on generated mutations of them).
 */
import * as schema from "./dte-schema";
import type { AttributeDecl } from "./dte-schema";
import * as model from "./dte-reader-model";
import type { ElementNode, GroupNode, Span } from "./dte-reader-model";
import * as fast from "../xml/fastxml";
import type { FElement } from "../xml/fastxml";
import { NS_DSIG, NS_XSI, ownCopy, writtenAt } from "../xml/xml";
import { ALG } from "../xml/xmldsig";

// Module-local copies of what the reading calls per element: a module runner (the tests', the
// benches') may turn each use of an import into a property read through a getter.
const { simpleProblem, TYPES } = schema;
const { BRANCH_NAMES, DTE, FIELDS, known, UNKNOWN } = model;
const { canonicalText, decode } = fast;

const { C14N, RSA_SHA1, SHA1 } = ALG;

export { FIELDS, type Field, type Span } from "./dte-reader-model";

export interface DteReading {
  /** The branch element (Documento, Exportaciones, Liquidacion): its name, its ID, its start tag's attributes as written (` ID="…"`), its content. */
  branch: string;
  id: string;
  branchAttributes: string;
  branchContent: [number, number];
  /** FIELDS' values by slot (undefined: absent). */
  values: (string | undefined)[];
  spans: Partial<Record<Span, [number, number]>>;
  /** Whether the DD's source has no white space between two tags (then it is its own xml.ts `flatten`: the form its stamp signs). */
  ddFlat: boolean;
  /** The CAF's source text (its `spans.CAF`) as a string of its own: the same string for every DTE whose CAF is the last one read in full. */
  cafText: string | null;
  signature: {
    /** SignedInfo's content, the Reference's URI, and the texts as written. */
    signedInfoContent: [number, number];
    uri: string;
    digestValue: string;
    signatureValue: string;
    modulus: string | null;
    exponent: string | null;
    certificate: string;
  };
}

/** A part read in full and kept for the next DTE (Reader.kept, Reader.replay): a copy of its text (not a slice: it must not hold the file it came from), how often white space stood between its tags. */
type Kept = { text: string; spaced: number };

/** The last CAF read in full, with its declaration. */
let lastCaf: (Kept & { node: ElementNode }) | null = null;

/** The XMLDSig's three runs (Reader.signature) as last read in full, each with a mark in it (where the SignedInfo's content starts, or ends). */
type SigRun = Kept & { mark: number };
const lastRuns: [SigRun | null, SigRun | null, SigRun | null] = [null, null, null];

/** The last KeyInfo read in full, with its values (copies). */
let lastKeyInfo: (Kept & { modulus: string | null; exponent: string | null; certificate: string }) | null = null;

/** Thrown to leave the reading: the DTE is not one this reader takes. */
const NOT_HERE = new Error("not read in one pass");
/** value.trim(), without the call for a value that starts and ends with a visible ASCII character (most). */
function trimmed(value: string): string {
  const a = value.charCodeAt(0);
  const z = value.charCodeAt(value.length - 1);
  return a > 32 && a < 127 && z > 32 && z < 127 ? value : value.trim();
}

/** How many characters of a value leafText reads one at a time before it searches for its end. */
const SHORT_TEXT = 12;

/**
 * Reads the content of a DTE element of a fast-parsed document (an OPAQUE DTE of an envelope, or a
 * built one), from the end of its start tag to its end tag; null when it is not valid and canonical
 * as written. The DTE's own start tag is the parser's: its attributes are checked against the model
 * here (namespace declarations and xsi's left out, as dte-schema.ts does); its name and namespace,
 * and the namespaces in scope, are the caller's to check.
 */
export function readDte(dte: FElement): DteReading | null {
  const doc = dte.doc;
  if (!doc || dte.contentStart < 0) return null;
  const attributes: [string, string][] = [];
  for (let i = 0; i < dte.attributes.length; i++) {
    const a = dte.attributes.item(i)!;
    if (a.name === "xmlns" || a.name.startsWith("xmlns:") || a.namespaceURI === NS_XSI) continue;
    attributes.push([a.name, a.value]);
  }
  try {
    return new Reader(doc.source, dte.contentStart, dte.contentEnd).dte(attributes);
  } catch (e) {
    if (e === NOT_HERE) return null;
    throw e;
  }
}

/**
 * An OPAQUE XMLDSig Signature of a fast-parsed document (an envelope's own), from its start tag to
 * its end tag, read in one pass in the SII's form, as a DTE's is: its parts, or null for anything
 * else (the caller then reads it over its flat index).
 */
export function readSignature(sig: FElement): DteReading["signature"] | null {
  const doc = sig.doc;
  if (!doc || sig.contentStart < 1 || sig.contentEnd < 0 || sig.nodeName !== "Signature") return null;
  const text = doc.source;
  try {
    return new Reader(text, text.lastIndexOf("<", sig.contentStart - 1), sig.contentEnd + "</Signature>".length).signatureOnly();
  } catch (e) {
    if (e === NOT_HERE) return null;
    throw e;
  }
}

const no = (): never => {
  throw NOT_HERE;
};

class Reader {
  /** Where the reading is: after the last tag read. */
  private pos: number;
  /** The lookahead: the next sibling's name and the `<` of its start tag, or (name null) the `<` of the parent's end tag. */
  private name: string | null = null;
  private at = 0;
  private nameEnd = 0;
  /** The attributes of the start tag just read (names in order, values). */
  private readonly an: string[] = [];
  private readonly av: string[] = [];
  private na = 0;
  private readonly values: (string | undefined)[] = new Array(FIELDS.length);
  private readonly spans: DteReading["spans"] = {};
  private id: string | null = null;
  private branchAttributes = "";
  private branchContent: [number, number] = [0, 0];
  private sig: DteReading["signature"] | null = null;
  private branchName = "";
  /** How many times white space stood between two tags so far (what xml.ts flatten removes), and whether the DD had none. */
  private spaced = 0;
  private ddFlat = false;
  private cafText: string | null = null;
  /** How many elements are open below the DTE. */
  private depth = 0;

  constructor(private readonly text: string, from: number, private readonly to: number) {
    this.pos = from;
  }

  dte(attributes: [string, string][]): DteReading {
    this.attributes(DTE.attributes, attributes);
    this.peek();
    this.group(DTE.model!);
    if (this.name !== null || this.at !== this.to || this.id === null || this.sig === null || this.branchName === "") no();
    return { branch: this.branchName, id: this.id!, branchAttributes: this.branchAttributes, branchContent: this.branchContent, values: this.values, spans: this.spans, ddFlat: this.ddFlat, cafText: this.cafText, signature: this.sig! };
  }

  /** The range is one XMLDSig Signature element, nothing around it: its parts. */
  signatureOnly(): DteReading["signature"] {
    this.peek();
    this.signature(true);
    if (this.pos !== this.to) no();
    return this.sig!;
  }

  /**
   * Sets the lookahead from `pos`: only white space may come first. `guess`, a name the model
   * knows (the one met at this place last time), is compared first: most tags are where they were
   * in the DTE before, and one comparison costs less than hashing the name and looking it up.
   */
  private peek(guess: string | null = null): void {
    const t = this.text;
    let p = this.pos;
    let c = t.charCodeAt(p);
    while (c === 10 || c === 32 || c === 9) c = t.charCodeAt(++p);
    if (p > this.pos) this.spaced++;
    if (c !== 60 /* < */ || p > this.to) no();
    this.at = p;
    if (t.charCodeAt(p + 1) === 47 /* / */) {
      this.name = null;
      return;
    }
    if (guess !== null && guess !== UNKNOWN) {
      const end = p + 1 + guess.length;
      const c = t.charCodeAt(end);
      if ((c === 62 /* > */ || c === 32) && end < this.to && t.startsWith(guess, p + 1)) {
        this.nameEnd = end;
        this.name = guess;
        return;
      }
    }
    // The name, hashed as it is read, found among the names the reading knows without cutting it out
    // of the text (most elements' names; any other cannot be valid here, and reads as UNKNOWN).
    let q = p + 1;
    let h = 0;
    for (c = t.charCodeAt(q); c !== 62 /* > */ && c !== 32; c = t.charCodeAt(++q)) {
      if (q >= this.to || c === 47 || c === 60) no();
      h = (h * 31 + c) | 0;
    }
    this.nameEnd = q;
    this.name = known(t, p + 1, q, h);
  }

  /** Reads the lookahead's start tag (canonical as written but for the values, which `plain` checks); `pos` after its `>`. */
  private startTag(): void {
    const t = this.text;
    let p = this.nameEnd;
    let n = 0;
    while (t.charCodeAt(p) === 32) {
      const eq = t.indexOf('="', p + 1);
      if (eq < 0 || eq >= this.to) no();
      const name = t.slice(p + 1, eq);
      const end = t.indexOf('"', eq + 2);
      if (end < 0 || end >= this.to) no();
      const value = t.slice(eq + 2, end);
      // (Each value is checked for C14N's form where it is used: `plain`, or compared with a constant.)
      // C14N's order: the namespace declaration first, then the attributes by name (none has a prefix here).
      if (n > 0 && (name === "xmlns" || !(name > this.an[n - 1]! || this.an[n - 1] === "xmlns"))) no();
      this.an[n] = name;
      this.av[n++] = value;
      p = end + 1;
    }
    if (t.charCodeAt(p) !== 62 /* > */) no();
    this.na = n;
    this.pos = p + 1;
  }

  /** The start tag's attributes (or the DTE's, `given`) against their declarations, as dte-schema.ts checks them (no namespace declaration here). */
  private attributes(decls: AttributeDecl[], given?: [string, string][]): void {
    let names = this.an;
    let values = this.av;
    let n = this.na;
    if (given) {
      names = given.map((a) => a[0]);
      values = given.map((a) => a[1]);
      n = given.length;
    }
    if (n === 0 && decls.length === 0) return;
    for (let k = 0; k < n; k++) {
      const name = names[k]!;
      let declared = false;
      for (let j = 0; j < decls.length && !declared; j++) declared = decls[j]![0] === name;
      if (!declared) no();
      if (name === "ID" && !given) {
        if (this.id !== null) no();
        this.id = values[k]!;
      }
    }
    for (let j = 0; j < decls.length; j++) {
      const [name, required, type, fixed] = decls[j]!;
      let k = 0;
      while (k < n && names[k] !== name) k++;
      if (k === n) {
        if (required) no();
        continue;
      }
      const v = values[k]!;
      if (!plain(v) || (fixed !== null && v !== fixed) || simpleProblem(v, TYPES[type]!) !== null) no();
    }
  }

  /** Reads the lookahead element, declared by `node`, and sets the lookahead to what follows it. */
  private element(node: ElementNode): void {
    if (node.sig) {
      if (this.depth !== 0) no();
      return this.signature();
    }
    const name = node.name;
    const start = this.at;
    this.startTag();
    this.attributes(node.attributes);
    if (node.simple >= 0) {
      const value = this.sameLeaf(node) ?? this.newLeaf(node);
      const slot = node.slot;
      if (slot >= 0 && this.values[slot] === undefined) this.values[slot] = trimmed(value);
      return this.leafEnd(node);
    } else {
      const contentStart = this.pos;
      if (node.span === "CAF" && this.knownCaf(node, start)) return this.peekNext(node);
      if (node.block !== null && this.sameBlock(node, start)) return this.peekNext(node);
      const free = node.block !== null && this.slotsFree(node.block);
      const branch = this.depth === 0 && BRANCH_NAMES.includes(name);
      if (branch) {
        if (this.branchName !== "") no();
        this.branchName = name;
        this.branchAttributes = this.text.slice(start + 1 + name.length, contentStart - 1);
      }
      const spacedBefore = this.spaced;
      this.depth++;
      this.peek(node.firstSeen);
      node.firstSeen = this.name;
      if (node.model) this.group(node.model);
      if (this.name !== null) no();
      if (branch) this.branchContent = [contentStart, this.at];
      this.endTag(name);
      this.depth--;
      const span = node.span;
      if (span !== null && this.spans[span] === undefined) {
        this.spans[span] = [start, this.pos];
        if (span === "DD") this.ddFlat = this.spaced === spacedBefore;
        if (span === "CAF") {
          lastCaf = { node, ...this.kept(start, spacedBefore) };
          this.cafText = lastCaf.text;
        }
      }
      // Kept for the next DTE when every value it fills was its own (none set before it).
      if (free) node.lastBlock = { ...this.kept(start, spacedBefore), values: node.block!.map((slot) => (this.values[slot] === undefined ? undefined : ownCopy(this.values[slot]!))) };
    }
    this.peekNext(node);
  }

  /**
   * The value of the leaf `node` (its start tag read) when its text is, as written, the last valid
   * value kept there (ElementNode.lastValid): compared in place, nothing cut out of the text; `at`
   * on its end tag. Null otherwise.
   */
  private sameLeaf(node: ElementNode): string | null {
    const last = node.lastValid;
    const t = this.text;
    const end = this.pos + (last?.length ?? 0);
    if (last === null || end >= this.to || t.charCodeAt(end) !== 60 /* < */ || !t.startsWith(last, this.pos)) return null;
    this.at = end;
    return last;
  }

  /**
   * The leaf `node`'s end tag (at `at`) read and the lookahead set. When the text from there is the
   * one met after this leaf last time (ElementNode.tail: the end tag, the white space, and the next
   * tag's `<name` or `</`), one comparison does both; otherwise they are read and the text kept.
   */
  private leafEnd(node: ElementNode): void {
    const t = this.text;
    const from = this.at;
    const tail = node.tail;
    if (tail !== null && writtenAt(t, tail.text, from)) {
      const end = from + tail.text.length;
      const c = t.charCodeAt(end);
      if (tail.name === null ? from + tail.next <= this.to : (c === 62 /* > */ || c === 32) && end < this.to) {
        this.pos = from + tail.close;
        this.spaced += tail.spaced;
        this.at = from + tail.next;
        this.nameEnd = end;
        this.name = tail.name;
        return;
      }
    }
    this.endTag(node.name);
    const spacedBefore = this.spaced;
    this.peekNext(node);
    const name = this.name;
    if (name === UNKNOWN) return;
    const end = name === null ? this.at + 2 : this.nameEnd;
    if (end - from <= 64) node.tail = { text: ownCopy(t.slice(from, end)), close: this.pos - from, next: this.at - from, spaced: this.spaced - spacedBefore, name };
  }

  /** The value of the leaf `node` read from the text and checked against its type; kept when it may be compared in place next time. */
  private newLeaf(node: ElementNode): string {
    const value = this.leafText(node.longText ? 0 : SHORT_TEXT);
    node.longText = value.length >= SHORT_TEXT;
    if (simpleProblem(value, TYPES[node.simple]!) !== null) no();
    // Its own text as written (no reference, no white space that leafText counts), and short: V8
    // copies a slice under 13 characters, a longer one would hold the received file.
    const c = value.charCodeAt(0);
    if (value.length < 13 && c > 32 && c < 0xa0 && value.indexOf("&") < 0 && value.indexOf(">") < 0) node.lastValid = value;
    return value;
  }

  /** Whether none of `slots` has a value yet (a block read now fills them all itself). */
  private slotsFree(slots: number[]): boolean {
    for (let k = 0; k < slots.length; k++) if (this.values[slots[k]!] !== undefined) return false;
    return true;
  }

  /**
   * Whether the block `node` starting at `start` (its start tag read) is, as written, the one read in
   * full last time (ElementNode.lastBlock): its reading is a function of its text (no ID, no span in
   * it), so it is taken as read then, its values and white space included.
   */
  private sameBlock(node: ElementNode, start: number): boolean {
    const last = node.lastBlock;
    if (last === null || !this.replay(last.text, last.spaced, start)) return false;
    const slots = node.block!;
    for (let k = 0; k < slots.length; k++) if (this.values[slots[k]!] === undefined) this.values[slots[k]!] = last.values[k];
    return true;
  }

  /** The lookahead after element `node`, the name met there last time tried first (ElementNode.nextSeen). */
  private peekNext(node: ElementNode): void {
    this.peek(node.nextSeen);
    node.nextSeen = this.name;
  }

  /**
   * Whether the CAF starting at `start` (its start tag read) is, as written, the last CAF read in
   * full: its reading is a function of its text (no value slot, no ID, no span inside it), so it is
   * taken as read then, span and white space included. The DTEs of an envelope mostly share one CAF.
   */
  private knownCaf(node: ElementNode, start: number): boolean {
    const last = lastCaf;
    if (last === null || last.node !== node || !this.replay(last.text, last.spaced, start)) return false;
    if (this.spans.CAF !== undefined) no();
    this.spans.CAF = [start, this.pos];
    this.cafText = last.text;
    return true;
  }

  /**
   * Whether the text at `from` is, as written, `text` (a part read in full before, kept by `kept`,
   * whose white space was `spaced`): then it is taken as read then, `pos` after it and its white
   * space counted. The reading of a part the memos keep is a function of its text. (The kept
   * objects' fields are read by the callers: each of them meets one shape of object.)
   */
  private replay(text: string, spaced: number, from: number): boolean {
    if (from + text.length > this.to || !writtenAt(this.text, text, from)) return false;
    this.pos = from + text.length;
    this.spaced += spaced;
    return true;
  }

  /** The part just read in full, from `from` to `pos` (`spaced` the count before it), kept for `replay`: a copy of its text (never a slice of a received file) and its white space. */
  private kept(from: number, spaced: number): Kept {
    return { text: ownCopy(this.text.slice(from, this.pos)), spaced: this.spaced - spaced };
  }

  /**
   * The text of a leaf (no element in it, `&` only in C14N's `&amp;` `&lt;` `&gt;`, no `>`) from
   * `pos` up to its end tag (`at` set there), decoded. Its first `scan` characters are read one at
   * a time, noting `&` and `>`; a longer text is searched (in workerd a 5-character value read by
   * hand cost 18 ns, searched 47; 28 characters 86 and 58; 88 characters 250 and 45): `scan` 0 for
   * a text known to be long (a digest, a signature), SHORT_TEXT for a value that was short last time.
   */
  private leafText(scan = SHORT_TEXT): string {
    const t = this.text;
    let lt = this.pos;
    let marked = false;
    const stop = Math.min(lt + scan, this.to);
    for (let c = t.charCodeAt(lt); lt < stop && c !== 60 /* < */; c = t.charCodeAt(++lt)) if (c === 38 || c === 62) marked = true;
    if (lt === stop) {
      lt = t.indexOf("<", stop);
      marked = true;
    }
    if (lt < 0 || lt >= this.to) no();
    const raw = t.slice(this.pos, lt);
    const value = !marked || (raw.indexOf("&") < 0 && raw.indexOf(">") < 0) ? raw : canonicalText(raw) ? decode(raw) : no();
    if (raw.length !== 0 && (raw.charCodeAt(0) <= 32 || raw.charCodeAt(0) >= 0xa0) && SPACES.test(raw)) this.spaced++;
    this.at = lt;
    return value;
  }

  /** The end tag `</name>` at `at`; `pos` after it. */
  private endTag(name: string): void {
    const t = this.text;
    const at = this.at;
    const n = name.length;
    if (t.charCodeAt(at + 1) !== 47 /* / */ || t.charCodeAt(at + 2 + n) !== 62 /* > */ || !t.startsWith(name, at + 2)) no();
    this.pos = at + n + 3;
  }

  // The content model, as FlatChecker walks it (dte-schema.ts): `i` there is the lookahead here.
  private group(g: GroupNode): void {
    const { max, min } = g;
    let n = 0;
    while (max === -1 || n < max) {
      if (n >= min && (this.name === null || !g.first.has(this.name))) break;
      const before = this.at;
      this.once(g);
      n++;
      if (this.at === before) break;
    }
  }

  private once(g: GroupNode): void {
    const parts = g.parts;
    if (g.choice) {
      const name = this.name;
      let alt: ElementNode | GroupNode | null = null;
      for (let k = 0; k < parts.length && alt === null && name !== null; k++) {
        const p = parts[k]!;
        if (p.group ? p.first.has(name) : p.name === name) alt = p;
      }
      if (alt === null) {
        let optional = false;
        for (let k = 0; k < parts.length; k++) optional ||= parts[k]!.group ? (parts[k] as GroupNode).optional : (parts[k] as ElementNode).min === 0;
        if (!optional) no();
        return;
      }
      return this.particle(alt);
    }
    const { runEnd, optionalAt } = g;
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k]!;
      if (!p.group && p.min === 0 && this.name !== p.name) {
        // In a run of optional elements the lookahead can only be the one part of its name: on to it, or past the run.
        if (runEnd.length === 0) continue;
        const end = runEnd[k]!;
        const at = this.name === null ? undefined : optionalAt.get(this.name);
        k = (at !== undefined && at > k && at < end ? at : end) - 1;
        continue;
      }
      this.particle(p);
    }
  }

  private particle(p: ElementNode | GroupNode): void {
    if (p.group) {
      if (p.optional && (this.name === null || !p.first.has(this.name))) return;
      return this.group(p);
    }
    const { name, min, max } = p;
    let n = 0;
    while ((max === -1 || n < max) && this.name === name) {
      this.element(p);
      n++;
    }
    if (n < min || (max > 1 && n === max && this.name === name)) no();
  }

  // The XMLDSig in the SII's form: SignedInfo (C14N, RSA-SHA1, one Reference with C14N transforms
  // and SHA-1), SignatureValue, KeyInfo (KeyValue's RSAKeyValue if any, X509Data's certificate).
  private signature(alone = false): void {
    const t = this.text;
    // Three runs of the XMLDSig are the same in every DTE of the SII's profile (its algorithms): up
    // to the Reference's URI, from there to the DigestValue, and from it to the SignatureValue. Each
    // written as the last one read is taken as read then (lastRuns); the rest is read as always.
    const start = this.at;
    const siStart = start + this.run(0, start, () => {
      this.open("Signature");
      if (this.na !== 1 || this.an[0] !== "xmlns" || this.av[0] !== NS_DSIG) no();
      this.open("SignedInfo", 0);
      const mark = this.pos - start;
      this.empty("CanonicalizationMethod", "Algorithm", C14N);
      this.empty("SignatureMethod", "Algorithm", RSA_SHA1);
      if (this.name !== "Reference" || !t.startsWith('<Reference URI="', this.at)) no();
      this.pos = this.at + '<Reference URI="'.length;
      return mark;
    });
    // The URI, then the Reference's content.
    const quote = t.indexOf('"', this.pos);
    if (quote < 0 || quote + 1 >= this.to || t.charCodeAt(quote + 1) !== 62 /* > */) no();
    const uri = t.slice(this.pos, quote);
    if (!plain(uri)) no();
    this.pos = quote + 2;
    this.run(1, this.pos, () => {
      this.peek();
      if (this.next() === "Transforms") {
        this.open("Transforms", 0);
        if (this.next() !== "Transform") no();
        while (this.next() === "Transform") this.empty("Transform", "Algorithm", C14N);
        this.close("Transforms");
      }
      this.empty("DigestMethod", "Algorithm", SHA1);
      this.bare("DigestValue");
      return 0;
    });
    const digestValue = this.leafText(0);
    const signedInfoEnd = this.at + this.run(2, this.at, () => {
      const from = this.at;
      this.endTag("DigestValue");
      this.peek();
      this.close("Reference");
      const end = this.at;
      this.close("SignedInfo");
      this.bare("SignatureValue");
      return end - from;
    });
    const signatureValue = this.leafText(0);
    this.endTag("SignatureValue");
    this.peek();
    const { modulus, exponent, certificate } = this.keyInfo();
    // Alone, nothing follows the end tag: no lookahead to set.
    if (alone) {
      if (this.name !== null) no();
      this.endTag("Signature");
    } else this.close("Signature");
    if (this.sig !== null) no();
    this.sig = { signedInfoContent: [siStart, signedInfoEnd], uri, digestValue, signatureValue, modulus, exponent, certificate };
  }

  /**
   * Run `k` of the XMLDSig (lastRuns) from `from` (the lookahead's `<`, or where a text or a start
   * tag ended): taken as read when written as the last one, else read by `read` (which returns a
   * mark, an offset in the run kept with it) and kept. `pos` after it; returns the mark.
   */
  private run(k: 0 | 1 | 2, from: number, read: () => number): number {
    const last = lastRuns[k];
    if (last !== null && this.replay(last.text, last.spaced, from)) return last.mark;
    const spaced = this.spaced;
    const mark = read();
    lastRuns[k] = { ...this.kept(from, spaced), mark };
    return mark;
  }

  /** The lookahead is `<name>` with no attribute: its start tag read (`pos` after it), no lookahead set. */
  private bare(name: string): void {
    if (this.name !== name) no();
    this.startTag();
    if (this.na !== 0) no();
  }

  /**
   * The XMLDSig's KeyInfo: KeyValue's RSAKeyValue if any, X509Data's certificate. The last one read
   * in full is kept (the DTEs of an envelope are mostly signed with one certificate): one written
   * the same is taken as read then.
   */
  private keyInfo(): { modulus: string | null; exponent: string | null; certificate: string } {
    const start = this.at;
    const last = lastKeyInfo;
    if (this.name === "KeyInfo" && last !== null && this.replay(last.text, last.spaced, start)) {
      this.peek();
      return last;
    }
    const spacedBefore = this.spaced;
    this.open("KeyInfo", 0);
    let modulus: string | null = null;
    let exponent: string | null = null;
    if (this.next() === "KeyValue") {
      this.open("KeyValue", 0);
      this.open("RSAKeyValue", 0);
      modulus = this.leaf("Modulus");
      exponent = this.leaf("Exponent");
      this.close("RSAKeyValue");
      this.close("KeyValue");
    }
    this.open("X509Data", 0);
    const certificate = this.leaf("X509Certificate");
    this.close("X509Data");
    if (this.name !== null) no();
    this.endTag("KeyInfo");
    const own = (v: string | null) => (v === null ? null : ownCopy(v));
    lastKeyInfo = { ...this.kept(start, spacedBefore), modulus: own(modulus), exponent: own(exponent), certificate: ownCopy(certificate) };
    this.peek();
    return lastKeyInfo;
  }

  /** The lookahead's name (a method: TypeScript would narrow the field across the calls that move it). */
  private next(): string | null {
    return this.name;
  }

  /** The lookahead is `<name` with `attributes` attributes (any number when undefined): its start tag read, the lookahead its first child. */
  private open(name: string, attributes?: number): void {
    if (this.name !== name) no();
    this.startTag();
    if (attributes !== undefined && this.na !== attributes) no();
    this.peek();
  }

  /** The lookahead (the parent's end tag) is `</name>`: read, the lookahead what follows. */
  private close(name: string): void {
    if (this.name !== null) no();
    this.endTag(name);
    this.peek();
  }

  /** `<name attribute="value"></name>`. */
  private empty(name: string, attribute: string, value: string): void {
    this.open(name, 1);
    if (this.an[0] !== attribute || this.av[0] !== value) no();
    this.close(name);
  }

  /** `<name>text</name>`: its text. */
  private leaf(name: string): string {
    this.bare(name);
    const value = this.leafText();
    this.endTag(name);
    this.peek();
    return value;
  }
}
/** An attribute value as C14N writes it (no character it escapes in an attribute: `&` `<` `"`, tab, line ends; nor `>`, to keep to one form). */
function plain(v: string): boolean {
  for (let k = 0; k < v.length; k++) {
    const c = v.charCodeAt(k);
    if (c < 32 || c === 38 /* & */ || c === 60 /* < */ || c === 62 /* > */) return false;
  }
  return true;
}
const SPACES = /^\s+$/;
