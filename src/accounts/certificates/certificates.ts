import { and, desc, eq, ne } from "drizzle-orm";
import { issuingCountry } from "../../countries";
import { CertificateRefusal, type CertificateRefusalReason, type Credentials } from "../../countries/port";
import { base64ToBytes, bytesToBase64 } from "../../lib/base64";
import type { Db } from "../../storage/db/client";
import { certificates, eventOutbox } from "../../storage/db/schema";
import type { ErrorCode } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { open, seal } from "../../lib/secrets";
import { sealedAs } from "../../storage/sealed";
import { r2Keys } from "../../storage/keys";
import { AppError } from "../../lib/errors";
import { companyControlChanged } from "../companies/control-cache";
import { companyEntry, holdInDirectory, type DirectoryEnv } from "../../storage/db/control-directory";

export type CertificateRow = typeof certificates.$inferSelect;

const REFUSAL_CODES: Record<CertificateRefusalReason, ErrorCode> = {
  NOT_PFX: "CERTIFICATE_NOT_PFX",
  WRONG_PASSWORD: "CERTIFICATE_WRONG_PASSWORD",
  TOO_COSTLY: "CERTIFICATE_PFX_TOO_COSTLY",
  NO_PRIVATE_KEY: "CERTIFICATE_NO_PRIVATE_KEY",
  NO_CERTIFICATE: "CERTIFICATE_NO_CERTIFICATE",
  KEY_MISMATCH: "CERTIFICATE_KEY_MISMATCH",
  NO_TAX_ID: "CERTIFICATE_NO_RUT",
};

export type CertificateValidity = "VALID" | "EXPIRED" | "NOT_YET_VALID";

export function validityOf(row: Pick<CertificateRow, "validFrom" | "validTo">, now = new Date()): CertificateValidity {
  if (now.getTime() < Date.parse(row.validFrom)) return "NOT_YET_VALID";
  if (now.getTime() > Date.parse(row.validTo)) return "EXPIRED";
  return "VALID";
}

/**
 * Stores a .pfx: opens it (legacy or modern encryption), picks the key matching the certificate,
 * checks its dates and that it carries the holder's RUT, then keeps the
 * file and its password encrypted at rest. A valid new certificate becomes the active one.
 */
