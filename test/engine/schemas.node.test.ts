/**
 * XSD validation of every XML the Chilean engine produces, for every document type, against the
 * official SII schemas (xmllint-wasm, libxml2 compiled to WebAssembly). Runs in the "node" vitest
 * project because xmllint-wasm needs a Worker thread, which workerd does not offer. Schemas come from
 * SII_SCHEMAS_DIR or ../shared/sii-schemas; missing schemas FAIL the suite.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { buildSamples, HOLDER_RUT, ISSUER_RUT, type SampleSet } from "../helpers/cl-samples";
import { buildFeatureDtes, FEATURE_INPUTS, signInputs } from "../helpers/cl-feature-samples";
import { COVERAGE_INPUTS } from "../helpers/cl-coverage-samples";
import { TYPE_INPUTS } from "../helpers/cl-type-samples";
import { buildEnvioBoleta, buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { canonicalize } from "../../src/countries/cl/xml/c14n";
import { decodeXmlBytes, parseXml } from "../../src/countries/cl/xml/xml";

const dir = process.env.SII_SCHEMAS_DIR ?? path.resolve(import.meta.dirname, "../../../shared/sii-schemas");
const NEEDED = ["DTE_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd", "EnvioDTE_v10.xsd", "EnvioBOLETA_v11.xsd", "RespuestaEnvioDTE_v10.xsd", "Recibos_v10.xsd", "EnvioRecibos_v10.xsd"];
/** Files each root schema includes or imports (EnvioBOLETA is self-contained apart from xmldsig). */
const SETS: Record<string, string[]> = {
  "DTE_v10.xsd": ["SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
  "EnvioDTE_v10.xsd": ["DTE_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
  "EnvioBOLETA_v11.xsd": ["xmldsignature_v10.xsd"],
  "RespuestaEnvioDTE_v10.xsd": ["SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
  "EnvioRecibos_v10.xsd": ["Recibos_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
};

function schemaFile(name: string) {
  return { fileName: name, contents: new Uint8Array(readFileSync(path.join(dir, name))) as unknown as string };
}

async function validate(xml: Uint8Array, root: string): Promise<{ valid: boolean; errors: string[] }> {
  const r = await validateXML({
    xml: [{ fileName: "doc.xml", contents: xml as unknown as string }],
    schema: [schemaFile(root)],
    preload: SETS[root]!.map(schemaFile),
  });
  return { valid: r.valid, errors: r.errors.map((e) => e.rawMessage) };
}

let set: SampleSet;
beforeAll(async () => {
  set = await buildSamples();
}, 120_000);

describe("official SII schemas", () => {
  it("are present (the suite fails, never skips, without them)", () => {
    expect(existsSync(dir), `SII schemas folder not found: ${dir} (set SII_SCHEMAS_DIR)`).toBe(true);
    for (const f of NEEDED) expect(existsSync(path.join(dir, f)), `missing ${f} in ${dir}`).toBe(true);
  });

  it("every DTE type, envelope and acknowledgment validates", async () => {
    const validated: string[] = [];
    for (const s of set.samples) {
      if (!s.schema) continue;
      const r = await validate(s.xml, s.schema);
      expect(r.errors, `${s.name} against ${s.schema}`).toEqual([]);
      expect(r.valid, s.name).toBe(true);
      validated.push(s.name);
    }
    // every type appears standalone, and every family inside its envelope
    for (const t of ["33", "34", "46", "52", "56", "61", "61-COT", "61-COM", "110", "111", "112"]) expect(validated).toContain(`DTE ${t}`);
    expect(validated).toEqual(expect.arrayContaining(["EnvioDTE to SII", "EnvioDTE to recipient", "EnvioBOLETA", "RespuestaDTE RecepcionEnvio", "RespuestaDTE ResultadoDTE", "EnvioRecibos"]));
    const boleta = set.samples.find((s) => s.name === "EnvioBOLETA")!.xmlString;
    expect(boleta).toContain("<TipoDTE>39</TipoDTE>");
    expect(boleta).toContain("<TipoDTE>41</TipoDTE>");
  }, 120_000);

  it("the validator really rejects: a broken DTE and a boleta in the EnvioDTE schema fail", async () => {
    const dte = set.dtes["33"]!.xmlString;
    const broken = new TextEncoder().encode(dte.replace("<TipoDTE>33</TipoDTE>", "<TipoDTE>99</TipoDTE>"));
    expect((await validate(broken, "DTE_v10.xsd")).valid).toBe(false);
    const unordered = new TextEncoder().encode(dte.replace(/(<MntNeto>\d+<\/MntNeto>\n)(<MntExe>\d+<\/MntExe>\n)/, "$2$1"));
    expect((await validate(unordered, "DTE_v10.xsd")).valid).toBe(false);
    const boletaAsDte = set.samples.find((s) => s.name === "EnvioBOLETA")!.xml;
    expect((await validate(boletaAsDte, "EnvioDTE_v10.xsd")).valid).toBe(false);
  }, 60_000);

  it("lines stay under 4,096 characters and files are ISO-8859-1 with the declaration", () => {
    for (const s of set.samples) {
      if (s.schema === null) continue;
      expect(s.xmlString.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>\n'), s.name).toBe(true);
      expect(Math.max(...s.xmlString.split("\n").map((l) => l.length)), s.name).toBeLessThan(4096);
      expect(s.xml.length, s.name).toBe(s.xmlString.length); // one byte per character: Latin-1
    }
  });
});

describe("every feature of the document model (issue #14) validates", () => {
  it("one golden document per feature and type: standalone against DTE_v10, in EnvioDTE, boletas in EnvioBOLETA", async () => {
    const dtes = await buildFeatureDtes(set);
    expect(Object.keys(dtes).sort()).toEqual(Object.keys(FEATURE_INPUTS).sort());
    const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer };
    const boletas = Object.values(dtes).filter((d) => d.envelope === "EnvioBOLETA");
    const others = Object.values(dtes).filter((d) => d.envelope === "EnvioDTE");
    for (const [name, d] of Object.entries(dtes)) {
      if (d.envelope !== "EnvioDTE") continue;
      const r = await validate(d.xml, "DTE_v10.xsd");
      expect(r.errors, name).toEqual([]);
    }
    const envio = await buildEnvioDte({ ...common, dtes: others });
    expect((await validate(envio.xml, "EnvioDTE_v10.xsd")).errors).toEqual([]);
    const envioBoleta = await buildEnvioBoleta({ ...common, dtes: boletas });
    expect((await validate(envioBoleta.xml, "EnvioBOLETA_v11.xsd")).errors).toEqual([]);
    expect(boletas.map((b) => b.documentType).sort()).toEqual([39, 39, 39, 39, 41]);
    expect(others.map((b) => b.documentType)).toEqual(expect.arrayContaining([33, 34, 43, 46, 52, 61, 110]));
  }, 120_000);
});

describe("the coverage samples (every element the body can write) validate", () => {
  it("each standalone against DTE_v10, boletas in EnvioBOLETA", async () => {
    const dtes = await signInputs(set, COVERAGE_INPUTS, 45);
    const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer };
    for (const [name, d] of Object.entries(dtes)) {
      if (d.envelope === "EnvioDTE") expect((await validate(d.xml, "DTE_v10.xsd")).errors, name).toEqual([]);
    }
    const boletas = Object.values(dtes).filter((d) => d.envelope === "EnvioBOLETA");
    expect(boletas.length).toBeGreaterThan(0);
    expect((await validate((await buildEnvioBoleta({ ...common, dtes: boletas })).xml, "EnvioBOLETA_v11.xsd")).errors).toEqual([]);
  }, 120_000);
});

describe("the per-type samples (each element on every type that may carry it) validate", () => {
  it("each standalone against DTE_v10, boletas in EnvioBOLETA", async () => {
    const dtes = await signInputs(set, TYPE_INPUTS, 0);
    const common = { issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer };
    for (const [name, d] of Object.entries(dtes)) {
      if (d.envelope === "EnvioDTE") expect((await validate(d.xml, "DTE_v10.xsd")).errors, name).toEqual([]);
    }
    const boletas = Object.values(dtes).filter((d) => d.envelope === "EnvioBOLETA");
    expect(boletas.length).toBeGreaterThan(0);
    expect((await validate((await buildEnvioBoleta({ ...common, dtes: boletas })).xml, "EnvioBOLETA_v11.xsd")).errors).toEqual([]);
  }, 120_000);
});

describe("the engine's C14N", () => {
  async function libxml2C14n(xml: string | Uint8Array): Promise<string> {
    const r = await validateXML({ xml: [{ fileName: "c.xml", contents: xml as unknown as string }], normalization: "c14n" });
    return r.normalized;
  }
  it("equals libxml2's canonical XML 1.0 on tricky documents and on every produced file", async () => {
    const tricky = [
      `<?xml version="1.0" encoding="ISO-8859-1"?>\n<?pi data?>\n<r xmlns="urn:a" xmlns:b="urn:b" z="1" b:y="2" a="&lt;&amp;&quot;&#9;&#10;'&gt;"><b:c xmlns="urn:a" xmlns:b="urn:b">t &gt; &#13; x "q" 'a'</b:c><d xmlns=""><e xmlns="" a:x="1" xmlns:a="urn:z"/></d><f xmlns:c="urn:c" c:q="1" xml:lang="es" b:a="2" a="3"/>\n  <![CDATA[ <cdata> & ]]></r>\n<?after x?>`,
      `<a><b xmlns="urn:x"><c xmlns="urn:x"/><d xmlns="urn:y"><e xmlns=""/></d></b></a>`,
      `<a   b = 'x'\r\n c="y"  ><x:y xmlns:x="urn:1"   x:b="1" b="2">\r\nline\r\n</x:y></a>`,
    ];
    for (const t of tricky) expect(canonicalize(parseXml(t)), t).toBe((await libxml2C14n(t)).replace(/\n$/, ""));
    for (const s of set.samples) {
      const mine = canonicalize(parseXml(decodeXmlBytes(s.xml)));
      expect(mine, s.name).toBe((await libxml2C14n(s.xml)).replace(/\n$/, ""));
    }
  }, 120_000);
});
