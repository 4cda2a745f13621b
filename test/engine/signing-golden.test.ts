/**
 * The signing path must not change a byte: every output of signing-golden.ts, rebuilt with the
 * current engine on the fixed fake material, equals the stored output (see signing-golden.ts).
 */
import { describe, expect, it } from "vitest";
import { b64decode } from "../../src/countries/cl/pki/asn1";
import { loadSigningCredentials } from "../../src/countries/cl/pki/certificate";
import pfxB64 from "../fixtures/cl/fake-modern-aes.pfx.b64?raw";
import goldenText from "../fixtures/cl/signing-golden.json?raw";
import { buildGolden, goldenCafs, GOLDEN_PFX_PASSWORD } from "./signing-golden";

const golden = JSON.parse(goldenText) as { cafs: Record<string, string>; outputs: Record<string, string> };

describe("signing output is byte-identical to the stored golden outputs", () => {
  it("DTEs of every type, envelopes, acknowledgments and the token request", async () => {
    const signer = await loadSigningCredentials(b64decode(pfxB64), GOLDEN_PFX_PASSWORD);
    const outputs = await buildGolden(signer, await goldenCafs(golden.cafs));
    expect(Object.keys(outputs).sort()).toEqual(Object.keys(golden.outputs).sort());
    for (const [name, text] of Object.entries(golden.outputs)) expect(outputs[name], name).toBe(text);
  });
});
