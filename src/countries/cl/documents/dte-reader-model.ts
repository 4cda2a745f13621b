/**
 * The SII's DTE content model (dte-model.ts) compiled once for the one-pass reader (dte-reader.ts):
 * plain nodes of two shapes (an element, a group), each with what the reading asks of it at hand
 * (its simple type or content, the value slot or span it fills, a group's first names and whether
 * it may match nothing, dte-schema.ts's own answers), and the element names the reading can meet,
 * found by a hash worked out as a name is read instead of by cutting it out of the text.
 */
import { DTE_MODEL } from "./dte-model";
import { first, isElement, optional } from "./dte-schema";
import type { AttributeDecl, ElementDecl, Group, Particle } from "./dte-schema";

/** The values a verification reads, by slot (`DteReading.values`): the trimmed text of the first element of each path. */
export const FIELDS = [
  "TipoDTE", "Folio", "FchEmis", "RUTEmisor", "RUTRecep", "RznSocRecep", "MntTotal", "NmbItem",
  "RE", "TD", "F", "FE", "RR", "RSR", "MNT", "IT1", "TSTED", "FRMT",
] as const;
export type Field = (typeof FIELDS)[number];
const PATHS: Record<Field, string[]> = {
  TipoDTE: ["Encabezado", "IdDoc", "TipoDTE"], Folio: ["Encabezado", "IdDoc", "Folio"], FchEmis: ["Encabezado", "IdDoc", "FchEmis"],
  RUTEmisor: ["Encabezado", "Emisor", "RUTEmisor"], RUTRecep: ["Encabezado", "Receptor", "RUTRecep"],
  RznSocRecep: ["Encabezado", "Receptor", "RznSocRecep"], MntTotal: ["Encabezado", "Totales", "MntTotal"],
  NmbItem: ["Detalle", "NmbItem"],
  RE: ["TED", "DD", "RE"], TD: ["TED", "DD", "TD"], F: ["TED", "DD", "F"], FE: ["TED", "DD", "FE"], RR: ["TED", "DD", "RR"],
  RSR: ["TED", "DD", "RSR"], MNT: ["TED", "DD", "MNT"], IT1: ["TED", "DD", "IT1"], TSTED: ["TED", "DD", "TSTED"], FRMT: ["TED", "FRMT"],
};
/** Elements whose source span a verification reads (`DteReading.spans`: start of the start tag, end of the end tag). */
const SPANS = { DD: ["TED", "DD"], CAF: ["TED", "DD", "CAF"] } as const;
export type Span = keyof typeof SPANS;

/** The declaration of `name` in `decl`'s content model (nested groups included), or null. */
function childDecl(decl: ElementDecl, name: string): ElementDecl | null {
  const type = decl[3];
  if (typeof type !== "object" || !("m" in type) || !type.m) return null;
  const find = (g: Group): ElementDecl | null => {
    for (const p of g.s ?? g.c ?? []) {
      const d = isElement(p) ? (p[0] === name ? p : null) : find(p);
      if (d) return d;
    }
    return null;
  };
  return find(type.m);
}

/** Per declaration, the value slot (index in FIELDS) or span it fills; each declaration is one place in the model. */
const VALUE_OF = new Map<ElementDecl, number>();
const SPAN_OF = new Map<ElementDecl, Span>();
/** The DTE's branches (its content's choice: the element its XMLDSig signs); every verification path reads them from here. */
export const BRANCH_NAMES = ["Documento", "Exportaciones", "Liquidacion"];
for (const branch of BRANCH_NAMES) {
  const at = (path: readonly string[]) => path.reduce<ElementDecl | null>((d, n) => d && childDecl(d, n), childDecl(DTE_MODEL, branch));
  FIELDS.forEach((f, slot) => { const d = at(PATHS[f]); if (d) VALUE_OF.set(d, slot); });
  for (const s of Object.keys(SPANS) as Span[]) { const d = at(SPANS[s]); if (d) SPAN_OF.set(d, s); }
}

/** An element declaration, compiled. */
export interface ElementNode {
  group: false;
  name: string;
  min: number;
  max: number;
  sig: boolean;
  /** TYPES index of its value, -1 for element content. */
  simple: number;
  attributes: AttributeDecl[];
  model: GroupNode | null;
  slot: number;
  span: Span | null;
  /**
   * The reader's inline caches (dte-reader.ts peek): the name of the first child met in this
   * element's content last time, and of what followed the element (null: an end tag). Only a guess,
   * always checked against the text.
   */
  firstSeen: string | null;
  nextSeen: string | null;
  /**
   * For a leaf, the text met after its value last time, from its end tag to the next tag's `<name`
   * (or `</`, name null), copied: where in it the end tag ends (`close`) and the next tag starts
   * (`next`), whether white space stood between (`spaced`, 0 or 1), the next name.
   */
  tail: { text: string; close: number; next: number; spaced: number; name: string | null } | null;
  /** A short value of this element's simple type that was valid last time, its own text as written (a text equal to it reads the same). */
  lastValid: string | null;
  /** Whether its last value read in full was long (dte-reader.ts leafText searches for its end at once). */
  longText: boolean;
  /** For a block that repeats from DTE to DTE (REPEATED_BLOCKS), the value slots inside it; null for any other element. */
  block: number[] | null;
  /** The block as last read in full: a copy of its text, the values it gave its slots (copies), its white space (dte-reader.ts sameBlock). */
  lastBlock: { text: string; values: (string | undefined)[]; spaced: number } | null;
}
/** A sequence or choice, compiled. */
export interface GroupNode {
  group: true;
  choice: boolean;
  min: number;
  max: number;
  parts: (ElementNode | GroupNode)[];
  first: Set<string>;
  optional: boolean;
  /**
   * For a sequence, where each run of optional elements ends (`runEnd[k]`: the first part from k on
   * that is a group or a required element, for k in such a run) and the index of each name in those
   * runs (`optionalAt`): the reader jumps from the lookahead's name to its part (dte-reader.ts once)
   * instead of comparing it with each part before it. Empty where a name is in two of them.
   */
  runEnd: number[];
  optionalAt: Map<string, number>;
}
const NONE: AttributeDecl[] = [];

