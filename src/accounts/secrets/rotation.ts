/**
 * Master key rotation: re-seals every stored secret under the current master key version (the first
 * entry of MASTER_KEY, src/lib/secrets.ts) and seals CAF files written before they were sealed.
 *
 * Walked in three phases (certificates: .pfx in R2 and password in D1; webhook endpoints: current
 * and previous secret; CAFs: the file in R2), each in id order, a page at a time. Progress is kept in
 * `key_rotations` (one row per target version), so a run that dies resumes where it stopped; every
 * value is checked before it is touched (a value already under the current key is left alone), so
 * running a step twice changes nothing. The cron runs one step every 5 minutes; `npm run keys:rotate`
 * runs steps until done.
 */
import { companyControlChanged } from "../companies/control-cache";
import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../../storage/db/client";
import { cafs, certificates, keyRotations, webhookEndpoints } from "../../storage/db/schema";
import { base64ToBytes, bytesToBase64 } from "../../lib/base64";
import { currentKeyVersion, needsResealing, reseal, seal } from "../../lib/secrets";
import { r2Keys } from "../../storage/keys";
import { sealedAs } from "../../storage/sealed";
import { isSealedCafKey } from "../../folios/caf-files";

type Phase = (typeof keyRotations.$inferSelect)["phase"];
const NEXT: Record<Exclude<Phase, "done">, Phase> = { certificates: "webhooks", webhooks: "cafs", cafs: "done" };

export interface RotationStep {
  version: number;
  phase: Phase;
  /** Values re-sealed by this step. */
  resealed: number;
  done: boolean;
}

/** One page of the current phase: re-seals what needs it and records where it stopped. */
export async function rotationStep(db: Db, env: Env, pageSize = 50, now = new Date()): Promise<RotationStep> {
  const version = currentKeyVersion(env.MASTER_KEY!);
  await db.insert(keyRotations).values({ version, startedAt: now.toISOString() }).onConflictDoNothing();
  const state = (await db.query.keyRotations.findFirst({ where: eq(keyRotations.version, version) }))!;
  if (state.phase === "done") return { version, phase: "done", resealed: 0, done: true };
  const { resealed, last } = await PHASES[state.phase](db, env, state.cursor, pageSize);
  const finishedPhase = last === null;
  const phase = finishedPhase ? NEXT[state.phase] : state.phase;
  await db
    .update(keyRotations)
    .set({ phase, cursor: finishedPhase ? "" : last, resealed: state.resealed + resealed, finishedAt: phase === "done" ? now.toISOString() : null })
    // Only from the state read above: two concurrent runs do not move the cursor backwards.
    .where(and(eq(keyRotations.version, version), eq(keyRotations.phase, state.phase), eq(keyRotations.cursor, state.cursor)));
  return { version, phase, resealed, done: phase === "done" };
}

/** Steps until everything is under the current key; returns the values re-sealed in all. */
export async function rotateAll(db: Db, env: Env, pageSize = 50, onStep?: (s: RotationStep) => void): Promise<number> {
  let total = 0;
  for (;;) {
    const step = await rotationStep(db, env, pageSize);
    total += step.resealed;
    onStep?.(step);
    if (step.done) return total;
  }
}

type PhaseWork = (db: Db, env: Env, cursor: string, pageSize: number) => Promise<{ resealed: number; last: string | null }>;

/** A page of ids after the cursor; `last` is null when the table is exhausted. */
function page<T extends { id: string }>(rows: T[], pageSize: number) {
  return { rows, last: rows.length < pageSize ? null : rows[rows.length - 1]!.id };
}

const resealText = async (masterKey: string, value: string, ad: string) => bytesToBase64(await reseal(masterKey, base64ToBytes(value), ad));
const stale = (masterKey: string, value: string | null) => value !== null && needsResealing(masterKey, base64ToBytes(value));

