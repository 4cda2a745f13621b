/**
 * The per-isolate cache of a company's control-plane rows that every document step reads again
 * (issue 16, docs/capacity.md "Per document, measured"): the company row and its settings, the active
 * certificate, whether a CAF is loaded for a type. Same mechanism as the key and company lookup
 * (src/domain/access/cache.ts, src/lib/isolate-cache.ts): a company's entry lives CONTROL_CACHE_MS,
 * and every part read while it lives goes with it, so nothing served is older than that.
 *
 * Every write made in this isolate to one of those rows (certificate uploaded, activated or deleted,
 * CAF stored or dropped, settings or logo changed, company deleted) calls `forgetCompanyControl`,
 * which drops the company's entry at once; other isolates see the change when their entry expires:
 * a deleted or replaced certificate can still sign for up to CONTROL_CACHE_MS in isolates that read
 * it before (README, "Configuration"). An expired certificate is never used: its dates are checked
 * on every use. Absence is never cached (a certificate or CAF just loaded works at once everywhere),
 * and neither is a failed read. Folios do not come from here: the folio allocator numbers documents.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { cafs, certificates, companies, companySettings } from "../../db/schema";
import { IsolateCache } from "../../lib/isolate-cache";
import type { CompanyRow } from "./repository";
import type { SettingsRow } from "./settings";

type CertificateRow = typeof certificates.$inferSelect;

export const CONTROL_CACHE_MS = 60_000;

const byCompany = new IsolateCache<Map<string, Promise<unknown>>>(CONTROL_CACHE_MS);

/**
 * `part` of `companyId`'s control rows, from this isolate's cache or from `load` (awaited once:
 * a Drizzle query is a thenable that would run again on every await). A value `keep` refuses
 * (an absence) is handed out but not kept.
 */
export function cachedControl<T>(companyId: string, part: string, at: number, load: () => PromiseLike<T>, keep: (value: T) => boolean = () => true): Promise<T> {
  const parts = byCompany.get(companyId, at) ?? byCompany.set(companyId, new Map(), at);
  const hit = parts.get(part) as Promise<T> | undefined;
  if (hit) return hit;
  const loading = Promise.resolve().then(load);
  parts.set(part, loading);
  const drop = () => parts.get(part) === loading && parts.delete(part);
  loading.then((value) => keep(value) || drop(), drop);
  return loading;
}

/** Whether the company's control data is in this isolate's cache (a caller that would refuse on it reads it again first). */
export function controlCached(companyId: string, at: number): boolean {
  return byCompany.get(companyId, at)?.has("company") ?? false;
}

/** Drops everything cached of the company in this isolate: call after any write to its control rows. */
export function forgetCompanyControl(companyId: string): void {
  byCompany.delete(companyId);
}

export interface CompanyControl {
  company: CompanyRow;
  settings: SettingsRow | undefined;
  /** The active certificate (its credentials are opened and cached by id elsewhere). */
  certificate: CertificateRow | undefined;
  /** The document types the company has an active CAF for. */
  cafTypes: readonly number[];
}

/**
 * All of a company's control data that a document reads (the company row, its settings, the active
 * certificate, the types it has an active CAF for), in one D1 round trip on a miss (independent
 * reads, one batch: 4 statements); null when the company does not exist. Shared by the POST and the
 * pipeline's steps. Kept only while the company has an active certificate, so a certificate uploaded
 * anywhere is used at once; `fresh` reads again whatever is cached (a caller that found something
 * missing: absence is never trusted from the cache).
 */
export function companyControl(db: Db, companyId: string, at: number, fresh = false): Promise<CompanyControl | null> {
  if (fresh) byCompany.get(companyId, at)?.delete("company");
  return cachedControl(companyId, "company", at, () => readCompanyControl(db, companyId), (found) => found?.certificate !== undefined);
}

async function readCompanyControl(db: Db, companyId: string): Promise<CompanyControl | null> {
  const [[company], [settings], [certificate], cafRows] = await db.batch([
    db.select().from(companies).where(eq(companies.id, companyId)).limit(1),
    db.select().from(companySettings).where(eq(companySettings.companyId, companyId)).limit(1),
    db
      .select()
      .from(certificates)
      .where(and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED")))
      .limit(1),
    db.selectDistinct({ type: cafs.documentType }).from(cafs).where(and(eq(cafs.companyId, companyId), eq(cafs.active, true))),
  ]);
  return company ? { company, settings, certificate, cafTypes: cafRows.map((r) => r.type) } : null;
}