function compileElement(decl: ElementDecl): ElementNode {
  const type = decl[3];
  const complex = typeof type === "object" && "m" in type;
  return {
    group: false, name: decl[0], min: decl[1], max: decl[2], sig: type === "sig",
    simple: typeof type === "number" ? type : typeof type === "object" && "t" in type ? type.t : -1,
    attributes: typeof type === "object" && type.a.length ? type.a : NONE,
    model: complex && type.m ? compileGroup(type.m) : null,
    slot: VALUE_OF.get(decl) ?? -1, span: SPAN_OF.get(decl) ?? null,
    firstSeen: null, nextSeen: null, tail: null, lastValid: null, longText: false, block: null, lastBlock: null,
  };
}

/**
 * Blocks that the DTEs a company receives repeat as written: the issuer's (Emisor, the same in every
 * DTE of one supplier) and the receiver's (Receptor, the same in every DTE of an envelope addressed to
 * one buyer). The reader takes one written as the last one read as read then (dte-reader.ts
 * sameBlock); each holds no ID and no span, so its reading is a function of its text.
 */
const REPEATED_BLOCKS = ["Emisor", "Receptor"];
function compileGroup(g: Group): GroupNode {
  const parts = (g.c ?? g.s ?? []).map((p: Particle) => (isElement(p) ? compileElement(p) : compileGroup(p)));
  const { runEnd, optionalAt } = g.c ? { runEnd: [], optionalAt: new Map<string, number>() } : optionalRuns(parts);
  return { group: true, choice: !!g.c, min: g.min ?? 1, max: g.max ?? 1, parts, first: first(g), optional: optional(g), runEnd, optionalAt };
}

/** GroupNode.runEnd and optionalAt of a sequence's parts. */
function optionalRuns(parts: (ElementNode | GroupNode)[]): { runEnd: number[]; optionalAt: Map<string, number> } {
  const isOptional = (p: ElementNode | GroupNode) => !p.group && p.min === 0;
  const runEnd: number[] = [];
  const optionalAt = new Map<string, number>();
  for (let k = parts.length - 1; k >= 0; k--) runEnd[k] = isOptional(parts[k]!) ? (runEnd[k + 1] ?? parts.length) : k;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k]!;
    if (!isOptional(p)) continue;
    const name = (p as ElementNode).name;
    if (optionalAt.has(name)) return { runEnd: [], optionalAt: new Map() };
    optionalAt.set(name, k);
  }
  return { runEnd, optionalAt };
}
/** The DTE element. */
export const DTE = compileElement(DTE_MODEL);
{
  const slotsIn = (n: ElementNode | GroupNode, out: number[]): number[] => {
    if (n.group) n.parts.forEach((p) => slotsIn(p, out));
    else {
      if (n.slot >= 0) out.push(n.slot);
      if (n.attributes.some((a) => a[0] === "ID") || n.span !== null || n.sig) throw new Error(`${n.name} cannot repeat as a block`);
      if (n.model) slotsIn(n.model, out);
    }
    return out;
  };
  const mark = (n: ElementNode | GroupNode) => {
    if (n.group) n.parts.forEach(mark);
    else if (REPEATED_BLOCKS.includes(n.name) && n.model) n.block = slotsIn(n.model, []);
    else if (n.model) mark(n.model);
  };
  mark(DTE);
}

/** The element names the reading can meet (the model's and the XMLDSig's), by the hash `peek` works out. */
const NAMES = new Map<number, string[]>();
/** What `known` gives for a name no declaration has (equal to none). */
export const UNKNOWN = "\u0000";
{
  const add = (name: string) => {
    let h = 0;
    for (let k = 0; k < name.length; k++) h = (h * 31 + name.charCodeAt(k)) | 0;
    const list = NAMES.get(h) ?? [];
    if (!list.includes(name)) list.push(name);
    NAMES.set(h, list);
  };
  const walk = (n: ElementNode | GroupNode) => {
    if (n.group) n.parts.forEach(walk);
    else {
      add(n.name);
      if (n.model) walk(n.model);
    }
  };
  walk(DTE);
  for (const n of ["Signature", "SignedInfo", "CanonicalizationMethod", "SignatureMethod", "Reference", "Transforms", "Transform", "DigestMethod", "DigestValue", "SignatureValue", "KeyInfo", "KeyValue", "RSAKeyValue", "Modulus", "Exponent", "X509Data", "X509Certificate"]) add(n);
}
/** The known name written in `t` from `from` to `to` (hash `h`), or UNKNOWN. */
export function known(t: string, from: number, to: number, h: number): string {
  const list = NAMES.get(h);
  if (list === undefined) return UNKNOWN;
  for (const name of list) {
    if (name.length !== to - from) continue;
    let k = 0;
    while (k < name.length && name.charCodeAt(k) === t.charCodeAt(from + k)) k++;
    if (k === name.length) return name;
  }
  return UNKNOWN;
}
