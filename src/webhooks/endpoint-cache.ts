/**
 * The per-isolate cache of a company's deliverable webhook endpoints: the fan-out of every
 * store event and every delivery attempt needs them, and reading them from D1 each time was most of
 * the webhook path's D1 statements. Same mechanism as the control-plane caches
 * (src/lib/isolate-cache.ts, src/accounts/companies/control-cache.ts): a company's entry lives
 * ENDPOINT_CACHE_MS; every endpoint write made in this isolate through src/webhooks (create, change,
 * delete, rotate, the failure run, disabling) calls `forgetEndpoints`, so this isolate sees it at
 * once; other isolates see it when their entry expires: an endpoint deleted or disabled elsewhere can
 * still be sent to for up to ENDPOINT_CACHE_MS (docs/webhooks.md). An empty list is cached too (a
 * company without endpoints costs no D1 statement per event), and a failed read is not. The master
 * key rotation's re-sealing (src/accounts/secrets/rotation.ts) does not drop entries: a cached secret
 * sealed under the previous key still opens while that key is in the ring, as it is until the
 * rotation is over.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { webhookEndpoints } from "../storage/db/schema";
import { IsolateCache } from "../lib/isolate-cache";
import type { EndpointRow } from "./endpoints";

export const ENDPOINT_CACHE_MS = 30_000;

const byCompany = new IsolateCache<EndpointRow[]>(ENDPOINT_CACHE_MS);

/**
 * The company's ACTIVE, enabled endpoints (from this isolate's cache, or one D1 read). Only a list
 * already read is shared between requests, never a read in flight: a promise made by one request
 * cannot settle in another once the first has ended (see src/accounts/companies/control-cache.ts).
 */
export async function activeEndpoints(db: Db, companyId: string, at: number = Date.now()): Promise<EndpointRow[]> {
  const hit = byCompany.get(companyId, at);
  if (hit) return hit;
  const generation = byCompany.generation;
  const rows = await db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.companyId, companyId), eq(webhookEndpoints.status, "ACTIVE"), eq(webhookEndpoints.enabled, true)));
  byCompany.setIfUnchanged(companyId, rows, at, generation);
  return rows;
}

/** Drops the company's cached endpoints in this isolate: call after any write to its endpoints. */
export function forgetEndpoints(companyId: string): void {
  byCompany.delete(companyId);
}
