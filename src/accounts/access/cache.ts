/**
 * The per-isolate cache of API key and company lookups: what every request needs
 * (docs/capacity.md, "the key and company lookup must be cached"). An entry lives ACCESS_CACHE_MS;
 * a miss asks the key's and the company's control directory objects (src/storage/db/control-directory.ts),
 * which read D1 only when they do not hold the rows. Every change of access (a key or user revoked,
 * a grant given or withdrawn, a company deleted) clears this isolate's cache at once and, after its
 * D1 commit, tells the objects concerned to forget (`accessChanged`); other isolates see the change
 * when their entry expires, so a revocation takes at most ACCESS_CACHE_MS to reach every isolate
 * (README). Keys that are not found are never cached (a key just created works at once everywhere).
 */
import type { apiKeys } from "../../storage/db/schema";
import { IsolateCache } from "../../lib/isolate-cache";
import { forgetInDirectory, keyEntry, type DirectoryEnv } from "../../storage/db/control-directory";
import type { CompanyRow } from "../companies/repository";

export const ACCESS_CACHE_MS = 5_000;

export type KeyRow = typeof apiKeys.$inferSelect;
export interface CachedCompany {
  row: CompanyRow | undefined;
  granted: boolean;
}

interface Entry {
  row: KeyRow;
  /** The companies a MEMBER key was granted. */
  grants: readonly string[];
  companies: Map<string, CachedCompany>;
}

const byHash = new IsolateCache<Entry>(ACCESS_CACHE_MS);

export function cachedKey(hash: string, at: number): Entry | undefined {
  return byHash.get(hash, at);
}

export function rememberKey(hash: string, row: KeyRow, grants: readonly string[], at: number): Entry {
  return byHash.set(hash, { row, grants, companies: new Map() }, at);
}

/** Drops every cached lookup of this isolate only (a new isolate's state: tests, the capacity bench). */
export function forgetAccess(): void {
  byHash.clear();
}

/** After a D1 write to keys or grants: drops this isolate's lookups and the keys' directory objects (by key hash). */
export async function accessChanged(env: DirectoryEnv, keyHashes: readonly string[]): Promise<void> {
  forgetAccess();
  await forgetInDirectory(env, keyHashes.map(keyEntry));
}
