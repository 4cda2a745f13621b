import { entry, type CatalogEntry } from "../../catalogs/types";
import rows from "./data/activities.json";

/**
 * The SII's economic activity codes (Acteco, the 6-digit classification in force since November
 * 2018, CIIU4.CL 2012). `vat`: whether the activity is affected by IVA ("depends" where the SII marks
 * it G: it depends on the taxpayer, not on the code alone); `tax_category`: first or second category
 * of the income tax law (or "depends", the SII's G); `online`: whether the SII lets a taxpayer
 * declare it on the web (otherwise only at an SII office).
 */
export interface Activity {
  code: string;
  name: string;
  vat: "affected" | "not_affected" | "depends";
  taxCategory: "first" | "second" | "depends";
  online: boolean;
  section: string;
  group: string;
}

export const ACTIVITIES: readonly Activity[] = rows.map((r) => ({
  code: r.code, name: r.name, vat: r.vat as Activity["vat"], taxCategory: r.tax_category as Activity["taxCategory"], online: r.online, section: r.section, group: r.group,
}));

export const ACTIVITY_ENTRIES: readonly CatalogEntry[] = ACTIVITIES.map((a) =>
  entry(a.code, a.name, { vat: a.vat, tax_category: a.taxCategory, online: a.online, section: a.section, group: a.group }),
);

const BY_CODE = new Map(ACTIVITIES.map((a) => [Number(a.code), a]));

/** The activity for an Acteco code, written as a number (620200) or as 6 digits ("011101"). */
export function findActivity(code: number | string): Activity | undefined {
  const n = typeof code === "number" ? code : /^\d{1,6}$/.test(code.trim()) ? Number(code.trim()) : NaN;
  return BY_CODE.get(n);
}
