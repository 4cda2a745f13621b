import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parse } from "smol-toml";
import { app } from "../../src/app";
import { assertConfigured, ConfigurationError, simulatorEnabled } from "../../src/config";
import wranglerToml from "../../wrangler.toml?raw";

type Toml = Record<string, any>;
const config = parse(wranglerToml) as Toml;

async function fetchWith(overrides: Partial<Env>, path: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://localhost${path}`, init), { ...env, ...overrides } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const cafRequest = { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rut: "76086428-5", document_type: 33 }) };

describe("production never runs the SII simulator", () => {
  it("wrangler.toml: the top level is development with the simulator; [env.production] has neither", () => {
    expect(config.vars).toMatchObject({ ENVIRONMENT: "development", SII_MODE: "simulator" });
    const production = config.env.production as Toml;
    expect(production.vars.ENVIRONMENT).toBe("production");
    expect(["certification", "production"]).toContain(production.vars.SII_MODE);
    expect(JSON.stringify(production)).not.toContain("simulator");
  });

  it("assertConfigured refuses ENVIRONMENT=production with SII_MODE=simulator", () => {
    const base = { ...env, ENVIRONMENT: "production" } as Env;
    expect(() => assertConfigured({ ...base, SII_MODE: "simulator" })).toThrow(ConfigurationError);
    expect(() => assertConfigured({ ...base, SII_MODE: "simulator" })).toThrow(/refuses SII_MODE=simulator/);
    expect(() => assertConfigured({ ...base, SII_MODE: "production" })).not.toThrow();
    expect(simulatorEnabled({ ENVIRONMENT: "production", SII_MODE: "simulator" })).toBe(false);
    expect(simulatorEnabled({ ENVIRONMENT: "development", SII_MODE: "simulator" })).toBe(true);
    // Open without a key only in local development: the tests and any other deployment need a test key.
    expect(simulatorEnabled({ ENVIRONMENT: "test", SII_MODE: "simulator" })).toBe(false);
    expect(simulatorEnabled({ ENVIRONMENT: "staging", SII_MODE: "simulator" })).toBe(false);
  });

  it("production in simulator mode serves nothing at all, the simulator included", async () => {
    for (const [path, init] of [["/health", undefined], ["/simulator/sii/caf", cafRequest], ["/simulator/sii/scenario", undefined], ["/api/companies", undefined]] as const) {
      const res = await fetchWith({ ENVIRONMENT: "production", SII_MODE: "simulator" }, path, init);
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INTERNAL");
    }
  });

  it("production (any SII mode) answers the simulator's paths as unknown", async () => {
    for (const mode of ["production", "certification"]) {
      const caf = await fetchWith({ ENVIRONMENT: "production", SII_MODE: mode }, "/simulator/sii/caf", cafRequest);
      expect(caf.status).toBe(404);
      expect(((await caf.json()) as { error: { code: string } }).error.code).toBe("ROUTE_NOT_FOUND");
      const scenario = await fetchWith({ ENVIRONMENT: "production", SII_MODE: mode }, "/simulator/sii/scenario", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ mode: "down" }) });
      expect(scenario.status).toBe(404);
      expect(((await scenario.json()) as { error: { code: string } }).error.code).toBe("ROUTE_NOT_FOUND");
    }
    const health = await fetchWith({ ENVIRONMENT: "production", SII_MODE: "production" }, "/health");
    expect(health.status).toBe(200);
  });
});
