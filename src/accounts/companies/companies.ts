import { and, asc, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import { uniqueViolation, type Db } from "../../storage/db/client";
import { apiKeyCompanies, companies, companySettings } from "../../storage/db/schema";
import { newId } from "../../lib/ids";
import { toLocalDateTime } from "../../lib/time";
import type { Principal } from "../access/principal";
import { reachesAllCompanies } from "../access/roles";
import { findCountry } from "../../countries/catalogs/countries";
import { normalizeTaxId, taxIdDocumentsFor, taxIdFilterForms } from "../../countries/catalogs/tax-id-documents";
import { AppError } from "../../lib/errors";
import type { CompanyRow } from "./repository";
import { forgetAccess } from "../access/cache";
import { companyControlChanged } from "./control-cache";
import { companyEntry, holdInDirectory, type DirectoryEnv } from "../../storage/db/control-directory";

export interface CreateCompanyInput {
  legal_name: string;
  tax_identification_document_code: string;
  tax_identification_document_number: string;
  country: string;
  start_activities_date: string;
  /** The country's issuer profile (validated by the route with the country's schema). */
  issuer_profile?: Record<string, unknown> | undefined;
}

export const DEFAULT_SETTINGS = {
  decimalPlaces: 0,
  thousandSeparator: ".",
  decimalSeparator: ",",
  language: "es-CL",
  timeZone: "America/Santiago",
} as const;

/**
 * `id`: the new company's (createdId: derived from the request's Idempotency-Key claim, so that a
 * retry whose first attempt stored the company answers that company instead of COMPANY_TAX_ID_TAKEN).
 */
export async function createCompany(db: Db, principal: Principal, input: CreateCompanyInput, id = newId("cmp")): Promise<CompanyRow> {
  const country = findCountry(input.country);
  if (!country) {
    throw new AppError("COMPANY_COUNTRY_UNKNOWN", `Unknown country ${input.country}: use ISO 3166 alpha-3 (CHL) or alpha-2 (CL).`, [
      { field: "country", message: "Not an ISO 3166 alpha-2 or alpha-3 code" },
    ]);
  }
  const code = input.tax_identification_document_code.trim().toUpperCase();
  const documents = taxIdDocumentsFor(country.alpha3);
  if (!documents.some((d) => d.code === code)) {
    throw new AppError(
      "COMPANY_DOCUMENT_CODE_UNKNOWN",
      `${code} is not a tax identification document of ${country.name}; use ${documents.map((d) => d.code).join(" or ")}.`,
      [{ field: "tax_identification_document_code", message: `Expected ${documents.map((d) => d.code).join(" or ")}` }],
    );
  }
  const taxId = normalizeTaxId(country.alpha3, input.tax_identification_document_number);
  if (!taxId.ok) {
    throw new AppError("COMPANY_TAX_ID_INVALID", `Invalid tax identification number: ${taxId.message}.`, [
      { field: "tax_identification_document_number", message: taxId.message },
    ]);
  }
  const now = new Date().toISOString();
  const row: CompanyRow = {
    id,
    clientId: principal.clientId,
    legalName: input.legal_name.trim(),
    legalNameSearch: searchKey(input.legal_name),
    taxIdCode: code,
    taxId: taxId.canonical,
    country: country.alpha3,
    startActivitiesDate: input.start_activities_date,
    status: "ACTIVE",
    livemode: principal.livemode,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
    rateTier: "STANDARD",
    issuerProfile: storedIssuerProfile(input.issuer_profile),
  };
  try {
    await db.batch([
      db.insert(companies).values(row),
      db.insert(companySettings).values({ id: newId("set"), companyId: row.id, ...DEFAULT_SETTINGS, updatedAt: now }),
    ]);
  } catch (e) {
    if (uniqueViolation(e)?.startsWith("companies.")) {
      // A retry of a request whose company was stored (its answer lost) finds it under its own id.
      const [stored] = await db.select().from(companies).where(and(eq(companies.id, id), eq(companies.clientId, principal.clientId)));
      if (stored) return stored;
      throw new AppError("COMPANY_TAX_ID_TAKEN", `An active company with tax id ${taxId.canonical} in ${country.alpha3} already exists for this client in ${principal.livemode ? "live" : "test"} mode.`, [
        { field: "tax_identification_document_number", message: "Already registered" },
      ]);
    }
    throw e;
  }
  return row;
}

export interface CompanyListFilters {
  legal_name?: string;
  tax_identifier?: string;
  status?: "ACTIVE" | "DELETED";
}

export async function listCompanies(db: Db, principal: Principal, filters: CompanyListFilters, page: { perPage: number; offset: number }) {
  const where: SQL[] = [eq(companies.clientId, principal.clientId), eq(companies.livemode, principal.livemode), eq(companies.status, filters.status ?? "ACTIVE")];
  if (!reachesAllCompanies(principal.role)) {
    where.push(inArray(companies.id, db.select({ id: apiKeyCompanies.companyId }).from(apiKeyCompanies).where(eq(apiKeyCompanies.apiKeyId, principal.apiKeyId))));
  }
  if (filters.legal_name) {
    // instr, not LIKE: D1 refuses LIKE patterns over 50 bytes.
    where.push(sql`instr(${companies.legalNameSearch}, ${searchKey(filters.legal_name)}) > 0`);
  }
  if (filters.tax_identifier) where.push(inArray(companies.taxId, taxIdFilterForms(filters.tax_identifier)));
  const condition = and(...where);
  const [rows, totals] = await db.batch([
    db.select().from(companies).where(condition).orderBy(asc(companies.createdAt), asc(companies.id)).limit(page.perPage).offset(page.offset),
    db.select({ n: count() }).from(companies).where(condition),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
}

/** Case- and accent-insensitive form of a name: "Panadería Ñuñoa" -> "panaderia nunoa". */
export function searchKey(text: string): string {
  return text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().trim();
}

export async function softDeleteCompany(db: Db, env: DirectoryEnv, company: CompanyRow): Promise<void> {
  await holdInDirectory(env, [companyEntry(company.id)]);
  const now = new Date().toISOString();
  await db
    .update(companies)
    .set({ status: "DELETED", deletedAt: now, updatedAt: now })
    .where(and(eq(companies.id, company.id), eq(companies.status, "ACTIVE")));
  forgetAccess();
  await companyControlChanged(env, company.id);
}

/** The list item of §2.2. `created_at` is wall-clock time in the company's time zone, no offset. */
export function companyListItem(row: CompanyRow, timeZone: string) {
  const country = findCountry(row.country);
  return {
    id: row.id,
    legal_name: row.legalName,
    tax_identifier: row.taxId,
    tax_identification_document_code: row.taxIdCode,
    country_iso3: row.country,
    country_name: country?.name ?? row.country,
    start_activities_date: row.startActivitiesDate ?? "",
    status: row.status,
    created_at: toLocalDateTime(row.createdAt, timeZone),
    issuer_profile: issuerProfileOf(row),
  };
}

export async function timeZonesOf(db: Db, companyIds: string[]): Promise<Map<string, string>> {
  if (companyIds.length === 0) return new Map();
  const rows = await db
    .select({ companyId: companySettings.companyId, timeZone: companySettings.timeZone })
    .from(companySettings)
    .where(inArray(companySettings.companyId, companyIds));
  return new Map(rows.map((r) => [r.companyId, r.timeZone]));
}

/** Sets (or, with null, removes) the company's issuer profile: at once in this isolate, in the others within the access cache's few seconds. */
export async function setIssuerProfile(db: Db, env: DirectoryEnv, company: CompanyRow, profile: Record<string, unknown> | null): Promise<CompanyRow> {
  const updatedAt = new Date().toISOString();
  const issuerProfile = storedIssuerProfile(profile);
  await db.update(companies).set({ issuerProfile, updatedAt }).where(and(eq(companies.id, company.id), eq(companies.status, "ACTIVE")));
  forgetAccess();
  await companyControlChanged(env, company.id);
  return { ...company, issuerProfile, updatedAt };
}

/** The issuer profile as stored: its JSON, or null when it sets nothing. */
function storedIssuerProfile(profile: Record<string, unknown> | null | undefined): string | null {
  return profile && Object.keys(profile).length > 0 ? JSON.stringify(profile) : null;
}

/** The company's issuer profile (the fields of the issuer block it keeps), or null. */
export function issuerProfileOf(company: Pick<CompanyRow, "issuerProfile">): Record<string, unknown> | null {
  return company.issuerProfile ? (JSON.parse(company.issuerProfile) as Record<string, unknown>) : null;
}
