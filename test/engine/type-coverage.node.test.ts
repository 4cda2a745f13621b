/**
 * Per document type, every element of its schema family (DTE_v10's Documento for 33, 34, 46, 52,
 * 56, 61; Liquidacion for 43; Exportaciones for 110–112; EnvioBOLETA's DTE for 39, 41) is written
 * by some body of that type, or is in NOT_ON_TYPE with the types it is refused on and why
 * (docs/format-coverage.md explains each). The bodies of a type are the samples of that type and
 * every sample of its family re-typed to it, the fields the engine refuses on that type left out
 * (the refusals are what this test measures). Every attribute of the schemas is one the engine
 * writes itself (ENGINE_ATTRIBUTES). So an element a type loses, or a new element in the schemas,
 * fails here until it is expressible or documented. model-coverage.node.test.ts checks the same
 * per family.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DOCUMENT_TYPE_CODES, DOCUMENT_TYPES, resolveDocumentType } from "../../src/countries/cl/documents/document-types";
import { buildDteXml } from "../../src/countries/cl/documents/dte";
import { DTE_MODEL, ENVIO_BOLETA_MODEL } from "../../src/countries/cl/documents/dte-model";
import type { ElementDecl, Group } from "../../src/countries/cl/documents/dte-schema";
import { EngineError } from "../../src/countries/cl/errors";
import { computeDocument, type InvoiceInput } from "../../src/countries/cl/documents/invoice";
import type { Ted } from "../../src/countries/cl/documents/ted";
import { childElements, parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { COVERAGE_INPUTS } from "../helpers/cl-coverage-samples";
import { FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { SAMPLE_INPUTS } from "../helpers/cl-samples";
import { TYPE_INPUTS } from "../helpers/cl-type-samples";

type Family = "Documento" | "Liquidacion" | "Exportaciones" | "Boleta";
const familyOf = (code: number): Family => (DOCUMENT_TYPES[code as 33].boleta ? "Boleta" : DOCUMENT_TYPES[code as 33].xmlBranch);

const DOCUMENTO_GOODS = [33, 34, 46, 56, 61];
const NOTES = [56, 61];
/**
 * Elements (paths under the family's root, a path covering its descendants) the body refuses on
 * some types of the family, with the reason (Formato DTE v2.2 unless said). Keyed by path; the
 * types are those it is refused on.
 */
const NOT_ON_TYPE: Record<string, { types: number[]; why: string }> = {
  "/Encabezado/IdDoc/IndNoRebaja": { types: [33, 34, 46, 52, 56], why: "credit notes only (a credit note without the right to reduce the debit IVA)" },
  "/Encabezado/IdDoc/TipoDespacho": { types: NOTES, why: "a note does not go with goods" },
  "/Encabezado/IdDoc/IndTraslado": { types: DOCUMENTO_GOODS, why: "guías de despacho only" },
  "/Encabezado/IdDoc/FmaPagExp": { types: DOCUMENTO_GOODS, why: "the customs payment form of exports and guías for export" },
  "/Encabezado/Emisor/GuiaExport": { types: DOCUMENTO_GOODS, why: "the issuer of a guía for export" },
  "/Encabezado/Transporte/Aduana": { types: DOCUMENTO_GOODS, why: "customs data of exports and guías for export" },
  "/Encabezado/Totales/Comisiones": { types: [33, 34, 52], why: "commissions belong to 43, 46 and the notes that modify a 46" },
  "/Comisiones": { types: [33, 34, 52], why: "commissions belong to 43, 46 and the notes that modify a 46" },
  "/Encabezado/Totales/CredEC": { types: [34, 46], why: "a 34 has no IVA; the construction credit does not apply to a factura de compra" },
  "/Encabezado/Totales/GrntDep": { types: [46], why: "container deposits are not part of a factura de compra" },
  // A 34 (41) is the exempt factura (boleta): every line is exempt, nothing is taxed.
  ...Object.fromEntries(
    ["/Encabezado/Totales/TasaIVA", "/Encabezado/Totales/IVAProp", "/Encabezado/Totales/IVATerc", "/Encabezado/Totales/ImptoReten", "/Encabezado/Totales/IVANoRet", "/Encabezado/OtraMoneda/MntNetoOtrMnda", "/Encabezado/OtraMoneda/IVAOtrMnda", "/Encabezado/OtraMoneda/ImpRetOtrMnda", "/Encabezado/OtraMoneda/IVANoRetOtrMnda", "/Detalle/CodImpAdic"].map((p) => [p, { types: [34], why: "an exempt factura has no taxed amount" }]),
  ),
  "/Encabezado/Totales/MntNeto": { types: [34, 41], why: "exempt types have no net amount" },
  "/Encabezado/Totales/IVA": { types: [34, 41], why: "exempt types have no IVA" },
  "/SubTotInfo/SubTotNetoSTI": { types: [34, 41, 110, 111, 112], why: "exempt types: a sub-total has no taxed part (the schema's 0.01 minimum: left out)" },
  "/SubTotInfo/SubTotIVASTI": { types: [34, 41, 110, 111, 112], why: "exempt types: a sub-total has no IVA" },
  "/SubTotInfo/SubTotAdicSTI": { types: [34, 39, 41, 110, 111, 112], why: "no additional taxes: exempt types, and a boleta's lines carry no CodImpAdic" },
};

