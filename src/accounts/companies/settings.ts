import { eq } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { companySettings } from "../../storage/db/schema";
import { canonicalLanguageTag, isValidTimeZone } from "../../lib/time";
import { AppError } from "../../lib/errors";
import { DEFAULT_SETTINGS } from "./companies";
import { newId } from "../../lib/ids";
import { companyControlChanged } from "./control-cache";
import type { DirectoryEnv } from "../../storage/db/control-directory";

export type SettingsRow = typeof companySettings.$inferSelect;

export interface SettingsPatch {
  decimal_places?: number;
  thousand_separator?: "." | ",";
  decimal_separator?: "." | ",";
  language?: string;
  time_zone?: string;
  sii_resolution_number?: number;
  sii_resolution_date?: string;
}

/** The company's SII resolution as set in its settings, or null while either half is missing. */
export function resolutionOf(row: Pick<SettingsRow, "siiResolutionNumber" | "siiResolutionDate"> | undefined): { number: number; date: string } | null {
  return row && row.siiResolutionNumber !== null && row.siiResolutionDate !== null ? { number: row.siiResolutionNumber, date: row.siiResolutionDate } : null;
}

/**
 * The resolution every envelope and printed document of the company carries: the settings' one;
 * until it is set, the one the first document names (older clients sent it in the body), else the
 * start-of-activities date and number 0 (what certification uses).
 */
export function effectiveResolution(
  settings: Pick<SettingsRow, "siiResolutionNumber" | "siiResolutionDate"> | undefined,
  fromBody: { resolution_number?: string; resolution_date?: string } | undefined,
  startActivitiesDate: string | null,
): { number: number; date: string } {
  return resolutionOf(settings) ?? { number: Number(fromBody?.resolution_number ?? 0), date: fromBody?.resolution_date ?? startActivitiesDate ?? "2014-01-01" };
}

function validDate(s: string): boolean {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s && s >= "2000-01-01" && s <= "2050-12-31";
}

export async function getSettings(db: Db, env: DirectoryEnv, companyId: string): Promise<SettingsRow> {
  const row = await db.query.companySettings.findFirst({ where: eq(companySettings.companyId, companyId) });
  if (row) return row;
  // Every company is created with settings; this only repairs a row lost by hand.
  const created: SettingsRow = {
    id: newId("set"), companyId, ...DEFAULT_SETTINGS, logoKey: null, logoUrl: null, siiResolutionNumber: null, siiResolutionDate: null, updatedAt: new Date().toISOString(),
  };
  await db.insert(companySettings).values(created).onConflictDoNothing();
  await companyControlChanged(env, companyId);
  return (await db.query.companySettings.findFirst({ where: eq(companySettings.companyId, companyId) }))!;
}

export async function updateSettings(db: Db, env: DirectoryEnv, companyId: string, patch: SettingsPatch): Promise<SettingsRow> {
  const current = await getSettings(db, env, companyId);
  const details: { field: string; message: string }[] = [];
  const next = {
    decimalPlaces: patch.decimal_places ?? current.decimalPlaces,
    thousandSeparator: patch.thousand_separator ?? current.thousandSeparator,
    decimalSeparator: patch.decimal_separator ?? current.decimalSeparator,
    language: current.language,
    timeZone: patch.time_zone ?? current.timeZone,
    siiResolutionNumber: patch.sii_resolution_number ?? current.siiResolutionNumber,
    siiResolutionDate: patch.sii_resolution_date ?? current.siiResolutionDate,
  };
  if (patch.sii_resolution_date !== undefined && !validDate(patch.sii_resolution_date)) {
    details.push({ field: "sii_resolution_date", message: `${patch.sii_resolution_date} is not a calendar date between 2000-01-01 and 2050-12-31` });
  }
  if ((next.siiResolutionNumber === null) !== (next.siiResolutionDate === null)) {
    const missing = next.siiResolutionNumber === null ? "sii_resolution_number" : "sii_resolution_date";
    details.push({ field: missing, message: "The SII resolution needs both its number and its date" });
  }
  if (patch.language !== undefined) {
    const tag = canonicalLanguageTag(patch.language);
    if (!tag) details.push({ field: "language", message: `${patch.language} is not a BCP 47 language tag (e.g. es-CL, en)` });
    else next.language = tag;
  }
  if (patch.time_zone !== undefined && !isValidTimeZone(patch.time_zone)) {
    details.push({ field: "time_zone", message: `${patch.time_zone} is not an IANA time zone (e.g. America/Santiago)` });
  }
  if (next.thousandSeparator === next.decimalSeparator) {
    details.push({
      field: patch.decimal_separator !== undefined ? "decimal_separator" : "thousand_separator",
      message: `The thousand and decimal separators must differ (both would be "${next.decimalSeparator}")`,
    });
  }
  if (details.length > 0) {
    throw new AppError("VALIDATION_FAILED", `Invalid settings: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
  }
  const [row] = await db
    .update(companySettings)
    .set({ ...next, updatedAt: new Date().toISOString() })
    .where(eq(companySettings.companyId, companyId))
    .returning();
  await companyControlChanged(env, companyId);
  return row!;
}

export async function setLogo(db: Db, env: DirectoryEnv, companyId: string, logoKey: string, logoUrl: string): Promise<void> {
  await getSettings(db, env, companyId);
  await db.update(companySettings).set({ logoKey, logoUrl, updatedAt: new Date().toISOString() }).where(eq(companySettings.companyId, companyId));
  await companyControlChanged(env, companyId);
}

export function settingsView(row: SettingsRow) {
  return {
    id: row.id,
    id_company: row.companyId,
    decimal_places: row.decimalPlaces,
    thousand_separator: row.thousandSeparator,
    decimal_separator: row.decimalSeparator,
    language: row.language,
    time_zone: row.timeZone,
    logo: row.logoUrl,
    sii_resolution_number: row.siiResolutionNumber,
    sii_resolution_date: row.siiResolutionDate,
  };
}
