// `npm run --silent apikey:create -- --client NAME --role OWNER [--mode test|live] [--name "key name"] [--remote]`
// Creates (or reuses, by name) a client and an API key for it, and prints ONE JSON object on stdout:
// {"api_key": "...", "client_id": "...", "livemode": false}. Test keys (the default, `dte_test_…`) always
// talk to the built-in SII simulator; live keys (`dte_live_…`) to the SII environment of SII_MODE. Locally it works on a fresh install (applies migrations,
// creates .dev.vars). With --remote it writes to the deployed D1 and reads API_KEY_PEPPER from the
// environment (it must equal the deployed secret).
import { parseArgs } from "node:util";
import { ensureDevVars, wrangler } from "./local-env.mjs";
import { generateApiKey, hashApiKey } from "../src/accounts/access/api-keys";
import { ROLES, type Role } from "../src/accounts/access/roles";
import { newId } from "../src/lib/ids";

const { values } = parseArgs({
  options: {
    client: { type: "string" },
    role: { type: "string", default: "OWNER" },
    mode: { type: "string", default: "test" },
    name: { type: "string" },
    remote: { type: "boolean", default: false },
    // Local state directory of a `wrangler dev --persist-to DIR` (benchmarks use a temporary one).
    "persist-to": { type: "string" },
  },
});

function fail(message: string): never {
  process.stderr.write(`apikey:create: ${message}\n`);
  process.exit(2);
}

const clientName = values.client?.trim();
if (!clientName) fail("--client NAME is required");
const role = (values.role ?? "OWNER").toUpperCase() as Role;
if (!ROLES.includes(role)) fail(`--role must be one of ${ROLES.join(", ")}`);
const mode = (values.mode ?? "test").toLowerCase();
if (mode !== "test" && mode !== "live") fail("--mode must be test or live");
const livemode = mode === "live";

const where = values.remote ? ["--remote"] : ["--local", ...(values["persist-to"] ? ["--persist-to", values["persist-to"]] : [])];
let pepper: string | undefined;
if (values.remote) {
  pepper = process.env.API_KEY_PEPPER;
  if (!pepper) fail("set API_KEY_PEPPER to the deployed secret's value for --remote");
  wrangler(["d1", "migrations", "apply", "DB", "--remote"]);
} else {
  pepper = ensureDevVars().API_KEY_PEPPER;
  if (!pepper) fail(".dev.vars has no API_KEY_PEPPER");
  wrangler(["d1", "migrations", "apply", "DB", ...where]);
}

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
function query(sql: string): Record<string, unknown>[] {
  const out = wrangler(["d1", "execute", "DB", ...where, "--json", "--command", sql]);
  const parsed = JSON.parse(out.slice(out.indexOf("["))) as { results: Record<string, unknown>[] }[];
  return parsed.flatMap((p) => p.results ?? []);
}

const existing = query(`SELECT id FROM clients WHERE name = ${sqlString(clientName)} ORDER BY id LIMIT 1`);
const clientId = (existing[0]?.id as string | undefined) ?? newId("cli");
const { key, prefix } = generateApiKey(livemode);
const hash = await hashApiKey(pepper, key);
const now = new Date().toISOString();
const keyName = values.name?.trim() || `${mode} ${role.toLowerCase()} key (command line)`;
const statements = [
  existing.length === 0 ? `INSERT INTO clients (id, name, created_at) VALUES (${sqlString(clientId)}, ${sqlString(clientName)}, ${sqlString(now)});` : "",
  `INSERT INTO api_keys (id, client_id, user_id, name, role, livemode, prefix, key_hash, created_at) VALUES (${sqlString(newId("key"))}, ${sqlString(clientId)}, NULL, ${sqlString(keyName)}, ${sqlString(role)}, ${livemode ? 1 : 0}, ${sqlString(prefix)}, ${sqlString(hash)}, ${sqlString(now)});`,
].join(" ");
query(statements);
process.stdout.write(`${JSON.stringify({ api_key: key, client_id: clientId, livemode })}\n`);
