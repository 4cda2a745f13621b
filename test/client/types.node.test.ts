/** clients/typescript/schema.d.ts is openapi-typescript's output for clients/typescript/openapi.json. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { clientTypes } from "../../clients/typescript/generate";

const dir = path.resolve(import.meta.dirname, "../../clients/typescript");

describe("clients/typescript/schema.d.ts", () => {
  it("is current (run `npm run client:generate` after an API change)", async () => {
    const doc = JSON.parse(readFileSync(path.join(dir, "openapi.json"), "utf8"));
    const expected = await clientTypes(doc);
    expect(readFileSync(path.join(dir, "schema.d.ts"), "utf8") === expected, "schema.d.ts differs from openapi-typescript's output").toBe(true);
    expect(expected.includes('"/api/companies/{company_id}/invoices"'), "the invoices path is typed").toBe(true);
  });
});
