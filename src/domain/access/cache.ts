/**
 * The per-isolate cache of API key and company lookups (issue 16): the one D1 read every POST makes
 * (docs/capacity.md, "the key and company lookup must be cached"). An entry lives ACCESS_CACHE_MS.
 * Every change of access made in this isolate (a key or user revoked, a grant given or withdrawn, a
 * company deleted) clears the whole cache at once; other isolates see the change when their entry
 * expires, so a revocation takes at most ACCESS_CACHE_MS to reach every isolate (README).
 * Keys that are not found are never cached (a key just created works at once everywhere).
 */
import type { apiKeys } from "../../db/schema";
import { IsolateCache } from "../../lib/isolate-cache";
import type { CompanyRow } from "../companies/repository";

export const ACCESS_CACHE_MS = 5_000;

export type KeyRow = typeof apiKeys.$inferSelect;
export interface CachedCompany {
  row: CompanyRow | undefined;
  granted: boolean;
}

interface Entry {
  row: KeyRow;
  companies: Map<string, CachedCompany>;
}

const byHash = new IsolateCache<Entry>(ACCESS_CACHE_MS);

export function cachedKey(hash: string, at: number): Entry | undefined {
  return byHash.get(hash, at);
}

export function rememberKey(hash: string, row: KeyRow, at: number): Entry {
  return byHash.set(hash, { row, companies: new Map() }, at);
}

/** Drops every cached lookup of this isolate: call after any change of keys, grants or companies. */
export function forgetAccess(): void {
  byHash.clear();
}
