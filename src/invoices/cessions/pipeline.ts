/**
 * A cession's steps on the issuance queue (`cession` messages): a SIGNED cession's file is uploaded to
 * the register (SENT, with its track id), a SENT one is asked for its state until the register's
 * final answer: REGISTERED (`invoice.ceded`) or REJECTED (`cession.rejected`, with the register's
 * reason). An upload the register refuses for good, or a company gone or without a usable
 * certificate, ends FAILED (`cession.rejected`). The register unreachable: the message retries with
 * backoff. Each change is one conditional UPDATE with its event in the same store batch.
 */
import { and, eq } from "drizzle-orm";
import { envForCompany } from "../../config";
import { issuingCountry } from "../../countries/index";
import { AuthorityError, type CessionAuthority } from "../../countries/port";
import type { Db } from "../../storage/db/client";
import { ordinalOfId, partitionFor, UnknownPartitionError } from "../../storage/db/document-store";
import { cessions, eventOutbox } from "../../storage/db/schema";
import { backoffSeconds } from "../../lib/backoff";
import { describeError, log } from "../../lib/log";
import { enqueueCession, type CessionMessage } from "./messages";
import { signerOf, siiAccess, type SiiAccess } from "../../accounts/certificates/sii-access";
import { cessionView, type CessionRow } from "./view";

export type CessionWork = { msg: Message<unknown>; body: CessionMessage };

/** Polls stop after this many (the register answers within hours; past it the cession FAILS and says so). */
export const MAX_CESSION_POLLS = 200;

/** Delay before the next status read: at once for the simulator's first reads, then backing off to 5 minutes. */
export function cessionPollDelay(polls: number, simulated: boolean): number {
  if (simulated && polls < 8) return 0;
  return polls < 3 ? 2 : Math.min(300, 2 ** (polls - 1));
}

type Patch = Partial<Pick<CessionRow, "status" | "fiscalStatus" | "fiscalMessage" | "trackId" | "polls" | "lastError" | "registeredAt">>;

/** Moves a cession from the state it was read in; with `event`, the event of the new state in the same batch (once per state). */
async function move(db: Db, row: CessionRow, patch: Patch, event?: "invoice.ceded" | "cession.rejected"): Promise<boolean> {
  const at = new Date().toISOString();
  const next = { ...row, ...patch, updatedAt: at };
  const update = db.update(cessions).set({ ...patch, updatedAt: at }).where(and(eq(cessions.id, row.id), eq(cessions.status, row.status), eq(cessions.polls, row.polls))).returning({ id: cessions.id });
  if (!event) return (await update).length > 0;
  const insert = db.insert(eventOutbox).values({ id: `evt_${crypto.randomUUID().replace(/-/g, "")}`, companyId: row.companyId, type: event, dedupeKey: `cession:${row.id}:${next.status}`, payload: JSON.stringify(cessionView(next)), createdAt: at }).onConflictDoNothing();
  const [moved] = await db.batch([update, insert]);
  return moved.length > 0;
}

async function upload(env: Env, db: Db, row: CessionRow, authority: CessionAuthority, access: SiiAccess, signer: Parameters<CessionAuthority["upload"]>[0]["signer"], simulated: boolean): Promise<void> {
  const object = await env.FILES.get(row.xmlKey);
  if (!object) {
    await move(db, row, { status: "FAILED", lastError: "The cession's file is missing from storage; make the cession again." }, "cession.rejected");
    return;
  }
  const cedent = JSON.parse(row.cedent) as { email: string };
  try {
    const { trackId } = await authority.upload({ xml: new Uint8Array(await object.arrayBuffer()), companyRut: access.company!.taxId, signer, fileName: row.xmlKey.split("/").pop()!, notifyEmail: cedent.email });
    if (await move(db, row, { status: "SENT", trackId, lastError: null })) await enqueueCession(env, { cessionId: row.id, companyId: row.companyId }, cessionPollDelay(0, simulated));
  } catch (e) {
    if (e instanceof AuthorityError && !e.retryable) {
      await move(db, row, { status: "FAILED", fiscalStatus: e.fiscalStatus ?? null, lastError: `The register refused the upload: ${e.message}` }, "cession.rejected");
      return;
    }
    await move(db, row, { lastError: describeError(e).slice(0, 500) });
    throw e;
  }
}

