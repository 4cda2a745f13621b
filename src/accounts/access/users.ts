import { and, asc, count, eq, isNull, type SQL } from "drizzle-orm";
import { uniqueViolation, type Db } from "../../storage/db/client";
import { apiKeyCompanies, apiKeys, companies, users } from "../../storage/db/schema";
import { newId } from "../../lib/ids";
import { AppError } from "../../lib/errors";
import { createApiKey } from "./api-keys";
import type { Principal } from "./principal";
import { canManageKeyOfRole, type Role } from "./roles";
import { accessChanged } from "./cache";
import { holdInDirectory, keyEntry, type DirectoryEnv } from "../../storage/db/control-directory";

export type UserRow = typeof users.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function createUser(db: Db, principal: Principal, input: { email: string; name: string }): Promise<UserRow> {
  const row: UserRow = {
    id: newId("usr"), clientId: principal.clientId, email: input.email.trim().toLowerCase(), name: input.name.trim(),
    status: "ACTIVE", createdAt: new Date().toISOString(), revokedAt: null,
  };
  try {
    await db.insert(users).values(row);
  } catch (e) {
    if (uniqueViolation(e)?.startsWith("users.")) {
      throw new AppError("USER_EMAIL_TAKEN", `A user with e-mail ${row.email} already exists.`, [{ field: "email", message: "Already exists" }]);
    }
    throw e;
  }
  return row;
}

export async function getUser(db: Db, principal: Principal, userId: string): Promise<UserRow> {
  const row = await db.query.users.findFirst({ where: and(eq(users.id, userId), eq(users.clientId, principal.clientId)) });
  if (!row) throw new AppError("USER_NOT_FOUND", `User ${userId} does not exist.`);
  return row;
}

export async function listUsers(db: Db, principal: Principal, page: { perPage: number; offset: number }) {
  const where = eq(users.clientId, principal.clientId);
  const [rows, totals] = await db.batch([
    db.select().from(users).where(where).orderBy(asc(users.createdAt), asc(users.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(users).where(where),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}

async function activeOwnerKeys(db: Db, clientId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(and(eq(apiKeys.clientId, clientId), eq(apiKeys.role, "OWNER"), isNull(apiKeys.revokedAt)));
}

/** Revokes a user and every key of theirs. An ADMIN may not revoke a user who holds OWNER keys. */
export async function revokeUser(db: Db, env: DirectoryEnv, principal: Principal, userId: string): Promise<UserRow> {
  const user = await getUser(db, principal, userId);
  const keys = await db.select().from(apiKeys).where(and(eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)));
  if (keys.some((k) => !canManageKeyOfRole(principal.role, k.role))) {
    throw new AppError("AUTH_ROLE_FORBIDDEN", "Only an OWNER key may revoke a user who holds OWNER keys.");
  }
  const owners = await activeOwnerKeys(db, principal.clientId);
  if (owners.length > 0 && owners.every((k) => k.userId === user.id)) {
    throw new AppError("API_KEY_LAST_OWNER", "This would revoke the client's last OWNER key; create another OWNER key first.");
  }
  await holdInDirectory(env, keys.map((k) => keyEntry(k.keyHash)));
  const now = new Date().toISOString();
  const [, revoked] = await db.batch([
    db.update(users).set({ status: "REVOKED", revokedAt: now }).where(eq(users.id, user.id)),
    db.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt))).returning({ keyHash: apiKeys.keyHash }),
  ]);
  // Every key the user held, as revoked now (a key made meanwhile included): each key's object forgets.
  await accessChanged(env, revoked.map((k) => k.keyHash));
  return { ...user, status: "REVOKED", revokedAt: user.revokedAt ?? now };
}

export async function createUserKey(db: Db, pepper: string, principal: Principal, userId: string, input: { name: string; role: Role; livemode?: boolean }) {
  const user = await getUser(db, principal, userId);
  if (user.status !== "ACTIVE") throw new AppError("USER_REVOKED", `User ${user.id} is revoked; keys cannot be created for it.`);
  if (!canManageKeyOfRole(principal.role, input.role)) {
    throw new AppError("AUTH_ROLE_FORBIDDEN", `A ${principal.role} key may not create ${input.role} keys.`);
  }
  const livemode = input.livemode ?? principal.livemode;
  // A test key is often handed to development machines: it can never mint a live key.
  if (livemode && !principal.livemode) throw new AppError("AUTH_ROLE_FORBIDDEN", "A test key may not create live keys; use a live key.");
  return createApiKey(db, pepper, { clientId: principal.clientId, userId: user.id, name: input.name.trim(), role: input.role, livemode });
}

