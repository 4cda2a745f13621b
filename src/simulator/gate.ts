/**
 * Who reaches the simulated SII over HTTP (issue 17). Locally (simulator mode outside production)
 * anyone, as always. Elsewhere, production included: the SII client of a test-mode company (an
 * in-process call) and requests carrying a test key in X-Api-Key; any other request, a live key's
 * included, finds no such path (404), so live traffic never reaches the simulator.
 */
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { isInternalSimulatorCall, simulatorEnabled } from "../config";
import { createDb, type Db } from "../db/client";
import { companies } from "../db/schema";
import { authenticate } from "../domain/access/api-keys";
import type { Principal } from "../domain/access/principal";
import type { AppEnv } from "../http/types";

/** True when the request may use the simulator; a test key's principal is then in c.get("principal"). */
export async function simulatorReachable(c: Context<AppEnv>): Promise<boolean> {
  if (isInternalSimulatorCall(c.env) || simulatorEnabled(c.env)) return true;
  const header = c.req.header("X-Api-Key");
  if (!header || !c.env.API_KEY_PEPPER) return false;
  const result = await authenticate(c.env, c.env.API_KEY_PEPPER, header);
  if (!result.ok || result.principal.livemode) return false;
  c.set("principal", result.principal);
  return true;
}

/**
 * When the simulator is shared (reached with a test key), scenario control is confined to the RUTs
 * of the key's own test companies, so one user cannot break the simulator for another. Undefined:
 * not shared (local), no limit.
 */
export async function scenarioRuts(c: Context<AppEnv>, db: Db): Promise<string[] | undefined> {
  const principal = c.get("principal") as Principal | undefined;
  if (!principal) return undefined;
  const rows = await db
    .select({ rut: companies.taxId })
    .from(companies)
    .where(and(eq(companies.clientId, principal.clientId), eq(companies.livemode, false), eq(companies.status, "ACTIVE"), eq(companies.country, "CHL")));
  return [...new Set(rows.map((r) => r.rut))];
}
