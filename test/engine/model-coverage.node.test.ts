/**
 * Every element of the SII's DTE (DTE_v10's Documento, Liquidacion and Exportaciones,
 * and EnvioBOLETA_v11's boleta DTE) can be written from the POST body. The element paths of the
 * generated model (dte-model.ts, from the XSDs) are compared with the paths the engine writes for
 * the type samples, the feature samples and the coverage samples (per-type samples too); an element no body reaches fails
 * the test unless it is in NOT_WRITABLE with the reason it makes no sense for an API user. So a new
 * element in the schemas, or a writer that stops writing one, cannot go unnoticed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { buildDteXml } from "../../src/countries/cl/documents/dte";
import { assertDocumentSchema } from "../../src/countries/cl/documents/document-schema";
import { DTE_MODEL, ENVIO_BOLETA_MODEL } from "../../src/countries/cl/documents/dte-model";
import type { ElementDecl } from "../../src/countries/cl/documents/dte-schema";
import { computeDocument } from "../../src/countries/cl/documents/invoice";
import type { Ted } from "../../src/countries/cl/documents/ted";
import { childElements, parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { COVERAGE_INPUTS } from "../helpers/cl-coverage-samples";
import { FEATURE_INPUTS } from "../helpers/cl-feature-samples";
import { SAMPLE_INPUTS } from "../helpers/cl-samples";
import { TYPE_INPUTS } from "../helpers/cl-type-samples";

/** Boleta paths are prefixed with /EnvioBOLETA to keep them apart from DTE_v10's Documento. */
const BOLETA = "/EnvioBOLETA";

/**
 * Elements the body does not write, each with why. Any other element missing from the samples'
 * XML fails the test; an element listed here that some sample writes fails it too (the list must
 * shrink when the body grows).
 */
const NOT_WRITABLE: Record<string, string> = {
  // Every line of an export is exempt: a sub-total has no taxed or additional-tax part, and the
  // schema's Dec16_2 starts at 0.01, so the part is left out rather than written as 0.
  "/DTE/Exportaciones/SubTotInfo/SubTotNetoSTI": "exports have no taxed lines (always 0, left out)",
  "/DTE/Exportaciones/SubTotInfo/SubTotIVASTI": "exports have no IVA (always 0, left out)",
  "/DTE/Exportaciones/SubTotInfo/SubTotAdicSTI": "exports have no additional taxes (always 0, left out)",
  [`${BOLETA}/DTE/Documento/SubTotInfo/SubTotAdicSTI`]: "a boleta's Detalle has no CodImpAdic, so a sub-total has no additional taxes (always 0, left out)",
};

function modelPaths(decl: ElementDecl, path: string, out: Set<string>): void {
  const [name, , , type] = decl;
  const p = `${path}/${name}`;
  if (type === "sig") return; // ds:Signature: made by the signer, checked by the XMLDSig verification
  out.add(p);
  if (typeof type !== "object" || !("m" in type)) return;
  const walk = (c: { s?: unknown[]; c?: unknown[] }) => {
    for (const x of c.s ?? c.c ?? []) Array.isArray(x) ? modelPaths(x as ElementDecl, p, out) : walk(x as { s?: unknown[]; c?: unknown[] });
  };
  walk(type.m as { s?: unknown[]; c?: unknown[] });
}

/** Every element path of DTE_v10's DTE and of EnvioBOLETA's DTE, the stamp (TED, made by the engine from the CAF) aside. */
function schemaPaths(): Set<string> {
  const all = new Set<string>();
  modelPaths(DTE_MODEL, "", all);
  const set = (ENVIO_BOLETA_MODEL[3] as { m: { s: ElementDecl[] } }).m.s.find((x) => x[0] === "SetDTE")!;
  const dte = (set[3] as { m: { s: ElementDecl[] } }).m.s.find((x) => x[0] === "DTE")!;
  modelPaths(dte, BOLETA, all);
  return new Set([...all].filter((p) => !/\/TED(\/|$)/.test(p)));
}

const TED: Ted = { xml: '<TED version="1.0"/>', flattened: "", bytes: new Uint8Array(), frmt: "" };

function writtenPaths(): Set<string> {
  const out = new Set<string>();
  const visit = (e: XElement, path: string) => {
    const p = `${path}/${e.localName}`;
    out.add(p);
    for (const c of childElements(e)) visit(c, p);
  };
  for (const [name, input] of Object.entries({ ...SAMPLE_INPUTS, ...FEATURE_INPUTS, ...COVERAGE_INPUTS, ...TYPE_INPUTS })) {
    const d = computeDocument(input);
    expect(() => assertDocumentSchema(d), name).not.toThrow();
    visit(parseXml(buildDteXml(d, 1, TED, "2026-11-20T10:30:05")).documentElement as XElement, d.type.boleta ? BOLETA : "");
  }
  return out;
}

describe("the body expresses every element of the SII's DTE", () => {
  const schema = schemaPaths();
  let written: Set<string>;
  beforeAll(() => {
    written = writtenPaths();
  });

  it("the model walk sees the whole schema (all three DTE_v10 branches and the boleta DTE)", () => {
    expect(schema.size).toBeGreaterThan(600);
    for (const p of ["/DTE/Documento/Encabezado/IdDoc/TpoTranCompra", "/DTE/Liquidacion/Detalle/TpoDocLiq", "/DTE/Exportaciones/Encabezado/Transporte/Aduana/IdAdicPtoDesemb", `${BOLETA}/DTE/Documento/Referencia/CodCaja`]) expect(schema).toContain(p);
  });

  it("every element is written by some body, or is in NOT_WRITABLE with its reason", () => {
    const missing = [...schema].filter((p) => !written.has(p) && !(p in NOT_WRITABLE));
    expect(missing).toEqual([]);
  });

  it("NOT_WRITABLE lists only schema elements that no body writes", () => {
    for (const p of Object.keys(NOT_WRITABLE)) {
      expect(schema.has(p), `${p} is not in the schema`).toBe(true);
      expect(written.has(p), `${p} is written now: remove it from NOT_WRITABLE`).toBe(false);
    }
    // the list as reviewed (4 always-zero parts): it may shrink, not grow unnoticed; per type: type-coverage.node.test.ts
    expect(Object.keys(NOT_WRITABLE).length).toBeLessThanOrEqual(4);
  });
});
