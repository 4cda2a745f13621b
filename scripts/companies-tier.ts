// `npm run --silent companies:tier -- --company cmp_… --tier HIGH_VOLUME|STANDARD [--remote] [--persist-to DIR]`
// Puts a company on a rate tier (src/http/rate-limits.ts): which rate limiting bindings count its
// requests. An operator's decision (a plan), never the client's: there is no API route for it. Prints
// ONE JSON object on stdout: {"company_id","rate_tier","previous"}. The company's control directory
// object (src/storage/db/control-directory.ts) keeps the row it read for up to its safety TTL (1 hour), and
// isolates their copy for 5 seconds more: the change takes effect within the hour.
import { parseArgs } from "node:util";
import { wrangler } from "./local-env.mjs";
import { RATE_TIERS, type RateTier } from "../src/http/rate-limits";

const { values } = parseArgs({
  options: {
    company: { type: "string" },
    tier: { type: "string" },
    remote: { type: "boolean", default: false },
    "persist-to": { type: "string" },
  },
});

function fail(message: string): never {
  process.stderr.write(`companies:tier: ${message}\n`);
  process.exit(2);
}

const companyId = values.company?.trim() ?? "";
if (!/^cmp_[0-9A-Z]{26}$/.test(companyId)) fail("--company must be a company id (cmp_…)");
const tier = (values.tier ?? "").toUpperCase() as RateTier;
if (!RATE_TIERS.includes(tier)) fail(`--tier must be one of ${RATE_TIERS.join(", ")}`);

const where = values.remote ? ["--remote"] : ["--local", ...(values["persist-to"] ? ["--persist-to", values["persist-to"]] : [])];
wrangler(["d1", "migrations", "apply", "DB", ...where]);

function query(sql: string): Record<string, unknown>[] {
  const out = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", sql]);
  const parsed = JSON.parse(out.slice(out.indexOf("["))) as { results: Record<string, unknown>[] }[];
  return parsed.flatMap((p) => p.results ?? []);
}

// The id and tier were checked against fixed patterns above, so they are safe inside the statement.
const [before] = query(`SELECT rate_tier FROM companies WHERE id = '${companyId}'`);
if (!before) fail(`no company ${companyId}`);
query(`UPDATE companies SET rate_tier = '${tier}' WHERE id = '${companyId}'`);
process.stdout.write(`${JSON.stringify({ company_id: companyId, rate_tier: tier, previous: before.rate_tier })}\n`);
