/**
 * Each company's reception e-mail address, `dte+<token>@<RECEPTION_DOMAIN>`: the token is
 * random, made on first use, and routes supplier mail to the company without revealing its id.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { receptionAddresses } from "../../storage/db/schema";
import { randomBase62 } from "../../lib/crypto";

export async function receptionToken(db: Db, companyId: string): Promise<string> {
  const found = await db.select({ token: receptionAddresses.token }).from(receptionAddresses).where(eq(receptionAddresses.companyId, companyId)).get();
  if (found) return found.token;
  await db.insert(receptionAddresses).values({ companyId, token: randomBase62(16).toLowerCase() }).onConflictDoNothing();
  return (await db.select({ token: receptionAddresses.token }).from(receptionAddresses).where(eq(receptionAddresses.companyId, companyId)).get())!.token;
}

export function receptionEmail(token: string, domain: string | undefined): string | null {
  return domain ? `dte+${token}@${domain}` : null;
}

/** The company a reception address belongs to: `dte+<token>@<domain>` (case-insensitive), or null. */
export async function companyOfAddress(db: Db, address: string, domain: string | undefined): Promise<string | null> {
  if (!domain) return null;
  const m = /^dte\+([a-z0-9]{1,64})@(.+)$/i.exec(address.trim());
  if (!m || m[2]!.toLowerCase() !== domain.toLowerCase()) return null;
  const row = await db.select({ companyId: receptionAddresses.companyId }).from(receptionAddresses).where(eq(receptionAddresses.token, m[1]!.toLowerCase())).get();
  return row?.companyId ?? null;
}