/** R2 object re-sealed in place when it is under an older key. */
async function resealObject(env: Env, key: string, ad: string): Promise<boolean> {
  const object = await env.FILES.get(key);
  if (!object) return false;
  const bytes = new Uint8Array(await object.arrayBuffer());
  if (!needsResealing(env.MASTER_KEY!, bytes)) return false;
  await env.FILES.put(key, await reseal(env.MASTER_KEY!, bytes, ad), { httpMetadata: object.httpMetadata });
  return true;
}

const PHASES: Record<Exclude<Phase, "done">, PhaseWork> = {
  async certificates(db, env, cursor, pageSize) {
    const { rows, last } = page(await db.select().from(certificates).where(gt(certificates.id, cursor)).orderBy(asc(certificates.id)).limit(pageSize), pageSize);
    let resealed = 0;
    for (const row of rows) {
      if (await resealObject(env, row.pfxKey, sealedAs.certificatePfx(row.id))) resealed++;
      if (stale(env.MASTER_KEY!, row.passwordEnc)) {
        const next = await resealText(env.MASTER_KEY!, row.passwordEnc, sealedAs.certificatePassword(row.id));
        await db.update(certificates).set({ passwordEnc: next }).where(and(eq(certificates.id, row.id), eq(certificates.passwordEnc, row.passwordEnc)));
        // The control data holds the certificate row (its sealed password): read it again.
        await companyControlChanged(env, row.companyId);
        resealed++;
      }
    }
    return { resealed, last };
  },

  async webhooks(db, env, cursor, pageSize) {
    const { rows, last } = page(await db.select().from(webhookEndpoints).where(gt(webhookEndpoints.id, cursor)).orderBy(asc(webhookEndpoints.id)).limit(pageSize), pageSize);
    let resealed = 0;
    for (const row of rows) {
      const ad = sealedAs.webhookSecret(row.id);
      const patch: Partial<typeof row> = {};
      if (stale(env.MASTER_KEY!, row.secretEnc)) patch.secretEnc = await resealText(env.MASTER_KEY!, row.secretEnc, ad);
      if (stale(env.MASTER_KEY!, row.previousSecretEnc)) patch.previousSecretEnc = await resealText(env.MASTER_KEY!, row.previousSecretEnc!, ad);
      if (Object.keys(patch).length === 0) continue;
      // Compare-and-set: a secret rotated meanwhile is already under the current key.
      await db.update(webhookEndpoints).set(patch).where(and(eq(webhookEndpoints.id, row.id), eq(webhookEndpoints.secretEnc, row.secretEnc)));
      resealed += Object.keys(patch).length;
    }
    return { resealed, last };
  },

  async cafs(db, env, cursor, pageSize) {
    const { rows, last } = page(await db.select().from(cafs).where(gt(cafs.id, cursor)).orderBy(asc(cafs.id)).limit(pageSize), pageSize);
    let resealed = 0;
    for (const row of rows) {
      if (isSealedCafKey(row.fileKey)) {
        if (await resealObject(env, row.fileKey, sealedAs.caf(row.id))) resealed++;
        continue;
      }
      // A CAF stored plain before files were sealed: seal it under a new key, point the row at it,
      // then delete the plain object (a crash in between leaves the row on the plain one: redone).
      const plain = await env.FILES.get(row.fileKey);
      if (!plain) continue;
      const sealedKey = r2Keys.caf(row.companyId, row.documentType, row.id);
      await env.FILES.put(sealedKey, await seal(env.MASTER_KEY!, new Uint8Array(await plain.arrayBuffer()), sealedAs.caf(row.id)), { httpMetadata: { contentType: "application/octet-stream" } });
      await db.update(cafs).set({ fileKey: sealedKey }).where(eq(cafs.id, row.id));
      await companyControlChanged(env, row.companyId); // its directory object holds the CAF's file key
      await env.FILES.delete(row.fileKey);
      resealed++;
    }
    return { resealed, last };
  },
};
