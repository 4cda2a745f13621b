import { and, eq, getTableColumns, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeyCompanies, apiKeys, companies } from "../../db/schema";
import { hmacSha256Hex, randomBase62 } from "../../lib/crypto";
import { newId } from "../../lib/ids";
import type { CompanyRow } from "../companies/repository";
import type { Principal } from "./principal";
import { reachesAllCompanies, type Role } from "./roles";
import { cachedKey, rememberKey, type CachedCompany } from "./cache";

/**
 * `dte_test_` or `dte_live_` + 40 base62 characters (about 238 bits of entropy). Keys made before
 * modes existed (`dte_sk_…`) keep working, as test keys. The mode is read from the key's row.
 */
export const API_KEY_PATTERN = /^dte_(?:test|live|sk)_[0-9A-Za-z]{40}$/;
const PREFIX_LENGTH = 12;
/** last_used_at is refreshed at most once a minute per key to keep reads cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

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

/**
 * Resolves the X-Api-Key header to a principal (§2.5). When the request names a company, that
 * company and the key's grant on it are read in the same D1 round trip. Both are cached in the
 * isolate for a few seconds (./cache.ts): a POST after the first reads nothing from D1.
 */
export async function authenticate(db: Db, pepper: string, header: string | undefined, now = new Date(), companyId?: string): Promise<AuthResult> {
  if (header === undefined || header.trim() === "") return { ok: false, reason: "MISSING" };
  const key = header.trim();
  if (!API_KEY_PATTERN.test(key)) return { ok: false, reason: "MALFORMED" };
  const hash = await hashApiKey(pepper, key);
  const at = now.getTime();
  const cached = cachedKey(hash, at);
  let row = cached?.row;
  let company: CompanyAccess | undefined;
  if (cached && companyId) {
    const known: CachedCompany = cached.companies.get(companyId) ?? (await companyAccessQuery(db, companyId, eq(apiKeys.id, cached.row.id)).then(([found]) => ({ row: found?.company, granted: !!found?.granted })));
    cached.companies.set(companyId, known);
    company = { id: companyId, ...known };
  } else if (!cached) {
    const keyQuery = db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash)).limit(1);
    if (companyId) {
      const [keys, found] = await db.batch([keyQuery, companyAccessQuery(db, companyId, eq(apiKeys.keyHash, hash))]);
      row = keys[0];
      company = { id: companyId, row: found[0]?.company, granted: !!found[0]?.granted };
    } else {
      row = (await keyQuery)[0];
    }
    if (row) {
      const entry = rememberKey(hash, row, at);
      if (company) entry.companies.set(company.id, { row: company.row, granted: company.granted });
    }
  }
  if (!row) return { ok: false, reason: "UNKNOWN" };
  if (row.revokedAt) return { ok: false, reason: "REVOKED" };
  const stale = !row.lastUsedAt || at - Date.parse(row.lastUsedAt) > LAST_USED_RESOLUTION_MS;
  const keyId = row.id;
  if (stale) row.lastUsedAt = now.toISOString(); // the cached copy: the next requests of the minute do not touch again
  const touch = stale ? () => db.update(apiKeys).set({ lastUsedAt: now.toISOString() }).where(eq(apiKeys.id, keyId)) : null;
  return {
    ok: true,
    principal: { apiKeyId: row.id, clientId: row.clientId, role: row.role, livemode: row.livemode },
    touch,
    company,
  };
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