async function poll(env: Env, db: Db, row: CessionRow, authority: CessionAuthority, companyRut: string, signer: Parameters<CessionAuthority["poll"]>[0]["signer"], simulated: boolean): Promise<void> {
  const verdict = await authority.poll({ trackId: row.trackId!, companyRut, signer });
  if (!verdict.final) {
    if (row.polls + 1 >= MAX_CESSION_POLLS) {
      await move(db, row, { status: "FAILED", polls: row.polls + 1, fiscalStatus: verdict.fiscalStatus, lastError: `The register gave no final answer after ${MAX_CESSION_POLLS} reads (last: ${verdict.message}); check track ${row.trackId} with the SII.` }, "cession.rejected");
      return;
    }
    if (await move(db, row, { polls: row.polls + 1, fiscalStatus: verdict.fiscalStatus, fiscalMessage: verdict.message })) await enqueueCession(env, { cessionId: row.id, companyId: row.companyId }, cessionPollDelay(row.polls + 1, simulated));
    return;
  }
  const patch: Patch = { polls: row.polls + 1, fiscalStatus: verdict.fiscalStatus, fiscalMessage: verdict.message, lastError: null };
  if (verdict.registered) await move(db, row, { ...patch, status: "REGISTERED", registeredAt: new Date().toISOString() }, "invoice.ceded");
  else await move(db, row, { ...patch, status: "REJECTED" }, "cession.rejected");
}

/** One message: the cession's next step, when it still has one. */
async function advance(env: Env, body: CessionMessage, accesses: Map<string, SiiAccess>): Promise<void> {
  const ordinal = ordinalOfId(body.cession_id);
  if (ordinal === null) return;
  let db: Db;
  try {
    db = (await partitionFor(env, body.company_id, ordinal)).db;
  } catch (e) {
    if (e instanceof UnknownPartitionError) return;
    throw e;
  }
  const [row] = await db.select().from(cessions).where(and(eq(cessions.companyId, body.company_id), eq(cessions.id, body.cession_id))).limit(1);
  if (!row || (row.status !== "SIGNED" && row.status !== "SENT")) return;
  let access = accesses.get(body.company_id);
  if (!access) accesses.set(body.company_id, (access = await siiAccess(env, body.company_id)));
  if (!access.company) {
    await move(db, row, { status: "FAILED", lastError: "The company is no longer active." }, "cession.rejected");
    return;
  }
  const signer = await signerOf(env, access, body.company_id);
  if (signer instanceof Error) {
    await move(db, row, { status: "FAILED", lastError: `No usable certificate: ${signer.message}` }, "cession.rejected");
    return;
  }
  const companyEnv = envForCompany(env, access.company);
  const authority = issuingCountry().cessions!.authority(companyEnv);
  const simulated = companyEnv.SII_MODE !== "certification" && companyEnv.SII_MODE !== "production";
  if (row.status === "SIGNED") await upload(env, db, row, authority, access, signer, simulated);
  else await poll(env, db, row, authority, access.company.taxId, signer, simulated);
}

/** The batch's cession messages, one after another (a company's access read once). */
export async function advanceCessions(env: Env, work: CessionWork[]): Promise<void> {
  const accesses = new Map<string, SiiAccess>();
  for (const w of work) {
    try {
      await advance(env, w.body, accesses);
      w.msg.ack();
    } catch (e) {
      log("warn", "cession step failed; retrying", { cession: w.body.cession_id, error: describeError(e) });
      w.msg.retry({ delaySeconds: backoffSeconds(w.msg.attempts) });
    }
  }
}
