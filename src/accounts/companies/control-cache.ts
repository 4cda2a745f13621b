/**
 * The per-isolate cache of a company's control-plane rows that every document step reads again
 * (docs/capacity.md "Per document, measured"): the company row and its settings, the active
 * certificate, whether a CAF is loaded for a type. Same mechanism as the key and company lookup
 * (src/accounts/access/cache.ts, src/lib/isolate-cache.ts): a company's entry lives CONTROL_CACHE_MS,
 * and every part read while it lives goes with it, so nothing served is older than that.
 *
 * A miss asks the company's control directory object (src/storage/db/control-directory.ts), not D1: the
 * object reads D1 only when it does not hold the data (one batch of 4 statements).
 *
 * Every write to one of those rows (certificate uploaded, activated or deleted, CAF stored or
 * dropped, settings or logo changed, company deleted) calls `companyControlChanged` after its D1
 * commit, which drops the company's entry in this isolate and in the directory object at once; other
 * isolates see the change when their entry expires: a deleted or replaced certificate can still sign
 * for up to CONTROL_CACHE_MS in isolates that read it before (docs/architecture.md, "Caches"). An expired
 * certificate is never used: its dates are checked on every use. Absence is never cached (a
 * certificate or CAF just loaded works at once everywhere), and neither is a failed read. Folios do
 * not come from here: the folio allocator numbers documents.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { cafs, certificates, companies, companySettings } from "../../storage/db/schema";
import { IsolateCache } from "../../lib/isolate-cache";
import { companyEntry, directory, forgetInDirectory, type DirectoryEnv } from "../../storage/db/control-directory";
import type { CompanyRow } from "./repository";
import type { SettingsRow } from "./settings";

type CertificateRow = typeof certificates.$inferSelect;

export const CONTROL_CACHE_MS = 60_000;

const byCompany = new IsolateCache<Map<string, { value: unknown }>>(CONTROL_CACHE_MS);

/**
 * `part` of `companyId`'s control rows, from this isolate's cache or from `load` (awaited once:
 * a Drizzle query is a thenable that would run again on every await). A value `keep` refuses
 * (an absence) is handed out but not kept. Only a value already read is shared between requests,
 * never a read in flight: a promise made by one request can never settle in another once the first
 * has ended (workerd refuses it, and the second request failed with a 500; chaos seed 7741), so
 * requests arriving together each ask (the directory object answers them from one D1 read).
 */
export async function cachedControl<T>(companyId: string, part: string, at: number, load: () => PromiseLike<T>, keep: (value: T) => boolean = () => true): Promise<T> {
  const hit = byCompany.get(companyId, at)?.get(part);
  if (hit) return hit.value as T;
  const generation = byCompany.generation;
  const value = await load();
  // A change forgotten while it was read (companyControlChanged) may have made it stale: not kept.
  if (keep(value) && byCompany.generation === generation) (byCompany.get(companyId, at) ?? byCompany.set(companyId, new Map(), at)).set(part, { value });
  return value;
}

/** Drops everything cached of the company in this isolate only (a new isolate's state: tests, the capacity bench). */
export function forgetCompanyControl(companyId: string): void {
  byCompany.delete(companyId);
}

/** After a D1 write to the company's control rows: drops them in this isolate and in the company's directory object. */
export async function companyControlChanged(env: DirectoryEnv, companyId: string): Promise<void> {
  forgetCompanyControl(companyId);
  await forgetInDirectory(env, [companyEntry(companyId)]);
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
 * certificate, the types it has an active CAF for), from the company's directory object on a miss;
 * null when the company does not exist. Shared by the POST and the pipeline's steps. Kept only while
 * the company has an active certificate, so a certificate uploaded anywhere is used at once; `fresh`
 * reads again whatever is cached, here and in the object, which reads D1 (a caller that found
 * something missing: absence is never trusted from a cache).
 */
export function companyControl(env: DirectoryEnv, companyId: string, at: number, fresh = false): Promise<CompanyControl | null> {
  if (fresh) byCompany.get(companyId, at)?.delete("company");
  return cachedControl(companyId, "company", at, () => directory(env, companyEntry(companyId)).control(companyId, fresh), (found) => found?.certificate !== undefined);
}

/** The company's control data read from D1 (one batch of 4 independent reads): the directory object's fill. */
export async function readCompanyControl(db: Db, companyId: string): Promise<CompanyControl | null> {
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
