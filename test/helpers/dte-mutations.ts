/**
 * Mutations of a DTE's text for property tests of its readings (the schema walks, the one-pass
 * reader): an element removed, repeated, moved, renamed, its content replaced by a value, an
 * attribute added, text put before it, or a leaf given an element. Each applies at an element
 * chosen by `at`, found through the DTE's flat index; a mutation that cannot apply leaves the text.
 */
import fc from "fast-check";
import { fastParse } from "../../src/countries/cl/xml/fastxml";
import { indexElement } from "../../src/countries/cl/xml/flatxml";

const names = ["Folio", "TipoDTE", "MntTotal", "Detalle", "NmbItem", "Extra", "IdDoc", "Referencia", "TED", "DD"];
const values = ["", "abc", "-1", "0", "2026-13-01", "2026-02-29", "99999999999999999999", " 12 ", "1.5", "1.123456789", "&amp;x", "&#32;", "ñandú", "76086428-5", "A".repeat(90)];
const attributes = [' ID="X1"', ' version="2.0"', ' xmlns:p="urn:p" p:a="1"', ' xmlns="urn:other"', ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="x"', ' algoritmo="SHA1withRSA"'];
const texts = ["x", " ", "\n\n", "&#32;", "\u00a0"];
export type Mutation = { kind: number; at: number; pick: number };
export const mutation = fc.record({ kind: fc.integer({ min: 0, max: 7 }), at: fc.nat(), pick: fc.nat() });

/** Applies one mutation to the DTE text, at an element chosen by `at` (its spans from the flat index). */
export function mutate(xml: string, m: Mutation): string {
  const doc = fastParse(xml);
  const x = doc && indexElement(doc.documentElement!);
  if (!x || x.n < 2) return xml;
  const i = 1 + (m.at % (x.n - 1));
  const start = x.start[i]!;
  const end = x.end[i]!;
  const nameEnd = start + 1 + x.qname[i]!.length;
  switch (m.kind) {
    case 0: // removed
      return xml.slice(0, start) + xml.slice(end);
    case 1: // repeated
      return xml.slice(0, end) + xml.slice(start, end) + xml.slice(end);
    case 2: { // moved after its next sibling
      const n = x.next[i]!;
      return n < 0 ? xml : xml.slice(0, start) + xml.slice(x.end[i]!, x.end[n]!) + xml.slice(start, end) + xml.slice(x.end[n]!);
    }
    case 3: { // renamed
      const name = names[m.pick % names.length]!;
      if (x.ce[i]! < 0) return xml;
      return xml.slice(0, start + 1) + name + xml.slice(nameEnd, x.ce[i]) + `</${name}>` + xml.slice(end);
    }
    case 4: // its content replaced by a value
      return x.ce[i]! < 0 ? xml : xml.slice(0, x.cs[i]) + values[m.pick % values.length] + xml.slice(x.ce[i]);
    case 5: // an attribute added
      return xml.slice(0, nameEnd) + attributes[m.pick % attributes.length] + xml.slice(nameEnd);
    case 6: // text before it
      return xml.slice(0, start) + texts[m.pick % texts.length] + xml.slice(start);
    default: // a leaf holding an element
      return x.ce[i]! < 0 || x.first[i]! >= 0 ? xml : xml.slice(0, x.cs[i]) + "<Extra>1</Extra>" + xml.slice(x.ce[i]);
  }
}