export async function getKey(db: Db, principal: Principal, keyId: string): Promise<ApiKeyRow> {
  const row = await db.query.apiKeys.findFirst({ where: and(eq(apiKeys.id, keyId), eq(apiKeys.clientId, principal.clientId)) });
  if (!row) throw new AppError("API_KEY_NOT_FOUND", `API key ${keyId} does not exist.`);
  return row;
}

export async function listKeys(db: Db, principal: Principal, filter: { userId?: string }, page: { perPage: number; offset: number }) {
  const conditions: SQL[] = [eq(apiKeys.clientId, principal.clientId)];
  if (filter.userId) conditions.push(eq(apiKeys.userId, filter.userId));
  const where = and(...conditions);
  const [rows, totals] = await db.batch([
    db.select().from(apiKeys).where(where).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(apiKeys).where(where),
  ]);
  const grants = await grantsOf(db, rows.map((r) => r.id));
  return { rows: rows.map((r) => ({ ...r, companyIds: grants.get(r.id) ?? [] })), total: totals[0]?.n ?? 0 };
}

export async function grantsOf(db: Db, keyIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const id of keyIds) {
    const rows = await db.select({ companyId: apiKeyCompanies.companyId }).from(apiKeyCompanies).where(eq(apiKeyCompanies.apiKeyId, id)).orderBy(asc(apiKeyCompanies.companyId));
    out.set(id, rows.map((r) => r.companyId));
  }
  return out;
}

export async function revokeKey(db: Db, env: DirectoryEnv, principal: Principal, keyId: string): Promise<ApiKeyRow> {
  const key = await getKey(db, principal, keyId);
  if (!canManageKeyOfRole(principal.role, key.role)) {
    throw new AppError("AUTH_ROLE_FORBIDDEN", `A ${principal.role} key may not revoke ${key.role} keys.`);
  }
  if (key.revokedAt) return key;
  if (key.role === "OWNER") {
    const owners = await activeOwnerKeys(db, principal.clientId);
    if (owners.length === 1 && owners[0]!.id === key.id) {
      throw new AppError("API_KEY_LAST_OWNER", "This is the client's last active OWNER key; create another OWNER key before revoking it.");
    }
  }
  await holdInDirectory(env, [keyEntry(key.keyHash)]);
  const now = new Date().toISOString();
  await db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, key.id));
  await accessChanged(env, [key.keyHash]);
  return { ...key, revokedAt: now };
}

/** Grants (or withdraws) a MEMBER key's access to one company of the same client. */
export async function setGrant(db: Db, env: DirectoryEnv, principal: Principal, keyId: string, companyId: string, granted: boolean) {
  const key = await getKey(db, principal, keyId);
  if (key.role !== "MEMBER") {
    throw new AppError("API_KEY_GRANT_NOT_APPLICABLE", `${key.role} keys reach every company of the client; grants apply to MEMBER keys only.`);
  }
  if (key.revokedAt) throw new AppError("API_KEY_NOT_FOUND", `API key ${keyId} is revoked.`);
  const company = await db.query.companies.findFirst({ where: eq(companies.id, companyId) });
  // Missing and another client's company answer alike (403); only the client's own deleted one is 404.
  if (!company || company.clientId !== principal.clientId || company.livemode !== principal.livemode) throw new AppError("AUTH_COMPANY_ACCESS_DENIED", "This API key has no access to this company.");
  if (key.livemode !== company.livemode) {
    throw new AppError("API_KEY_GRANT_NOT_APPLICABLE", `A ${key.livemode ? "live" : "test"} key cannot be granted a ${company.livemode ? "live" : "test"} company: each mode sees only its own data.`);
  }
  if (company.status !== "ACTIVE") throw new AppError("COMPANY_NOT_FOUND", `Company ${companyId} was deleted.`);
  if (granted) {
    await db.insert(apiKeyCompanies).values({ apiKeyId: key.id, companyId }).onConflictDoNothing();
  } else {
    await holdInDirectory(env, [keyEntry(key.keyHash)]);
    await db.delete(apiKeyCompanies).where(and(eq(apiKeyCompanies.apiKeyId, key.id), eq(apiKeyCompanies.companyId, companyId)));
  }
  await accessChanged(env, [key.keyHash]);
  return { ...key, companyIds: (await grantsOf(db, [key.id])).get(key.id) ?? [] };
}
