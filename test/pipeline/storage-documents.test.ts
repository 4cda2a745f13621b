import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { buildEnvioBoleta, buildEnvioDte } from "../../src/countries/cl/exchange/envelopes";
import { dteFromEnvelope, inEnvelope, readDocumentXml } from "../../src/invoices/stored-xml";
import { buildSamples, HOLDER_RUT, ISSUER_RUT, type SampleSet } from "../helpers/cl-samples";

let set: SampleSet;
beforeAll(async () => {
  set = await buildSamples();
});

const common = () => ({ issuerRut: ISSUER_RUT, senderRut: HOLDER_RUT, resolution: { date: "2026-01-15", number: 0 }, timestamp: "2026-11-20T10:31:00", signer: set.signer });

describe("documents stored inside their envelope", () => {
  it("each DTE cut out of an EnvioDTE or EnvioBOLETA is byte for byte the file it was signed as", async () => {
    const dtes = Object.values(set.dtes);
    const envioDte = await buildEnvioDte({ ...common(), dtes: dtes.filter((d) => d.envelope === "EnvioDTE") });
    const envioBoleta = await buildEnvioBoleta({ ...common(), dtes: dtes.filter((d) => d.envelope === "EnvioBOLETA") });
    let checked = 0;
    for (const d of dtes) {
      const envelope = d.envelope === "EnvioDTE" ? envioDte.xml : envioBoleta.xml;
      expect(dteFromEnvelope(envelope, d.id), d.id).toEqual(d.xml);
      checked++;
    }
    expect(checked).toBe(dtes.length);
    expect(dteFromEnvelope(envioDte.xml, "F999T33")).toBeNull();
    expect(dteFromEnvelope(envioDte.xml, set.dtes["39"]!.id)).toBeNull(); // a boleta is not in an EnvioDTE
  });

  it("reads either kind of key from R2, and null when the object or the document is missing", async () => {
    const d = set.dtes["33"]!;
    const envelope = await buildEnvioDte({ ...common(), dtes: [d, set.dtes["56"]!] });
    await env.FILES.put("test/envelopes/e1.xml", envelope.xml);
    await env.FILES.put("test/invoices/standalone.xml", d.xml);
    expect(await readDocumentXml(env.FILES, inEnvelope("test/envelopes/e1.xml", d.id))).toEqual(d.xml);
    expect(await readDocumentXml(env.FILES, inEnvelope("test/envelopes/e1.xml", set.dtes["56"]!.id))).toEqual(set.dtes["56"]!.xml);
    expect(await readDocumentXml(env.FILES, "test/invoices/standalone.xml")).toEqual(d.xml);
    expect(await readDocumentXml(env.FILES, inEnvelope("test/envelopes/e1.xml", "F77T33"))).toBeNull();
    expect(await readDocumentXml(env.FILES, inEnvelope("test/envelopes/none.xml", d.id))).toBeNull();
    expect(await readDocumentXml(env.FILES, null)).toBeNull();
  });
});
