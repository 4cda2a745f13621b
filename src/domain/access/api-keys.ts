import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { apiKeyCompanies, apiKeys, companies } from "../../db/schema";
import { hmacSha256Hex, randomBase62 } from "../../lib/crypto";
import { newId } from "../../lib/ids";
import type { Principal } from "./principal";
import { reachesAllCompanies, type Role } from "./roles";

/** `dte_sk_` + 40 base62 characters (about 238 bits of entropy). */
export const API_KEY_PATTERN = /^dte_sk_[0-9A-Za-z]{40}$/;
const PREFIX_LENGTH = 12;
/** last_used_at is refreshed at most once a minute per key to keep reads cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function generateApiKey(): { key: string; prefix: string } {
  const key = `dte_sk_${randomBase62(40)}`;
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
}

export async function createApiKey(db: Db, pepper: string, input: NewKeyInput) {
  const { key, prefix } = generateApiKey();
  const row = {
    id: newId("key"),
    clientId: input.clientId,
    userId: input.userId,
    name: input.name,
    role: input.role,
    prefix,
    keyHash: await hashApiKey(pepper, key),
    createdAt: new Date().toISOString(),
  };
  await db.insert(apiKeys).values(row);
  return { ...row, key };
}

export type AuthResult =
  | { ok: true; principal: Principal; touch: (() => Promise<unknown>) | null }
  | { ok: false; reason: "MISSING" | "MALFORMED" | "UNKNOWN" | "REVOKED" };

/** Resolves the X-Api-Key header to a principal (§2.5). */
export async function authenticate(db: Db, pepper: string, header: string | undefined, now = new Date()): Promise<AuthResult> {
  if (header === undefined || header.trim() === "") return { ok: false, reason: "MISSING" };
  const key = header.trim();
  if (!API_KEY_PATTERN.test(key)) return { ok: false, reason: "MALFORMED" };
  const hash = await hashApiKey(pepper, key);
  const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.keyHash, hash) });
  if (!row) return { ok: false, reason: "UNKNOWN" };
  if (row.revokedAt) return { ok: false, reason: "REVOKED" };
  const accessibleCompanyIds = await accessibleCompanies(db, row.clientId, row.id, row.role);
  const stale = !row.lastUsedAt || now.getTime() - Date.parse(row.lastUsedAt) > LAST_USED_RESOLUTION_MS;
  const touch = stale
    ? () => db.update(apiKeys).set({ lastUsedAt: now.toISOString() }).where(eq(apiKeys.id, row.id))
    : null;
  return {
    ok: true,
    principal: { apiKeyId: row.id, clientId: row.clientId, role: row.role, accessibleCompanyIds },
    touch,
  };
}

async function accessibleCompanies(db: Db, clientId: string, apiKeyId: string, role: Role): Promise<string[]> {
  if (reachesAllCompanies(role)) {
    const rows = await db
      .select({ id: companies.id })
      .from(companies)
      .where(and(eq(companies.clientId, clientId), eq(companies.status, "ACTIVE")))
      .orderBy(companies.id);
    return rows.map((r) => r.id);
  }
  const rows = await db
    .select({ id: companies.id })
    .from(apiKeyCompanies)
    .innerJoin(companies, eq(companies.id, apiKeyCompanies.companyId))
    .where(and(eq(apiKeyCompanies.apiKeyId, apiKeyId), eq(companies.status, "ACTIVE"), isNull(companies.deletedAt)))
    .orderBy(companies.id);
  return rows.map((r) => r.id);
}
