import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("health", () => {
  it("answers without a key", async () => {
    const res = await exports.default.fetch(new Request("http://localhost/health"));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", sii_mode: "simulator" });
  });
});
