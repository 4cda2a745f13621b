import { and, asc, eq } from "drizzle-orm";
import { issuingCountry } from "../countries";
import { envForCompany, envForMode } from "../config";
import type { Db } from "../storage/db/client";
import { cafs } from "../storage/db/schema";
import { folioAllocatorFor, type FolioStatus } from "./allocator-api";
import { AuthorityError, type DocumentType, type NumberRange, type TaxAuthority } from "../countries/port";
import { newId } from "../lib/ids";
import { endOfLocalDay, toLocalDateTime } from "../lib/time";
import { storeCafFile } from "./caf-files";
import type { CompanyRow } from "../accounts/companies/repository";
import { AppError } from "../lib/errors";
import { companyControlChanged } from "../accounts/companies/control-cache";
import { assertRangeFree, loserOfRace, type RangeClaim } from "./caf-ownership";

export type CafRow = typeof cafs.$inferSelect;

export function resolveEnumerationType(input: string): DocumentType {
  const documents = issuingCountry().documents;
  const type = documents.findType(input);
  if (!type) {
    throw new AppError("ENUMERATION_DOCUMENT_TYPE_UNKNOWN", `Unknown document type ${input}: use an SII code (${documents.types.map((t) => t.code).join(", ")}) or its mnemonic.`, [
      { field: "document_type_id", message: "Unknown document type" },
    ]);
  }
  return type;
}

export function allocator(env: Env, companyId: string, documentType: number) {
  return folioAllocatorFor(env.FOLIO_ALLOCATOR, companyId, String(documentType));
}

/**
 * Loads a CAF file: verifies it (SII signature by its IDK, key pair), checks it belongs to the
 * company, is for a document type we issue, fits the configured SII environment, is not expired
 * and overlaps no loaded range; stores the file in R2, gives the range to the folio allocator (the
 * authority on folio usage) and records it for listing.
 */
export async function loadCaf(db: Db, workerEnv: Env, company: CompanyRow, file: Uint8Array, source: CafRow["source"], now = new Date()): Promise<CafRow> {
  // Test-mode companies trust the simulated SII's key (and only they); live ones the SII of SII_MODE.
  const env = envForMode(workerEnv, company.livemode);
  const caf = await acceptableCaf(env, company, file, now);
  await assertNotLoaded(db, company.id, caf);
  const claim: RangeClaim = { companyId: company.id, livemode: company.livemode, rut: caf.issuerRut, documentType: caf.documentType, from: caf.from, to: caf.to };
  await assertRangeFree(db, claim);

  const id = newId("caf");
  const fileKey = await storeCafFile(env, company.id, caf.documentType, id, file);
  await giveRangeToAllocator(env, company.id, caf, id, fileKey);
  const row: CafRow = {
    id,
    companyId: company.id,
    documentType: caf.documentType,
    folioFrom: caf.from,
    folioTo: caf.to,
    authorizedOn: caf.authorizedOn,
    expiresOn: caf.expiresOn,
    idk: caf.keyId,
    environment: caf.environment,
    source,
    fileKey,
    active: true,
    createdAt: now.toISOString(),
  };
  await recordCafRow(db, env, claim, row);
  return row;
}

/** The verified CAF of `file` when it may be loaded for `company` now: its SII environment, issuer, document type and expiry. */
async function acceptableCaf(env: Env, company: CompanyRow, file: Uint8Array, now: Date): Promise<NumberRange> {
  const country = issuingCountry();
  let caf: NumberRange;
  try {
    caf = await country.numberRanges.parse(file, { simulated: env.SII_MODE === "simulator" });
  } catch (e) {
    if (country.documents.isRefusal(e)) throw new AppError("ENUMERATION_CAF_INVALID", `Not a valid CAF: ${e.message}`, [{ field: "file", message: e.code }]);
    throw e;
  }
  if (env.SII_MODE !== "simulator" && caf.environment !== env.SII_MODE) {
    throw new AppError(
      "ENUMERATION_CAF_WRONG_ENVIRONMENT",
      `This CAF was authorised for the SII ${caf.environment} environment (IDK ${caf.keyId}); live mode of this service talks to the SII ${env.SII_MODE} environment.`,
    );
  }
  if (company.country !== country.alpha3 || caf.issuerRut !== company.taxId) {
    throw new AppError("ENUMERATION_CAF_WRONG_COMPANY", `The CAF authorises folios of RUT ${caf.issuerRut}, not of this company (${company.taxId}).`, [
      { field: "file", message: "Another issuer's CAF" },
    ]);
  }
  const type = country.documents.findType(caf.documentType);
  if (!type) {
    throw new AppError("ENUMERATION_CAF_UNKNOWN_TYPE", `The CAF is for document type ${caf.documentType}, which this service does not issue.`);
  }
  const today = toLocalDateTime(now, "America/Santiago").slice(0, 10);
  if (caf.expiresOn && caf.expiresOn < today) {
    throw new AppError("ENUMERATION_CAF_INVALID", `Not a valid CAF: its folios expired on ${caf.expiresOn} (6 months after authorisation on ${caf.authorizedOn}).`, [
      { field: "file", message: "CAF_EXPIRED" },
    ]);
  }
  return caf;
}

