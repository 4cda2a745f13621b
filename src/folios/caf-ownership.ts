/**
 * A folio range belongs to one issuer RUT, and the SII authorises each folio once. Two clients of
 * this service may register companies with the same RUT; if both loaded the same CAF, their folio
 * allocators would be independent and the same folio would be issued twice (the SII rejects one).
 * So a range is refused while any other company with the same RUT (any client, deleted ones
 * included: their folios may have been used) holds an overlapping range of the same type.
 *
 * Applied within each mode: among live companies (the SII's folios) and, separately,
 * among test companies (the simulator grants folios per RUT like the SII, so a refetch never
 * collides, and uploading one simulated CAF into two accounts is refused exactly as in live mode).
 * A company's test and live ranges never compete: they come from different authorities.
 *
 * This reads across companies on purpose (a control-plane check on the small `cafs` table by RUT),
 * never document records.
 */
import { and, eq, gte, inArray, lte, ne } from "drizzle-orm";
import type { Db } from "../storage/db/client";
import { cafs, companies } from "../storage/db/schema";
import { AppError } from "../lib/errors";

export interface RangeClaim {
  companyId: string;
  /** The claiming company's mode: test CAFs (the simulator's) and live ones (the SII's) never compete. */
  livemode: boolean;
  rut: string;
  documentType: number;
  from: number;
  to: number;
}

/** Overlapping ranges held by other companies with the same RUT, oldest first. */
async function rivals(db: Db, claim: RangeClaim) {
  const sameRut = await db
    .select({ id: companies.id })
    .from(companies)
    .where(and(eq(companies.taxId, claim.rut), eq(companies.country, "CHL"), eq(companies.livemode, claim.livemode), ne(companies.id, claim.companyId)));
  if (sameRut.length === 0) return [];
  const rows = await db
    .select({ id: cafs.id, createdAt: cafs.createdAt })
    .from(cafs)
    .where(
      and(
        inArray(cafs.companyId, sameRut.map((r) => r.id)),
        eq(cafs.documentType, claim.documentType),
        lte(cafs.folioFrom, claim.to),
        gte(cafs.folioTo, claim.from),
      ),
    );
  return rows.sort((a, b) => (a.createdAt === b.createdAt ? a.id.localeCompare(b.id) : a.createdAt.localeCompare(b.createdAt)));
}

function heldElsewhere(claim: RangeClaim): AppError {
  return new AppError(
    "ENUMERATION_CAF_HELD_ELSEWHERE",
    `Folios ${claim.from}-${claim.to} of type ${claim.documentType} for RUT ${claim.rut} overlap a range already loaded in another account of this service; the SII authorises each folio once, so they can be issued from one account only.`,
    [{ field: "file", message: "Range loaded in another account" }],
  );
}

/** Before loading: refuse a range another company with the same RUT holds. */
export async function assertRangeFree(db: Db, claim: RangeClaim): Promise<void> {
  if ((await rivals(db, claim)).length > 0) throw heldElsewhere(claim);
}

/**
 * After recording our row (id, createdAt): two concurrent uploads may both have passed the check;
 * the older row (createdAt, then id) wins, and the loser must roll back. Returns the error to throw.
 */
export async function loserOfRace(db: Db, claim: RangeClaim, ours: { id: string; createdAt: string }): Promise<AppError | undefined> {
  const older = (await rivals(db, claim)).find((r) => r.createdAt < ours.createdAt || (r.createdAt === ours.createdAt && r.id < ours.id));
  return older ? heldElsewhere(claim) : undefined;
}
