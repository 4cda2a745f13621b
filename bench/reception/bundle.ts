/**
 * Vitest global set-up of the reception bench (runs in Node before the workers start): bundles the
 * inbound verification the way `wrangler deploy` bundles the Worker (esbuild, one ES module, the
 * target wrangler sets), into bench/reception/.bundle/verify.mjs (and the parser alone, .bundle/xml.mjs). The bench times that bundle beside
 * the same code as vitest's module runner loads it: the runner turns every use of an imported
 * binding into a getter call, which the deployed Worker never pays (docs/reception-verification.md,
 * "Cost").
 */
import { build } from "esbuild";
import path from "node:path";

export const BUNDLE = path.resolve(import.meta.dirname, ".bundle/verify.mjs");

/** The parser alone (xml.ts's parseXml), bundled the same way: the bench reports its share of the floor. */
export const PARSER_BUNDLE = path.resolve(import.meta.dirname, ".bundle/xml.mjs");

export async function setup() {
  await build({
    entryPoints: { verify: path.resolve(import.meta.dirname, "../../src/countries/cl/exchange/verify.ts"), xml: path.resolve(import.meta.dirname, "../../src/countries/cl/xml/xml.ts") },
    outdir: path.dirname(BUNDLE),
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "neutral",
    // What wrangler 4 passes to esbuild for a Worker (COMMON_ESBUILD_OPTIONS, getBuildConditions).
    target: "es2024",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    // wrangler.toml sets keep_names = false (wrangler's default would wrap each closure made at run time in __name).
    keepNames: false,
    // Only the .pfx reader uses node-forge (node:crypto-dependent CommonJS); verification never calls it.
    external: ["node-forge"],
    logLevel: "warning",
  });
}
