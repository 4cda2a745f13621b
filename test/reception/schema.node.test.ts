/**
 * The Worker's schema check of received DTEs (src/countries/cl/documents/dte-schema.ts, a model
 * generated from DTE_v10.xsd) against the official XSD run by libxml2 (xmllint-wasm): every DTE
 * type the engine produces is valid for both, and each mutation (a missing, misplaced, unknown or
 * repeated element, a value of the wrong type, too long, out of its list or range, a bad attribute)
 * is invalid for both. Schemas come from SII_SCHEMAS_DIR or ../shared/sii-schemas; missing FAILS.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { dteSchemaProblems, envelopeSchemaProblems } from "../../src/countries/cl/documents/dte-schema";
import { encodeLatin1, parseXml, type XElement } from "../../src/countries/cl/xml/xml";
import { buildSamples, SAMPLE_INPUTS, type SampleSet } from "../helpers/cl-samples";
import { assertDocumentSchema, computeDocument } from "../../src/countries/cl";

const dir = process.env.SII_SCHEMAS_DIR ?? path.resolve(import.meta.dirname, "../../../shared/sii-schemas");
const file = (name: string) => ({ fileName: name, contents: new Uint8Array(readFileSync(path.join(dir, name))) as unknown as string });

async function libxml2(xml: string): Promise<string[]> {
  const r = await validateXML({ xml: [{ fileName: "dte.xml", contents: encodeLatin1(xml) as unknown as string }], schema: [file("DTE_v10.xsd")], preload: [file("SiiTypes_v10.xsd"), file("xmldsignature_v10.xsd")] });
  return r.valid ? [] : r.errors.map((e) => e.rawMessage);
}
const ours = (xml: string) => dteSchemaProblems(parseXml(xml).documentElement as XElement);

type Kind = "EnvioDTE" | "EnvioBOLETA";
/** The envelope schemas: EnvioDTE includes DTE_v10 (and SiiTypes); EnvioBOLETA is self-contained. */
async function libxml2Envelope(xml: string, kind: Kind): Promise<string[]> {
  const preload = kind === "EnvioDTE" ? [file("DTE_v10.xsd"), file("SiiTypes_v10.xsd"), file("xmldsignature_v10.xsd")] : [file("xmldsignature_v10.xsd")];
  const r = await validateXML({ xml: [{ fileName: "envio.xml", contents: encodeLatin1(xml) as unknown as string }], schema: [file(kind === "EnvioDTE" ? "EnvioDTE_v10.xsd" : "EnvioBOLETA_v11.xsd")], preload });
  return r.valid ? [] : r.errors.map((e) => e.rawMessage);
}
const oursEnvelope = (xml: string, kind: Kind) => envelopeSchemaProblems(parseXml(xml).documentElement as XElement, kind);
const envelopeOf = (kind: Kind) => set.samples.find((x) => x.name === (kind === "EnvioDTE" ? "EnvioDTE to SII" : "EnvioBOLETA"))!.xmlString;

let set: SampleSet;
beforeAll(async () => {
  expect(existsSync(path.join(dir, "DTE_v10.xsd")), `SII schemas not found in ${dir} (set SII_SCHEMAS_DIR)`).toBe(true);
  set = await buildSamples();
}, 120_000);

/** Mutations of a factura (type 33) that the SII schema refuses: [what, from, to]. */
const MUTATIONS: [string, RegExp, string][] = [
  ["required element removed", /<FchEmis>[^<]*<\/FchEmis>\n?/, ""],
  ["two elements swapped", /(<TipoDTE>33<\/TipoDTE>\n?)(<Folio>\d+<\/Folio>\n?)/, "$2$1"],
  ["unknown element", /<\/IdDoc>/, "<Extra>1</Extra></IdDoc>"],
  ["element repeated past its maximum", /(<FchEmis>[^<]*<\/FchEmis>)/, "$1$1"],
  ["type outside its code list", /<TipoDTE>33<\/TipoDTE>/, "<TipoDTE>99</TipoDTE>"],
  ["not a date", /<FchEmis>[^<]*<\/FchEmis>/, "<FchEmis>2026-13-01</FchEmis>"],
  ["date out of range", /<FchEmis>[^<]*<\/FchEmis>/, "<FchEmis>1999-12-31</FchEmis>"],
  ["not a number", /<MntTotal>\d+<\/MntTotal>/, "<MntTotal>12a</MntTotal>"],
  ["too many digits", /<Folio>\d+<\/Folio>/, "<Folio>12345678901</Folio>"],
  ["too long", /<RznSoc>[^<]*<\/RznSoc>/, `<RznSoc>${"A".repeat(101)}</RznSoc>`],
  ["pattern", /<RUTRecep>[^<]*<\/RUTRecep>/, "<RUTRecep>77879240-X</RUTRecep>"],
  ["text in element content", /<IdDoc>/, "<IdDoc>texto"],
  ["required attribute removed", /(<DTE[^>]*) version="1.0"/, "$1"],
  ["undeclared attribute", /<Encabezado>/, '<Encabezado extra="1">'],
  ["choice left empty", /<Documento ID="[^"]*">[\s\S]*<\/Documento>/, ""],
  ["wrong namespace", /<Encabezado>/, '<Encabezado xmlns="urn:otro">'],
  ["negative where positive", /<Folio>\d+<\/Folio>/, "<Folio>0</Folio>"],
  ["too many decimals", /<QtyItem>[^<]*<\/QtyItem>/, "<QtyItem>2.1234567</QtyItem>"],
];

