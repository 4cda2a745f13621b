import { eq } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { companies } from "../../storage/db/schema";

export type CompanyRow = typeof companies.$inferSelect;

/** Any company by id, whatever its client or status; callers enforce access. */
export async function findCompanyForClient(db: Db, id: string): Promise<CompanyRow | undefined> {
  return db.query.companies.findFirst({ where: eq(companies.id, id) });
}