/** Attributes of the DTE schemas, all written by the engine (none comes from the body). */
const ENGINE_ATTRIBUTES: Record<string, string> = {
  version: "fixed 1.0 (DTE, TED, CAF, Caratula, EnvioDTE, EnvioBOLETA)",
  ID: "the document's or the set's id, made by the engine (F{folio}T{type}, SetDoc)",
  algoritmo: "the stamp's signature algorithm (FRMT, and FRMA copied from the CAF)",
};

function walk(decl: ElementDecl, pathSoFar: string, out: Set<string>, attrs: Set<string>): void {
  const [name, , , type] = decl;
  const p = `${pathSoFar}/${name}`;
  if (type === "sig") return;
  out.add(p);
  if (typeof type !== "object") return;
  for (const a of type.a) attrs.add(a[0]);
  if (!("m" in type) || !type.m) return;
  const group = (g: Group) => {
    for (const x of g.s ?? g.c ?? []) Array.isArray(x) ? walk(x as ElementDecl, p, out, attrs) : group(x as Group);
  };
  group(type.m);
}

/** The element paths of each family, under its root (Documento, Liquidacion, Exportaciones), the stamp (TED) aside. */
function familyPaths(attrs: Set<string>): Record<Family, Set<string>> {
  const out: Record<Family, Set<string>> = { Documento: new Set(), Liquidacion: new Set(), Exportaciones: new Set(), Boleta: new Set() };
  const add = (paths: Set<string>, fam: (root: string) => Family | undefined) => {
    for (const p of paths) {
      const m = /^\/DTE\/(Documento|Liquidacion|Exportaciones)(\/.+)$/.exec(p);
      const f = m && fam(m[1]!);
      if (f && !/\/TED(\/|$)/.test(m[2]!)) out[f].add(m[2]!);
    }
  };
  const dte = new Set<string>();
  walk(DTE_MODEL, "", dte, attrs);
  add(dte, (r) => r as Family);
  const set = (ENVIO_BOLETA_MODEL[3] as { m: { s: ElementDecl[] } }).m.s.find((x) => x[0] === "SetDTE")!;
  const boletaDte = (set[3] as { m: { s: ElementDecl[] } }).m.s.find((x) => x[0] === "DTE")!;
  const boleta = new Set<string>();
  walk(ENVIO_BOLETA_MODEL, "", new Set(), attrs);
  walk(boletaDte, "", boleta, attrs);
  add(boleta, () => "Boleta");
  return out;
}

const TED: Ted = { xml: '<TED version="1.0"/>', flattened: "", bytes: new Uint8Array(), frmt: "" };
/** Refusals of a field on a type; anything else (a total a re-typed body no longer matches) drops the field too. */
const DROPPED = ["FIELD_NOT_ALLOWED", "TAX_NOT_ALLOWED", "REFERENCE_INVALID", "TOTALS_MISMATCH", "AMOUNT_OUT_OF_RANGE"];

