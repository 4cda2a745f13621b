#!/usr/bin/env node
// Writes src/countries/cl/documents/dte-model.ts, the structure of a DTE, of an EnvioDTE and of an
// EnvioBOLETA (element order, required and repeated elements, simple types with their lengths,
// digits, ranges and code lists, attributes) in our own compact form, from the SII's official
// DTE_v10.xsd + SiiTypes_v10.xsd, EnvioDTE_v10.xsd and the self-contained EnvioBOLETA_v11.xsd. The
// schemas are read at development time from SII_SCHEMAS_DIR or ../shared/sii-schemas and never
// copied into the project; only this model (facts: names, cardinalities, facets) is. Run it again
// when the SII publishes new schemas: `node scripts/gen-dte-model.mjs`; `--check` only compares
// (exit 1 when the committed file differs; test/reception/schema.node.test.ts runs it).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DOMParser } from "@xmldom/xmldom";

const root = path.resolve(import.meta.dirname, "..");
const dir = process.env.SII_SCHEMAS_DIR ?? path.resolve(root, "../shared/sii-schemas");
const XS = "http://www.w3.org/2001/XMLSchema";
const read = (f) => new DOMParser().parseFromString(readFileSync(path.join(dir, f), "latin1"), "text/xml");
const updated = (f) => /Fecha Actualizacion:\s*([^\n]+)\n(?![\s\S]*Fecha Actualizacion)/.exec(readFileSync(path.join(dir, f), "latin1"))?.[1]?.trim() ?? "not stated";
const header = updated("DTE_v10.xsd");

const kids = (el, name) => {
  const out = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && c.namespaceURI === XS && (!name || c.localName === name)) out.push(c);
  return out;
};
const kid = (el, name) => kids(el, name)[0];
const local = (q) => q.slice(q.indexOf(":") + 1);

// The named types of the schema set being read (EnvioBOLETA_v11 redefines RUTType and others, so
// each set has its own names; the facet table below is shared).
let named = new Map();
let namedComplex = new Map();
let globals = new Map();
function useSchemaSet(files) {
  named = new Map();
  namedComplex = new Map();
  globals = new Map();
  for (const f of files) {
    const doc = read(f).documentElement;
    for (const st of kids(doc, "simpleType")) named.set(st.getAttribute("name"), st);
    for (const ct of kids(doc, "complexType")) namedComplex.set(ct.getAttribute("name"), ct);
    for (const e of kids(doc, "element")) globals.set(e.getAttribute("name"), e);
  }
}

// Simple types: a table of distinct facet sets, referred to by index.
const simple = [];
const simpleIds = new Map();
function simpleOf(st) {
  const r = kid(st, "restriction");
  if (!r) throw new Error("simpleType without restriction");
  const base = r.getAttribute("base");
  const t = base.startsWith("xs:") ? { b: local(base) } : { ...simple[simpleRef(base)] };
  let en = null; // a restriction's own enumeration replaces its base's
  for (const f of kids(r)) {
    const v = f.getAttribute("value");
    switch (f.localName) {
      case "enumeration": (en ??= []).push(v); break;
      case "minLength": t.minL = Number(v); break;
      case "maxLength": t.maxL = Number(v); break;
      case "length": t.len = Number(v); break;
      case "pattern": if (t.pat) throw new Error("two patterns"); t.pat = v; break;
      case "totalDigits": t.td = Number(v); break;
      case "fractionDigits": t.fd = Number(v); break;
      case "minInclusive": t.min = v; break;
      case "maxInclusive": t.max = v; break;
      default: throw new Error(`facet ${f.localName} not supported`);
    }
  }
  if (en) t.en = en;
  return add(t);
}
function add(t) {
  const key = JSON.stringify(t);
  if (!simpleIds.has(key)) { simpleIds.set(key, simple.length); simple.push(t); }
  return simpleIds.get(key);
}
function simpleRef(qname) {
  if (qname.startsWith("xs:")) return add({ b: local(qname) });
  const st = named.get(local(qname));
  if (!st) throw new Error(`unknown type ${qname}`);
  return simpleOf(st);
}

// Attributes: [name, required, simple type, fixed value].
function attrsOf(ct) {
  return kids(ct, "attribute").map((a) => {
    const st = kid(a, "simpleType");
    const type = st ? simpleOf(st) : a.getAttribute("type") ? typeRef(a.getAttribute("type")) : add({ b: "string" });
    return [a.getAttribute("name"), a.getAttribute("use") === "required" ? 1 : 0, type, a.getAttribute("fixed")];
  });
}
const typeRef = (q) => (q.startsWith("xs:") ? add({ b: local(q) }) : simpleRef(q));