/** Refuses a range the company already has loaded for the type, or one that overlaps a loaded range. */
async function assertNotLoaded(db: Db, companyId: string, caf: NumberRange): Promise<void> {
  const loaded = await db.select().from(cafs).where(and(eq(cafs.companyId, companyId), eq(cafs.documentType, caf.documentType)));
  const same = loaded.find((r) => r.folioFrom === caf.from && r.folioTo === caf.to);
  if (same) throw new AppError("ENUMERATION_CAF_DUPLICATE", `Folios ${caf.from}-${caf.to} of type ${caf.documentType} are already loaded (${same.id}).`);
  const overlap = loaded.find((r) => r.folioFrom <= caf.to && r.folioTo >= caf.from);
  if (overlap) {
    throw new AppError("ENUMERATION_CAF_OVERLAP", `Folios ${caf.from}-${caf.to} overlap the loaded range ${overlap.folioFrom}-${overlap.folioTo} (${overlap.id}).`);
  }
}

/** Hands the range to the folio allocator; when it refuses, the stored file is deleted and the refusal thrown. */
async function giveRangeToAllocator(env: Env, companyId: string, caf: NumberRange, id: string, fileKey: string): Promise<void> {
  const added = await allocator(env, companyId, caf.documentType).addRange({
    cafId: id,
    from: caf.from,
    to: caf.to,
    authorizedAt: caf.authorizedOn,
    // expiresOn is the last day the folios may be stamped, in Chilean time.
    expiresAt: caf.expiresOn ? endOfLocalDay(caf.expiresOn, "America/Santiago") : null,
  });
  if (!added.ok) {
    await env.FILES.delete(fileKey);
    throw new AppError(added.code === "FOLIO_RANGE_OVERLAP" ? "ENUMERATION_CAF_OVERLAP" : added.code === "FOLIO_RANGE_DUPLICATE" ? "ENUMERATION_CAF_DUPLICATE" : "ENUMERATION_CAF_INVALID", added.message);
  }
}

/**
 * Records the loaded range for listing. When that fails, or a concurrent upload of the same range in
 * another account recorded its row first, the range is taken out of use again (and the loser's row
 * and file deleted).
 */
async function recordCafRow(db: Db, env: Env, claim: RangeClaim, row: CafRow): Promise<void> {
  try {
    await db.insert(cafs).values(row);
  } catch (e) {
    // Keep the allocator and the read model in step: a range the list cannot show is not used.
    await allocator(env, row.companyId, row.documentType).deactivateRange(row.id);
    throw e;
  }
  const lost = await loserOfRace(db, claim, row);
  if (lost) {
    // A concurrent upload of the same range in another account recorded its row first.
    await allocator(env, row.companyId, row.documentType).deactivateRange(row.id);
    await db.delete(cafs).where(eq(cafs.id, row.id));
    await companyControlChanged(env, row.companyId);
    await env.FILES.delete(row.fileKey);
    throw lost;
  }
  // The company's CAF types changed: the isolate and the directory object read them again.
  await companyControlChanged(env, row.companyId);
}