function retype(input: InvoiceInput, code: number): InvoiceInput {
  const b = structuredClone(input);
  const t = DOCUMENT_TYPES[code as 33];
  b.invoice_type = String(code);
  if (t.note) {
    b.reason_code ??= "COM";
    b.billing_reference = [{ number: 1, invoice_type: t.export ? "110" : "33", invoice_date: "2026-11-19" }, ...(b.billing_reference ?? [])];
  }
  for (const i of b.items) {
    if (t.code === 43) i.settled_type ??= "33";
    else delete i.settled_type;
  }
  return b;
}

/** Leaves out the field at a JSON path such as items[1].taxes[0] (a tax's type: the whole tax). */
function drop(body: Record<string, unknown>, field: string): boolean {
  const keys = field.replace(/\.type$/, "").replace(/\[(\d+)\]/g, ".$1").split(".");
  const last = keys.pop()!;
  const parent = keys.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], body) as Record<string, unknown> | unknown[] | undefined;
  if (!parent || !(last in parent)) return false;
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
  return true;
}

function writtenBy(input: InvoiceInput, out: Set<string>): void {
  const body = structuredClone(input);
  for (let attempt = 0; attempt < 30; attempt++) {
    try {
      const root = parseXml(buildDteXml(computeDocument(body), 1, TED, "2026-11-20T10:30:05")).documentElement as XElement;
      const visit = (e: XElement, p: string) => {
        for (const c of childElements(e)) {
          out.add(`${p}/${c.localName}`);
          visit(c, `${p}/${c.localName}`);
        }
      };
      visit(childElements(root)[0]!, "");
      return;
    } catch (e) {
      if (!(e instanceof EngineError) || !DROPPED.includes(e.code) || !e.field || !drop(body as unknown as Record<string, unknown>, e.field)) return;
    }
  }
}

const refusedOn = (code: number, p: string) => Object.entries(NOT_ON_TYPE).some(([key, v]) => v.types.includes(code) && (p === key || p.startsWith(`${key}/`)));

describe("every element of each type's schema can be written on that type", () => {
  const attrs = new Set<string>();
  const schema = familyPaths(attrs);
  const written: Record<number, Set<string>> = {};
  beforeAll(() => {
    const all = { ...SAMPLE_INPUTS, ...FEATURE_INPUTS, ...COVERAGE_INPUTS, ...TYPE_INPUTS };
    for (const code of DOCUMENT_TYPE_CODES) {
      written[code] = new Set();
      for (const input of Object.values(all)) {
        const own = resolveDocumentType(input.invoice_type).code;
        if (familyOf(own) === familyOf(code)) writtenBy(own === code ? input : retype(input, code), written[code]!);
      }
    }
  });

  it("the type bodies are valid as sent (none relies on a field being left out)", () => {
    for (const [name, input] of Object.entries(TYPE_INPUTS)) expect(() => computeDocument(input), name).not.toThrow();
  });

  it("per type: every element is written, or refused on that type in NOT_ON_TYPE", () => {
    const missing = DOCUMENT_TYPE_CODES.flatMap((code) => [...schema[familyOf(code)]].filter((p) => !written[code]!.has(p) && !refusedOn(code, p)).map((p) => `${code} ${p}`));
    expect(missing).toEqual([]);
  });

  it("NOT_ON_TYPE lists only elements of the type's schema that no body of the type writes", () => {
    for (const [key, v] of Object.entries(NOT_ON_TYPE)) {
      for (const code of v.types) {
        expect(schema[familyOf(code)].has(key), `${key} is not in the schema of ${code}`).toBe(true);
        const writtenUnder = [...written[code]!].filter((p) => p === key || p.startsWith(`${key}/`));
        expect(writtenUnder, `${key} is written on ${code} now: take ${code} out of NOT_ON_TYPE`).toEqual([]);
      }
    }
  });

  it("docs/format-coverage.md explains every element refused on some type", () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, "../../docs/format-coverage.md"), "utf8");
    for (const k of Object.keys(NOT_ON_TYPE)) {
      const name = k.split("/").pop()!;
      expect(doc, `docs/format-coverage.md does not mention ${name}`).toContain(`\`${name}\``);
    }
  });

  it("every attribute of the schemas is written by the engine", () => {
    expect([...attrs].filter((a) => !(a in ENGINE_ATTRIBUTES))).toEqual([]);
  });
});