export async function uploadCertificate(db: Db, env: Env, companyId: string, file: Uint8Array, password: string, now = new Date()): Promise<CertificateRow> {
  let opened;
  try {
    opened = await issuingCountry().certificates.read(file, password);
  } catch (e) {
    if (e instanceof CertificateRefusal) {
      throw new AppError(REFUSAL_CODES[e.reason], e.message, [{ field: e.reason === "WRONG_PASSWORD" ? "password" : "certificate", message: e.message }]);
    }
    throw e;
  }
  const validity = validityOf({ validFrom: opened.notBefore.toISOString(), validTo: opened.notAfter.toISOString() }, now);
  if (validity === "EXPIRED") {
    throw new AppError("CERTIFICATE_EXPIRED", `The certificate expired on ${opened.notAfter.toISOString()}.`, [{ field: "certificate", message: "Expired" }]);
  }
  if (validity === "NOT_YET_VALID") {
    throw new AppError("CERTIFICATE_NOT_YET_VALID", `The certificate is valid only from ${opened.notBefore.toISOString()}.`, [{ field: "certificate", message: "Not valid yet" }]);
  }
  // The SII (and its simulator) authenticates the holder by this RUT and requires it as RutEnvia:
  // a certificate without it could sign but never send. Test and self-signed issuers are fine
  // in simulator mode (DECISIONS 19); the holder's RUT is needed everywhere.
  if (!opened.holderTaxId && opened.holderTaxIdText) {
    throw new AppError("CERTIFICATE_RUT_INVALID", `The certificate's holder RUT "${opened.holderTaxIdText}" is not a valid RUT (wrong check digit or form); the SII would refuse it as sender.`, [
      { field: "certificate", message: `Invalid holder RUT ${opened.holderTaxIdText}` },
    ]);
  }
  if (!opened.holderTaxId) {
    throw new AppError("CERTIFICATE_NO_RUT", "The certificate carries no holder RUT (SAN otherName 1.3.6.1.4.1.8321.1); the SII authenticates the sender by it, so nothing could be sent.", [
      { field: "certificate", message: "No holder RUT" },
    ]);
  }
  const existing = await db.query.certificates.findFirst({
    where: and(eq(certificates.companyId, companyId), eq(certificates.fingerprintSha1, opened.fingerprintSha1), eq(certificates.status, "STORED")),
  });
  if (existing) throw new AppError("CERTIFICATE_DUPLICATE", `This certificate is already stored as ${existing.id}.`);

  const id = newId("cer");
  const pfxKey = r2Keys.certificate(companyId, id);
  await env.FILES.put(pfxKey, await seal(env.MASTER_KEY!, file, sealedAs.certificatePfx(id)), { httpMetadata: { contentType: "application/octet-stream" } });
  const row: CertificateRow = {
    id,
    companyId,
    subjectName: opened.subjectName,
    holderRut: opened.holderTaxId,
    issuerName: opened.issuerName,
    serialNumber: opened.serialNumber,
    fingerprintSha1: opened.fingerprintSha1,
    validFrom: opened.notBefore.toISOString(),
    validTo: opened.notAfter.toISOString(),
    pfxKey,
    passwordEnc: bytesToBase64(await seal(env.MASTER_KEY!, new TextEncoder().encode(password), sealedAs.certificatePassword(id))),
    active: true,
    status: "STORED",
    createdAt: now.toISOString(),
    deletedAt: null,
  };
  await db.batch([
    db.update(certificates).set({ active: false }).where(and(eq(certificates.companyId, companyId), eq(certificates.active, true))),
    db.insert(certificates).values(row),
  ]);
  await companyControlChanged(env, companyId);
  return row;
}

export async function listCertificates(db: Db, companyId: string): Promise<CertificateRow[]> {
  return db
    .select()
    .from(certificates)
    .where(and(eq(certificates.companyId, companyId), eq(certificates.status, "STORED")))
    .orderBy(desc(certificates.createdAt), desc(certificates.id));
}

export async function getCertificate(db: Db, companyId: string, id: string): Promise<CertificateRow> {
  const row = await db.query.certificates.findFirst({
    where: and(eq(certificates.id, id), eq(certificates.companyId, companyId), eq(certificates.status, "STORED")),
  });
  if (!row) throw new AppError("CERTIFICATE_NOT_FOUND", `Certificate ${id} does not exist for this company.`);
  return row;
}

export async function activateCertificate(db: Db, env: DirectoryEnv, companyId: string, id: string, now = new Date()): Promise<CertificateRow> {
  const row = await getCertificate(db, companyId, id);
  const validity = validityOf(row, now);
  if (validity === "EXPIRED") throw new AppError("CERTIFICATE_EXPIRED", `Certificate ${id} expired on ${row.validTo}; it cannot be the active one.`);
  if (validity === "NOT_YET_VALID") throw new AppError("CERTIFICATE_NOT_YET_VALID", `Certificate ${id} is valid only from ${row.validFrom}.`);
  await db.batch([
    db.update(certificates).set({ active: false }).where(and(eq(certificates.companyId, companyId), ne(certificates.id, id))),
    db.update(certificates).set({ active: true }).where(eq(certificates.id, id)),
  ]);
  await companyControlChanged(env, companyId);
  return { ...row, active: true };
}

/** Removes the key material (R2 object) and marks the record deleted; the metadata is kept. */
export async function deleteCertificate(db: Db, env: Env, companyId: string, id: string, now = new Date()): Promise<CertificateRow> {
  const row = await getCertificate(db, companyId, id);
  await holdInDirectory(env, [companyEntry(companyId)]);
  await db.update(certificates).set({ status: "DELETED", active: false, deletedAt: now.toISOString() }).where(eq(certificates.id, id));
  await companyControlChanged(env, companyId);
  await env.FILES.delete(row.pfxKey);
  return { ...row, status: "DELETED", active: false, deletedAt: now.toISOString() };
}