/** CAF of the tax authority (§4.7 refetch): the simulator grants it; the real SII cannot from here. */
export async function refetchCaf(db: Db, workerEnv: Env, company: CompanyRow, input: { document_type: string; quantity: number }, now = new Date()): Promise<CafRow> {
  const env = envForCompany(workerEnv, company);
  const type = resolveEnumerationType(input.document_type);
  if (env.SII_MODE !== "simulator") {
    throw new AppError(
      "ENUMERATION_REFETCH_NOT_SUPPORTED",
      "The SII hands out CAF files only in its web portal, behind a session authenticated with the taxpayer's certificate (mutual TLS); a Worker cannot present a per-company client certificate. Download the CAF at sii.cl and upload it to /enumeration/upload.",
    );
  }
  if (company.country !== issuingCountry().alpha3) throw new AppError("ENUMERATION_CAF_WRONG_COMPANY", "Only Chilean companies get folios from the SII.");
  // The next `quantity` folios of the RUT, as the SII's portal grants them: after every range it
  // granted this RUT before (another company with this RUT, a deleted one, the other account).
  const xml = await requestCafFromAuthority(env, { rut: company.taxId, documentType: type.code, legalName: company.legalName, quantity: input.quantity });
  return loadCaf(db, env, company, xml, "AUTHORITY", now);
}

/** The CAF request goes to the tax authority like any other call to it (the simulated SII's portal). */
async function requestCafFromAuthority(env: Env, request: Parameters<TaxAuthority["requestCaf"]>[0]): Promise<Uint8Array> {
  try {
    return await issuingCountry().authority(env).requestCaf(request);
  } catch (e) {
    if (!(e instanceof AuthorityError)) throw e;
    if (e.fiscalStatus === "409") {
      throw new AppError("SIMULATOR_CAF_OVERLAP", `The simulated SII already granted folios ${request.from}-${request.to} of type ${request.documentType} to ${request.rut} (for another company with this RUT); load that CAF or upload one for a later range.`);
    }
    throw new AppError("ENUMERATION_AUTHORITY_UNAVAILABLE", `The tax authority did not grant the CAF: ${e.message}`);
  }
}

export async function listCafs(db: Db, companyId: string): Promise<CafRow[]> {
  return db.select().from(cafs).where(eq(cafs.companyId, companyId)).orderBy(asc(cafs.documentType), asc(cafs.folioFrom));
}

/** One entry per document type with loaded ranges, merged with the allocator's live counts. */
export async function enumerationOverview(db: Db, env: Env, companyId: string) {
  const rows = await listCafs(db, companyId);
  const types = [...new Set(rows.map((r) => r.documentType))];
  const statuses = await Promise.all(types.map((t) => allocator(env, companyId, t).status()));
  return types.map((t, i) => enumerationView(t, rows.filter((r) => r.documentType === t), statuses[i]!));
}

export function enumerationView(documentType: number, rows: CafRow[], status: FolioStatus) {
  const live = new Map(status.ranges.map((r) => [r.caf_id, r]));
  return {
    id_document_type: String(documentType),
    document_type_name: issuingCountry().documents.findType(documentType)?.name ?? String(documentType),
    folios_available: status.total_available,
    next_folio: status.next_folio_to_use,
    alert_threshold: status.threshold,
    alert_threshold_is_default: status.threshold_is_default,
    expired_unused: status.expired_unused,
    ranges: rows.map((r) => {
      const s = live.get(r.id);
      return {
        id: r.id,
        enumeration_from: r.folioFrom,
        enumeration_end: r.folioTo,
        active: s ? s.active : r.active,
        authorized_at: r.authorizedOn,
        expires_at: r.expiresOn,
        expired: s?.expired ?? false,
        available: s?.available ?? 0,
        next_folio: s?.next_folio ?? null,
        annulled: s?.annulled ?? 0,
        source: r.source,
        created_at: r.createdAt,
      };
    }),
  };
}

export async function setNextFolio(env: Env, companyId: string, documentTypeId: string, n: number) {
  const type = resolveEnumerationType(documentTypeId);
  const result = await allocator(env, companyId, type.code).setNextFolio(n);
  if (!result.ok) {
    const code = result.code === "FOLIO_NUMBER_INVALID" ? "VALIDATION_FAILED" : result.code;
    throw new AppError(code, result.message, code === "VALIDATION_FAILED" ? [{ field: "next_folio_number", message: result.message }] : []);
  }
  const { ok: _ok, ...body } = result;
  return body;
}

export async function setAlertThreshold(env: Env, companyId: string, documentTypeId: string, threshold: number | null) {
  const type = resolveEnumerationType(documentTypeId);
  const result = await allocator(env, companyId, type.code).setThreshold(threshold);
  if (!result.ok) throw new AppError("ENUMERATION_THRESHOLD_INVALID", result.message, [{ field: "alert_threshold", message: result.message }]);
  return { id_document_type: String(type.code), alert_threshold: result.threshold, alert_threshold_is_default: result.is_default };
}
