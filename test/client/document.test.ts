/** The typed client (clients/typescript) is built from the document the service serves: it must be current. */
import { describe, expect, it } from "vitest";
import generated from "../../clients/typescript/openapi.json";
import { call } from "../helpers/api";

describe("clients/typescript", () => {
  it("was generated from the document /openapi.json serves (run `npm run client:generate` after an API change)", async () => {
    const served = (await call("GET", "/openapi.json")).body;
    const { servers, ...document } = served;
    expect(servers).toEqual([{ url: "http://localhost", description: expect.any(String) }]);
    expect(document).toEqual(generated);
  });
});