/**
 * The credentials every signature uses. Issuance calls this first: without an active, current
 * certificate nothing is signed and no folio is taken (§1.7).
 */
export async function requireSigningCredentials(db: Db, env: Env, companyId: string, now = new Date()): Promise<Credentials & { certificateId: string }> {
  const row = await activeCertificate(db, companyId);
  if (!row) throw noActiveCertificate();
  return signingCredentialsOf(env, row, now);
}

/** Why requireSigningCredentials would refuse, read from the company's control data without opening the .pfx; null when it has an active, current certificate. */
export async function certificateProblem(db: Db, companyId: string, now = new Date()): Promise<AppError | null> {
  const row = await activeCertificate(db, companyId);
  return row ? validityProblem(row, now) : noActiveCertificate();
}

const activeCertificate = (db: Db, companyId: string) =>
  db.query.certificates.findFirst({ where: and(eq(certificates.companyId, companyId), eq(certificates.active, true), eq(certificates.status, "STORED")) });

const noActiveCertificate = () => new AppError("CERTIFICATE_REQUIRED", "The company has no active signing certificate: upload a .pfx to /certificates first.");

function validityProblem(row: CertificateRow, now: Date): AppError | null {
  const validity = validityOf(row, now);
  if (validity === "VALID") return null;
  return new AppError(
    "CERTIFICATE_REQUIRED",
    validity === "EXPIRED" ? `The active certificate ${row.id} expired on ${row.validTo}: upload a current one.` : `The active certificate ${row.id} is valid only from ${row.validFrom}.`,
  );
}

/** The credentials of a certificate row already read (the company's control data): refused unless current; its .pfx is opened from R2. */
export async function signingCredentialsOf(env: Env, row: CertificateRow, now = new Date()): Promise<Credentials & { certificateId: string }> {
  const problem = validityProblem(row, now);
  if (problem) throw problem;
  const object = await env.FILES.get(row.pfxKey);
  if (!object) throw new Error(`certificate file ${row.pfxKey} missing from R2`);
  const pfx = await open(env.MASTER_KEY!, new Uint8Array(await object.arrayBuffer()), sealedAs.certificatePfx(row.id));
  const password = new TextDecoder().decode(await open(env.MASTER_KEY!, base64ToBytes(row.passwordEnc), sealedAs.certificatePassword(row.id)));
  return { ...(await issuingCountry().certificates.open(pfx, password)), certificateId: row.id };
}

export const EXPIRY_WARNING_DAYS = [30, 15, 7] as const;

/**
 * Records a `certificate.expiring` event (once per threshold) for active certificates that expire
 * within 30, 15 or 7 days. Run by the cron trigger. Returns the companies that got a new event.
 */
export async function recordCertificateExpiryEvents(db: Db, now = new Date()): Promise<string[]> {
  const active = await db.select().from(certificates).where(and(eq(certificates.active, true), eq(certificates.status, "STORED")));
  const recorded: string[] = [];
  for (const row of active) {
    const daysLeft = (Date.parse(row.validTo) - now.getTime()) / 86_400_000;
    const threshold = [...EXPIRY_WARNING_DAYS].reverse().find((d) => daysLeft <= d);
    if (threshold === undefined || daysLeft < 0) continue;
    const inserted = await db
      .insert(eventOutbox)
      .values({
        id: newId("evt"),
        companyId: row.companyId,
        type: "certificate.expiring",
        dedupeKey: `CERTIFICATE_EXPIRING:${row.id}:${threshold}`,
        payload: JSON.stringify({
          certificate_id: row.id,
          valid_to: row.validTo,
          days_left: Math.floor(daysLeft),
          threshold_days: threshold,
        }),
        createdAt: now.toISOString(),
      })
      .onConflictDoNothing()
      .returning({ id: eventOutbox.id });
    if (inserted.length > 0) recorded.push(row.companyId);
  }
  return recorded;
}