/** Variants still valid: leading zeros, trailing decimal zeros, whitespace around a number. */
const STILL_VALID: [string, RegExp, string][] = [
  ["leading and trailing zeros", /<QtyItem>[^<]*<\/QtyItem>/, "<QtyItem>002.500000000</QtyItem>"],
  ["whitespace around a number", /<MntTotal>(\d+)<\/MntTotal>/, "<MntTotal>\n $1 </MntTotal>"],
];

describe("DTE schema check in the Worker agrees with libxml2 and the official XSD", () => {
  it("every DTE type the engine produces (boletas have their own schema) is valid for both", async () => {
    const types = Object.keys(set.dtes).filter((t) => !["39", "41"].includes(t));
    expect(types.length).toBeGreaterThanOrEqual(8);
    for (const t of types) {
      const xml = set.dtes[t]!.xmlString;
      expect(await libxml2(xml), `libxml2, DTE ${t}`).toEqual([]);
      expect(ours(xml), `ours, DTE ${t}`).toEqual([]);
    }
    // A boleta is no DTE_v10 document: refused by both.
    for (const t of ["39", "41"].filter((x) => set.dtes[x])) {
      expect((await libxml2(set.dtes[t]!.xmlString)).length, `libxml2, boleta ${t}`).toBeGreaterThan(0);
      expect(ours(set.dtes[t]!.xmlString).length, `ours, boleta ${t}`).toBeGreaterThan(0);
    }
  }, 120_000);

  it.each(STILL_VALID)("%s: valid for both", async (_what, from, to) => {
    const xml = set.dtes["33"]!.xmlString;
    expect(from.test(xml), `variant applies: ${from}`).toBe(true);
    const variant = xml.replace(from, to);
    expect(await libxml2(variant)).toEqual([]);
    expect(ours(variant)).toEqual([]);
  }, 60_000);

  it.each(MUTATIONS)("%s: invalid for both", async (_what, from, to) => {
    const xml = set.dtes["33"]!.xmlString;
    expect(from.test(xml), `mutation applies: ${from}`).toBe(true);
    const mutated = xml.replace(from, to);
    expect((await libxml2(mutated)).length, "libxml2 refuses it").toBeGreaterThan(0);
    expect(ours(mutated).length, "ours refuses it").toBeGreaterThan(0);
  }, 60_000);
});