// Content: { s: particles } sequence, { c: particles } choice; an element is [name, min, max, type]
// where type is a simple type index, a complex content { a: attrs, m: model }, or { t: simple, a }
// (text with attributes), or "sig" (ds:Signature, checked by the XMLDSig verification instead).
const occurs = (p) => [Number(p.getAttribute("minOccurs") || 1), p.getAttribute("maxOccurs") === "unbounded" ? -1 : Number(p.getAttribute("maxOccurs") || 1)];
function complexOf(ct) {
  const sc = kid(ct, "simpleContent");
  if (sc) {
    const ext = kid(sc, "extension");
    return { t: typeRef(ext.getAttribute("base")), a: attrsOf(ext) };
  }
  const group = kid(ct, "sequence") ?? kid(ct, "choice");
  return { a: attrsOf(ct), m: group ? groupOf(group) : null };
}
function groupOf(g) {
  const [min, max] = occurs(g);
  const items = kids(g).filter((p) => ["element", "sequence", "choice"].includes(p.localName)).map((p) => (p.localName === "element" ? elementOf(p) : groupOf(p)));
  const out = g.localName === "sequence" ? { s: items } : { c: items };
  if (min !== 1) out.min = min;
  if (max !== 1) out.max = max;
  return out;
}
function elementOf(e) {
  const [min, max] = occurs(e);
  const ref = e.getAttribute("ref");
  if (ref === "ds:Signature") return ["Signature", min, max, "sig"];
  if (ref) {
    const [name, , , type] = elementOf(globals.get(local(ref)) ?? fail(`unknown element ${ref}`));
    return [name, min, max, type];
  }
  const name = e.getAttribute("name");
  const ct = kid(e, "complexType");
  const st = kid(e, "simpleType");
  const tn = e.getAttribute("type");
  let type;
  if (ct) type = complexOf(ct);
  else if (st) type = simpleOf(st);
  else if (tn && namedComplex.has(local(tn))) type = complexOf(namedComplex.get(local(tn)));
  else if (tn) type = typeRef(tn);
  else type = add({ b: "string" });
  return [name, min, max, type];
}

function fail(message) {
  throw new Error(message);
}

useSchemaSet(["SiiTypes_v10.xsd", "DTE_v10.xsd", "EnvioDTE_v10.xsd"]);
const model = elementOf(globals.get("DTE"));
const envioDte = elementOf(globals.get("EnvioDTE"));
useSchemaSet(["EnvioBOLETA_v11.xsd"]);
const envioBoleta = elementOf(globals.get("EnvioBOLETA"));

// The EnvioDTE's DTE is the DTE model itself: written once, referred to by name.
const dteType = JSON.stringify(model[3]);
const envioDteText = JSON.stringify(envioDte).replace(dteType, "DTE_MODEL[3]");
if (envioDteText.includes(dteType) || !envioDteText.includes("DTE_MODEL[3]")) fail("the EnvioDTE's DTE is not the DTE model");

const out = `/**
 * The structure of a DTE as the SII's schema DTE_v10.xsd (with SiiTypes_v10.xsd; last change noted
 * in its header: ${header}) defines it, of the EnvioDTE that carries DTEs (EnvioDTE_v10.xsd, last
 * change ${updated("EnvioDTE_v10.xsd")}) and of the EnvioBOLETA (the self-contained
 * EnvioBOLETA_v11.xsd, with its own boleta DTE), in our own compact form: GENERATED by
 * scripts/gen-dte-model.mjs from the official schemas (read at development time, never copied
 * here). Do not edit by hand; read by dte-schema.ts.
 *
 * SIMPLE_TYPES: facet sets {b: XSD base type, en: allowed values, minL/maxL/len: length, pat:
 * pattern, td/fd: total/fraction digits, min/max: inclusive bounds}.
 * DTE_MODEL: an element is [name, minOccurs, maxOccurs (-1 unbounded), type]; type is an index into
 * SIMPLE_TYPES, {a: attributes, m: content} for element content, {t: simple type, a: attributes}
 * for text with attributes, or "sig" (ds:Signature: checked by the XMLDSig verification). Content
 * is {s: [...]} (sequence) or {c: [...]} (choice) with optional min/max. An attribute is [name,
 * required (1/0), simple type, fixed value or null].
 */
import type { ElementDecl, SimpleType } from "./dte-schema";

export const SIMPLE_TYPES: SimpleType[] = ${JSON.stringify(simple)};

export const DTE_MODEL: ElementDecl = ${JSON.stringify(model)};

export const ENVIO_DTE_MODEL: ElementDecl = ${envioDteText};

export const ENVIO_BOLETA_MODEL: ElementDecl = ${JSON.stringify(envioBoleta)};
`;
const target = path.join(root, "src/countries/cl/documents/dte-model.ts");
if (process.argv.includes("--check")) {
  const same = readFileSync(target, "utf8") === out;
  console.log(same ? "dte-model.ts is in sync with the schemas" : "dte-model.ts differs from what the schemas give: run node scripts/gen-dte-model.mjs");
  process.exit(same ? 0 : 1);
}
writeFileSync(target, out);
console.log(`dte-model.ts: ${simple.length} simple types, ${out.length} bytes`);
