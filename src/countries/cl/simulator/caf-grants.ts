import { and, desc, eq, gte, lte } from "drizzle-orm";
import type { Db } from "../../../storage/db/client";
import { simCafGrants } from "../../../storage/db/schema";
import { AppError } from "../../../lib/errors";
import { newId } from "../../../lib/ids";
import { toLocalDateTime } from "../../../lib/time";
import { normalizeRut } from "../documents/rut";
import { issueSimulatorCaf } from "./caf";
import type { CafRequest } from "../sii/client";

/** What a CAF request names: the SII client sends exactly this (see CafRequest). */
export type GrantRequest = CafRequest;

/**
 * The simulated SII hands out a CAF the way a taxpayer downloads one from the SII portal: a range
 * that overlaps no range it granted before for the same RUT and type, signed with the simulator's
 * SII key (IDK 999). Without an explicit range it grants the next `quantity` folios.
 */
export async function grantSimulatorCaf(db: Db, req: GrantRequest, now = new Date()) {
  const rut = normalizeRut(req.rut);
  let from = req.from;
  let to = req.to;
  if (from === undefined || to === undefined) {
    const last = await db
      .select({ to: simCafGrants.folioTo })
      .from(simCafGrants)
      .where(and(eq(simCafGrants.rut, rut), eq(simCafGrants.documentType, req.documentType)))
      .orderBy(desc(simCafGrants.folioTo))
      .limit(1);
    from = (last[0]?.to ?? 0) + 1;
    to = from + (req.quantity ?? 100) - 1;
  }
  const overlapping = await db
    .select({ from: simCafGrants.folioFrom, to: simCafGrants.folioTo })
    .from(simCafGrants)
    .where(and(eq(simCafGrants.rut, rut), eq(simCafGrants.documentType, req.documentType), lte(simCafGrants.folioFrom, to), gte(simCafGrants.folioTo, from)))
    .limit(1);
  if (overlapping[0]) {
    throw new AppError(
      "SIMULATOR_CAF_OVERLAP",
      `Folios ${overlapping[0].from}-${overlapping[0].to} of type ${req.documentType} were already granted to ${rut}; ask for a range after ${overlapping[0].to}.`,
    );
  }
  const authorizedOn = toLocalDateTime(now, "America/Santiago").slice(0, 10);
  const caf = await issueSimulatorCaf({ rut, legalName: req.legalName ?? `CONTRIBUYENTE ${rut}`, documentType: req.documentType, from, to, authorizedOn });
  await db.insert(simCafGrants).values({ id: newId("sim"), rut, documentType: req.documentType, folioFrom: from, folioTo: to, authorizedOn, createdAt: now.toISOString() });
  return { ...caf, from, to, authorizedOn };
}
