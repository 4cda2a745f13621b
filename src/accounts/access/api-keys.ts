import { and, eq, getTableColumns, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { apiKeyCompanies, apiKeys, companies } from "../../storage/db/schema";
import { hmacSha256Hex, randomBase62 } from "../../lib/crypto";
import { newId } from "../../lib/ids";
import type { CompanyRow } from "../companies/repository";
import type { Principal } from "./principal";
import { reachesAllCompanies, type Role } from "./roles";
import { cachedKey, rememberKey, type CachedCompany, type KeyRow } from "./cache";
import { companyEntry, directory, keyEntry, type DirectoryEnv } from "../../storage/db/control-directory";

/**
 * `dte_test_` or `dte_live_` + 40 base62 characters (about 238 bits of entropy). The mode is read
 * from the key's row.
 */
export const API_KEY_PATTERN = /^dte_(?:test|live)_[0-9A-Za-z]{40}$/;
const PREFIX_LENGTH = 12;
/**
 * last_used_at is refreshed at most once an hour per key (its resolution, README and OpenAPI): the
 * write goes through the key's directory object, which skips it when another isolate wrote it
 * within the hour.
 */
export const LAST_USED_RESOLUTION_MS = 3_600_000;

export function generateApiKey(livemode: boolean): { key: string; prefix: string } {
  const key = `dte_${livemode ? "live" : "test"}_${randomBase62(40)}`;
  return { key, prefix: key.slice(0, PREFIX_LENGTH) };
}

export function hashApiKey(pepper: string, key: string): Promise<string> {
  return hmacSha256Hex(pepper, key);
}

export interface NewKeyInput {
  clientId: string;
  userId: string | null;
  name: string;
  role: Role;
  livemode: boolean;
}

export async function createApiKey(db: Db, pepper: string, input: NewKeyInput) {
  const { key, prefix } = generateApiKey(input.livemode);
  const row = {
    id: newId("key"),
    clientId: input.clientId,
    userId: input.userId,
    name: input.name,
    role: input.role,
    livemode: input.livemode,
    prefix,
    keyHash: await hashApiKey(pepper, key),
    createdAt: new Date().toISOString(),
  };
  await db.insert(apiKeys).values(row);
  return { ...row, key };
}

export type AuthResult =
  | { ok: true; principal: Principal; touch: (() => Promise<unknown>) | null; company?: CompanyAccess }
  | { ok: false; reason: "MISSING" | "MALFORMED" | "UNKNOWN" | "REVOKED" };

/** A company looked up for a key: the row (undefined when there is none) and whether the key was granted it. */
export interface CompanyAccess {
  id: string;
  row: CompanyRow | undefined;
  granted: boolean;
}

/** The key's row and the companies it was granted (a MEMBER key's reach): a directory object's entry. */
export interface KeyEntry {
  row: KeyRow;
  grants: string[];
}

/** The key with this hash and its grants, read from D1 in one batch (2 statements), or null: the directory object's fill. */
export async function readKeyEntry(db: Db, hash: string): Promise<KeyEntry | null> {
  const [keys, grants] = await db.batch([
    db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash)).limit(1),
    db.select({ companyId: apiKeyCompanies.companyId }).from(apiKeyCompanies).innerJoin(apiKeys, eq(apiKeys.id, apiKeyCompanies.apiKeyId)).where(eq(apiKeys.keyHash, hash)),
  ]);
  return keys[0] ? { row: keys[0], grants: grants.map((g) => g.companyId) } : null;
}

/**
 * Resolves the X-Api-Key header to a principal (§2.5). When the request names a company, that
 * company and the key's grant on it come with it. Both are cached in the isolate for a few seconds
 * (./cache.ts); a miss asks the key's and the company's control directory objects at once
 * (src/storage/db/control-directory.ts), not D1: a POST after the first asks nothing of either.
 */