/** Mutations of the engine's envelopes that their schema refuses: [envelope, what, from, to]. */
const ENVELOPE_MUTATIONS: [Kind, string, RegExp, string][] = [
  ["EnvioDTE", "Caratula field removed", /<RutReceptor>[^<]*<\/RutReceptor>\n?/, ""],
  ["EnvioDTE", "FchResol not a date", /<FchResol>[^<]*<\/FchResol>/, "<FchResol>2026-1-15</FchResol>"],
  ["EnvioDTE", "NroResol too long", /<NroResol>[^<]*<\/NroResol>/, "<NroResol>1234567</NroResol>"],
  ["EnvioDTE", "SubTotDTE of a boleta type", /<TpoDTE>33<\/TpoDTE>/, "<TpoDTE>39</TpoDTE>"],
  ["EnvioDTE", "SubTotDTE with NroDTE 0", /<NroDTE>\d+<\/NroDTE>/, "<NroDTE>0</NroDTE>"],
  ["EnvioDTE", "every SubTotDTE removed", /<SubTotDTE>[\s\S]*<\/SubTotDTE>\n?/, ""],
  ["EnvioDTE", "an item name over 80 characters in a DTE", /<NmbItem>[^<]*<\/NmbItem>/, `<NmbItem>${"X".repeat(81)}</NmbItem>`],
  ["EnvioDTE", "SetDTE without ID", /<SetDTE ID="[^"]*">/, "<SetDTE>"],
  ["EnvioBOLETA", "IndServicio outside 1-4", /<IndServicio>\d<\/IndServicio>/, "<IndServicio>5</IndServicio>"],
  ["EnvioBOLETA", "issuer name over the boleta's 100 characters", /<RznSocEmisor>[^<]*<\/RznSocEmisor>/, `<RznSocEmisor>${"B".repeat(101)}</RznSocEmisor>`],
  ["EnvioBOLETA", "a factura type in an EnvioBOLETA", /<TpoDTE>39<\/TpoDTE>/, "<TpoDTE>33</TpoDTE>"],
  ["EnvioBOLETA", "an element only facturas have", /<\/IdDoc>/, "<FmaPago>1</FmaPago></IdDoc>"],
];

describe("envelope schema check (the simulator's RSC) agrees with libxml2 and the official XSDs", () => {
  it("the generated model is what scripts/gen-dte-model.mjs makes of the schemas", () => {
    const r = spawnSync(process.execPath, [path.resolve(import.meta.dirname, "../../scripts/gen-dte-model.mjs"), "--check"], { env: { ...process.env, SII_SCHEMAS_DIR: dir }, encoding: "utf8" });
    expect(r.stdout + r.stderr).toContain("in sync");
    expect(r.status).toBe(0);
  });

  it.each(["EnvioDTE", "EnvioBOLETA"] as Kind[])("the engine's %s (every DTE type it carries) is valid for both", async (kind) => {
    const xml = envelopeOf(kind);
    expect(await libxml2Envelope(xml, kind)).toEqual([]);
    expect(oursEnvelope(xml, kind)).toEqual([]);
  }, 60_000);

  it("a boleta is refused by the EnvioDTE model, a factura by the EnvioBOLETA model", () => {
    expect(oursEnvelope(envelopeOf("EnvioDTE").replace(/<TipoDTE>33<\/TipoDTE>/, "<TipoDTE>39</TipoDTE>"), "EnvioDTE").join("\n")).toMatch(/TipoDTE: '39' is not one of/);
    expect(oursEnvelope(envelopeOf("EnvioBOLETA").replace(/<TipoDTE>39<\/TipoDTE>/, "<TipoDTE>33</TipoDTE>"), "EnvioBOLETA").join("\n")).toMatch(/TipoDTE: '33' is not one of/);
  });

  it.each(ENVELOPE_MUTATIONS)("%s, %s: invalid for both", async (kind, _what, from, to) => {
    const xml = envelopeOf(kind);
    expect(from.test(xml), `mutation applies: ${from}`).toBe(true);
    const mutated = xml.replace(from, to);
    expect((await libxml2Envelope(mutated, kind)).length, "libxml2 refuses it").toBeGreaterThan(0);
    expect(oursEnvelope(mutated, kind).length, "ours refuses it").toBeGreaterThan(0);
  }, 60_000);
});

describe("the schema check at POST (engine before simulator, SCH-XSD)", () => {
  it("takes every document type the engine computes, boletas against EnvioBOLETA's own DTE", () => {
    for (const [name, input] of Object.entries(SAMPLE_INPUTS)) expect(() => assertDocumentSchema(computeDocument(input)), name).not.toThrow();
  });

  it("refuses what the engine computes with but the schema does not, naming the body field", () => {
    for (const name of ["33", "39"]) {
      const input = SAMPLE_INPUTS[name]!;
      const doc = computeDocument({ ...input, items: [{ quantity: 1e13, unit_price: 1, description: "Tornillos" }], totals: undefined });
      let error: unknown;
      try {
        assertDocumentSchema(doc);
      } catch (e) {
        error = e;
      }
      expect(error, name).toMatchObject({ code: "INVALID_NUMBER", field: "items[0].quantity", message: expect.stringMatching(/DTE\/Documento\/Detalle\[1\]\/QtyItem: '10000000000000' is above/) });
    }
  });
});
