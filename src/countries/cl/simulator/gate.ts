/**
 * Who reaches the simulated SII over HTTP, and whose scenarios a call sees. In local development
 * (ENVIRONMENT=development, SII_MODE=simulator: `npm start`) anyone, without a key, as one implicit
 * owner. Everywhere else (tests, staging, production...): the SII client of a company (an in-process
 * call, acting for the company's API client) and requests carrying a test key in X-Api-Key (acting
 * for the key's client); any other request, a live key's included, finds no such path (404), so live
 * traffic never reaches the simulator.
 */
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { isInternalSimulatorCall, simulatorEnabled, simulatorOwnerOf } from "../../../config";
import type { Db } from "../../../storage/db/client";
import { companies } from "../../../storage/db/schema";
import { authenticate } from "../../../accounts/access/api-keys";
import type { Principal } from "../../../accounts/access/principal";
import type { AppEnv } from "../../../http/types";

/** True when the request may use the simulator; a test key's principal is then in c.get("principal"). */
export async function simulatorReachable(c: Context<AppEnv>): Promise<boolean> {
  if (simulatorEnabled(c.env) || isInternalSimulatorCall(c.env)) return true;
  const header = c.req.header("X-Api-Key");
  if (!header || !c.env.API_KEY_PEPPER) return false;
  const result = await authenticate(c.env, c.env.API_KEY_PEPPER, header);
  if (!result.ok || result.principal.livemode) return false;
  c.set("principal", result.principal);
  return true;
}

/**
 * The API client whose scenarios this call sets, lists, clears and applies: the test key's client,
 * or for an in-process call the client of the company it acts for. Null in local development (one
 * implicit owner) and for an in-process call that names no company's client (it sees no scenario).
 */
export function simulatorOwner(c: Context<AppEnv>): string | null {
  if (simulatorEnabled(c.env)) return null;
  if (isInternalSimulatorCall(c.env)) return simulatorOwnerOf(c.env) ?? null;
  return (c.get("principal") as Principal | undefined)?.clientId ?? null;
}

/**
 * The RUTs of the test key's own active Chilean test companies: the only RUTs it may name in a
 * scenario or a CAF grant. Undefined when the call carries no key (local development, or the SII
 * client in-process, which names its own company): no limit.
 */
export async function ownTestRuts(c: Context<AppEnv>, db: Db): Promise<string[] | undefined> {
  if (simulatorEnabled(c.env)) return undefined;
  const principal = c.get("principal") as Principal | undefined;
  if (!principal) return undefined;
  const rows = await db
    .select({ rut: companies.taxId })
    .from(companies)
    .where(and(eq(companies.clientId, principal.clientId), eq(companies.livemode, false), eq(companies.status, "ACTIVE"), eq(companies.country, "CHL")));
  return [...new Set(rows.map((r) => r.rut))];
}