export async function authenticate(env: DirectoryEnv, pepper: string, header: string | undefined, now = new Date(), companyId?: string): Promise<AuthResult> {
  if (header === undefined || header.trim() === "") return { ok: false, reason: "MISSING" };
  const key = header.trim();
  if (!API_KEY_PATTERN.test(key)) return { ok: false, reason: "MALFORMED" };
  const hash = await hashApiKey(pepper, key);
  const at = now.getTime();
  let entry = cachedKey(hash, at);
  if (!entry) {
    const [found, companyRow] = await Promise.all([directory(env, keyEntry(hash)).key(hash), companyId ? companyRowOf(env, companyId) : undefined]);
    if (!found) return { ok: false, reason: "UNKNOWN" };
    entry = rememberKey(hash, found.row, found.grants, at);
    if (companyId) entry.companies.set(companyId, { row: companyRow, granted: found.grants.includes(companyId) });
  }
  let company: CompanyAccess | undefined;
  if (companyId) {
    const known: CachedCompany = entry.companies.get(companyId) ?? { row: await companyRowOf(env, companyId), granted: entry.grants.includes(companyId) };
    entry.companies.set(companyId, known);
    company = { id: companyId, ...known };
  }
  const row = entry.row;
  if (row.revokedAt) return { ok: false, reason: "REVOKED" };
  const stale = !row.lastUsedAt || at - Date.parse(row.lastUsedAt) > LAST_USED_RESOLUTION_MS;
  if (stale) row.lastUsedAt = now.toISOString(); // the cached copy: the next requests of the hour do not touch again
  const touch = stale ? () => directory(env, keyEntry(hash)).touchKey(row.id, now.toISOString()) : null;
  return {
    ok: true,
    principal: { apiKeyId: row.id, clientId: row.clientId, role: row.role, livemode: row.livemode },
    touch,
    company,
  };
}

/** The company's row from its directory object (undefined when there is none). */
async function companyRowOf(env: DirectoryEnv, companyId: string): Promise<CompanyRow | undefined> {
  return (await directory(env, companyEntry(companyId)).company(companyId)) ?? undefined;
}

/** The company and whether the key matching `keyWhere` holds a MEMBER grant on it. */
function companyAccessQuery(db: Db, companyId: string, keyWhere: SQL | undefined) {
  return db
    .select({
      company: getTableColumns(companies),
      granted: sql<number>`exists (select 1 from ${apiKeyCompanies} where ${apiKeyCompanies.companyId} = ${companies.id} and ${apiKeyCompanies.apiKeyId} = (select ${apiKeys.id} from ${apiKeys} where ${keyWhere}))`,
    })
    .from(companies)
    .where(eq(companies.id, companyId))
    .limit(1);
}

/** The same lookup for a principal already authenticated. */
export async function companyAccess(db: Db, principal: Principal, companyId: string): Promise<CompanyAccess> {
  const [found] = await companyAccessQuery(db, companyId, eq(apiKeys.id, principal.apiKeyId));
  return { id: companyId, row: found?.company, granted: !!found?.granted };
}

/** The ids of the companies a key reaches (§2.5 `accessibleCompanyIds`), for GET /api/me. */
export async function accessibleCompanies(db: Db, principal: Principal): Promise<string[]> {
  const { clientId, apiKeyId, role, livemode } = principal;
  if (reachesAllCompanies(role)) {
    const rows = await db
      .select({ id: companies.id })
      .from(companies)
      .where(and(eq(companies.clientId, clientId), eq(companies.livemode, livemode), eq(companies.status, "ACTIVE")))
      .orderBy(companies.id);
    return rows.map((r) => r.id);
  }
  const rows = await db
    .select({ id: companies.id })
    .from(apiKeyCompanies)
    .innerJoin(companies, eq(companies.id, apiKeyCompanies.companyId))
    .where(and(eq(apiKeyCompanies.apiKeyId, apiKeyId), eq(companies.livemode, livemode), eq(companies.status, "ACTIVE"), isNull(companies.deletedAt)))
    .orderBy(companies.id);
  return rows.map((r) => r.id);
}
