import { it, expect } from "vitest";
import { buildTokenRequest, verifyChildSignature } from "../../src/countries/cl/xmldsig";
import { parseXml } from "../../src/countries/cl/xml";
import { fakeCredentials } from "./helpers";
it("engine token request self-verify", async () => {
  const cert = await fakeCredentials();
  const x = await buildTokenRequest("123456789012", cert);
  const doc = parseXml(x);
  const r = await verifyChildSignature(doc, doc.documentElement as any);
  console.log(JSON.stringify(r.ok), r.message);
  expect(true).toBe(true);
});
