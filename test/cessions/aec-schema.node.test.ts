/**
 * The AEC the engine builds, checked by tools that are not ours: libxml2 (xmllint-wasm) validates it
 * against the official AEC_v10.xsd (with Cesion_v10, DTECedido_v10, DTE_v10, Recibos_v10), and, when
 * xmlsec1 is installed, xmlsec1 verifies each of its four signatures in place (DTE, DTECedido,
 * Cesion, AEC). Schemas come from SII_SCHEMAS_DIR or ../shared/sii-schemas; missing FAILS.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { buildAec, type SignedAec } from "../../src/countries/cl/cession";
import { buildSamples, ISSUER_RUT, type SampleSet } from "../helpers/cl-samples";

const dir = process.env.SII_SCHEMAS_DIR ?? path.resolve(import.meta.dirname, "../../../shared/sii-schemas");
const file = (name: string) => ({ fileName: name, contents: new Uint8Array(readFileSync(path.join(dir, name))) as unknown as string });

async function libxml2(xml: Uint8Array): Promise<string[]> {
  const preload = ["Cesion_v10.xsd", "DTECedido_v10.xsd", "DTE_v10.xsd", "Recibos_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd"].map(file);
  const r = await validateXML({ xml: [{ fileName: "aec.xml", contents: xml as unknown as string }], schema: [file("AEC_v10.xsd")], preload });
  return r.valid ? [] : r.errors.map((e) => e.rawMessage);
}

const params = (set: SampleSet, name: string) => ({
  dte: set.dtes[name]!.xml,
  cedent: { rut: ISSUER_RUT, name: "EMPRESA DE PRUEBA SPA", address: "Av. Siempre Viva 123, Santiago", email: "cesiones@emisor.cl" },
  assignee: { rut: "76543210-3", name: "FACTOR DE EJEMPLO SPA", address: "Calle Falsa 456, Las Condes", email: "operaciones@factor.cl" },
  amount: set.dtes[name]!.total,
  lastDueDate: "2026-12-31",
  debtorEmail: "pagos@deudor.cl",
  timestamp: "2026-11-21T10:15:20",
  authorized: { rut: "11111111-1", name: "PERSONA DE PRUEBA FALSA" },
  signer: set.signer,
});

describe("the AEC", () => {
  let set: SampleSet;
  let aecs: Record<string, SignedAec>;
  beforeAll(async () => {
    expect(existsSync(path.join(dir, "AEC_v10.xsd")), `SII schemas not found in ${dir} (set SII_SCHEMAS_DIR)`).toBe(true);
    set = await buildSamples();
    aecs = {};
    for (const name of ["33", "34", "46"]) aecs[name] = await buildAec(params(set, name));
  }, 120_000);

  it("validates against the official AEC_v10.xsd for facturas 33, 34 and 46", async () => {
    for (const [name, aec] of Object.entries(aecs)) expect(await libxml2(aec.xml), `type ${name}`).toEqual([]);
  });

  it("is refused by the schema once broken (so the check above is real)", async () => {
    const broken = new TextEncoder().encode(aecs["33"]!.xmlString.replace(/<SeqCesion>1<\/SeqCesion>/, "<SeqCesion>x</SeqCesion>"));
    expect((await libxml2(broken)).length).toBeGreaterThan(0);
  });

  it("carries four signatures that xmlsec1 verifies in place", () => {
    const which = spawnSync("xmlsec1", ["--version"]);
    if (which.status !== 0) {
      console.warn("xmlsec1 is not installed: the independent signature check did not run");
      return;
    }
    const work = mkdtempSync(path.join(tmpdir(), "aec-"));
    const at = path.join(work, "aec.xml");
    writeFileSync(at, aecs["33"]!.xml);
    const ids = ["--id-attr:ID", "Documento", "--id-attr:ID", "DocumentoDTECedido", "--id-attr:ID", "DocumentoCesion", "--id-attr:ID", "DocumentoAEC"];
    const parents = ["DTE", "DTECedido", "Cesion", "AEC"];
    for (const parent of parents) {
      const xpath = `//*[local-name()='${parent}']/*[local-name()='Signature']`;
      const r = spawnSync("xmlsec1", ["--verify", "--insecure", ...ids, "--node-xpath", xpath, at], { encoding: "utf8" });
      expect(r.status, `${parent}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toMatch(/^OK/m);
    }
    // A changed amount breaks the cession's and the file's signatures, as xmlsec1 sees it too.
    writeFileSync(at, new TextEncoder().encode(aecs["33"]!.xmlString.replace(/<MontoCesion>(\d+)<\/MontoCesion>/, "<MontoCesion>1</MontoCesion>")));
    const tampered = spawnSync("xmlsec1", ["--verify", "--insecure", ...ids, "--node-xpath", "//*[local-name()='Cesion']/*[local-name()='Signature']", at], { encoding: "utf8" });
    expect(tampered.status).not.toBe(0);
  });
});
