import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { companySettings } from "../../db/schema";
import { canonicalLanguageTag, isValidTimeZone } from "../../lib/time";
import { AppError } from "../../errors";
import { DEFAULT_SETTINGS } from "./companies";
import { newId } from "../../lib/ids";

export type SettingsRow = typeof companySettings.$inferSelect;

export interface SettingsPatch {
  decimal_places?: number;
  thousand_separator?: "." | ",";
  decimal_separator?: "." | ",";
  language?: string;
  time_zone?: string;
}

export async function getSettings(db: Db, companyId: string): Promise<SettingsRow> {
  const row = await db.query.companySettings.findFirst({ where: eq(companySettings.companyId, companyId) });
  if (row) return row;
  // Every company is created with settings; this only repairs a row lost by hand.
  const created: SettingsRow = {
    id: newId("set"), companyId, ...DEFAULT_SETTINGS, logoKey: null, logoUrl: null, updatedAt: new Date().toISOString(),
  };
  await db.insert(companySettings).values(created).onConflictDoNothing();
  return (await db.query.companySettings.findFirst({ where: eq(companySettings.companyId, companyId) }))!;
}

export async function updateSettings(db: Db, companyId: string, patch: SettingsPatch): Promise<SettingsRow> {
  const current = await getSettings(db, companyId);
  const details: { field: string; message: string }[] = [];
  const next = {
    decimalPlaces: patch.decimal_places ?? current.decimalPlaces,
    thousandSeparator: patch.thousand_separator ?? current.thousandSeparator,
    decimalSeparator: patch.decimal_separator ?? current.decimalSeparator,
    language: current.language,
    timeZone: patch.time_zone ?? current.timeZone,
  };
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
  return row!;
}

export async function setLogo(db: Db, companyId: string, logoKey: string, logoUrl: string): Promise<void> {
  await getSettings(db, companyId);
  await db.update(companySettings).set({ logoKey, logoUrl, updatedAt: new Date().toISOString() }).where(eq(companySettings.companyId, companyId));
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
  };
}
