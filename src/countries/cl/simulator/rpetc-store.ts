/**
 * D1 state of the simulated register of cessions (tables sim_aec_envios, sim_cessions): the uploaded
 * AEC files with their verdict, the cessions annotated, the register's view of a document for the
 * checks (./rpetc-check.ts), and the states an upload shows over polls or time.
 */
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../../storage/db/client";
import { simAecEnvios, simCessions, simDocuments, simEnvios, simReceptionEvents } from "../../../storage/db/schema/simulator";
import type { AecStatus, NewCession, RegisterView } from "./rpetc-check";
import type { ScenarioRow } from "./store";
import { STEP_MS } from "./store";

export type AecEnvioRow = typeof simAecEnvios.$inferSelect;
export type CessionRow = typeof simCessions.$inferSelect;

/** The register as the checks read it. */
export function registerView(db: Db): RegisterView {
  return {
    async document(k) {
      const row = await db
        .select({ receiverRut: simDocuments.receiverRut, issueDate: simDocuments.issueDate, total: simDocuments.total })
        .from(simDocuments)
        .innerJoin(simEnvios, eq(simEnvios.trackId, simDocuments.trackId))
        .where(and(eq(simDocuments.issuerRut, k.issuerRut), eq(simDocuments.documentType, k.type), eq(simDocuments.folio, k.folio), inArray(simDocuments.status, ["DOK", "RLV"]), eq(simEnvios.kind, "EnvioDTE")))
        .orderBy(desc(simDocuments.id))
        .get();
      return row ?? null;
    },
    async claimed(k) {
      const row = await db
        .select({ id: simReceptionEvents.id })
        .from(simReceptionEvents)
        .where(and(eq(simReceptionEvents.issuerRut, k.issuerRut), eq(simReceptionEvents.documentType, k.type), eq(simReceptionEvents.folio, k.folio), inArray(simReceptionEvents.action, ["RCD", "RFP", "RFT"])))
        .get();
      return !!row;
    },
    async cessions(k) {
      return db.select().from(simCessions).where(and(eq(simCessions.issuerRut, k.issuerRut), eq(simCessions.documentType, k.type), eq(simCessions.folio, k.folio))).orderBy(asc(simCessions.seq)).all();
    },
  };
}

/** The cessions of a document, in sequence. */
export function cessionsOf(db: Db, issuerRut: string, type: number, folio: number): Promise<CessionRow[]> {
  return registerView(db).cessions({ issuerRut, type, folio }) as Promise<CessionRow[]>;
}

/**
 * Records an upload and, when the register accepted it, its cession, in one batch. A cession whose
 * sequence number another upload took meanwhile makes the unique index fail: that upload is then
 * recorded as rejected (RCS), as the register does with a stale chain.
 */
export async function saveAecEnvio(
  db: Db,
  e: { companyRut: string; senderRut: string; sha256: string; size: number; now: Date; status: AecStatus; errors: string[]; cession: NewCession | null; scenario: ScenarioRow | undefined },
): Promise<number> {
  const delay = e.scenario?.mode === "delay" ? e.scenario : undefined;
  const row = (status: AecStatus, errors: string[]) => ({
    companyRut: e.companyRut, senderRut: e.senderRut, fileSha256: e.sha256, fileSize: e.size, receivedAt: e.now.toISOString(), finalStatus: status, errors: JSON.stringify(errors),
    holdPolls: delay?.delayPolls ?? 0, holdUntil: delay?.delaySeconds ? new Date(e.now.getTime() + delay.delaySeconds * 1000).toISOString() : null, scenario: e.scenario?.mode ?? null,
  });
  if (!e.cession) {
    const [r] = await db.insert(simAecEnvios).values(row(e.status, e.errors)).returning({ trackId: simAecEnvios.trackId });
    return r!.trackId;
  }
  const [r] = await db.insert(simAecEnvios).values(row("EOK", [])).returning({ trackId: simAecEnvios.trackId });
  const c = e.cession;
  try {
    await db.insert(simCessions).values({ trackId: r!.trackId, issuerRut: c.issuerRut, documentType: c.type, folio: c.folio, seq: c.seq, cedentRut: c.cedentRut, assigneeRut: c.assigneeRut, amount: c.amount, lastDueDate: c.lastDueDate, declaration: c.declaration, areaSha256: c.areaSha256, annotatedAt: e.now.toISOString() });
  } catch {
    await db.update(simAecEnvios).set({ finalStatus: "RCS", errors: JSON.stringify([`La cesion ${c.seq} de este documento ya fue anotada por otro envio`]) }).where(eq(simAecEnvios.trackId, r!.trackId));
  }
  return r!.trackId;
}

/** The states an upload goes through before its final one. */
export function aecStepsOf(finalStatus: string): string[] {
  const before: Record<string, string[]> = { RSC: ["RCP"], RFS: ["RCP", "SOK"], RCR: ["RCP", "SOK", "FSO"], RDC: ["RCP", "SOK", "FSO", "COK", "VDC"], RCS: ["RCP", "SOK", "FSO", "COK", "VDC", "VCS"] };
  return [...(before[finalStatus] ?? ["RCP", "SOK", "FSO", "COK", "VDC", "VCS"]), finalStatus];
}

/** The state shown after `polls` status calls (each advances a step, as time does every STEP_MS); a delay scenario holds it in RCP. */
export function visibleAecState(e: Pick<AecEnvioRow, "finalStatus" | "receivedAt" | "holdPolls" | "holdUntil">, polls: number, now: Date): string {
  const steps = aecStepsOf(e.finalStatus);
  const byTime = Math.floor((now.getTime() - Date.parse(e.receivedAt)) / STEP_MS);
  let i = Math.min(steps.length - 1, Math.max(polls * 2 - 1, byTime, 0));
  const held = (e.holdPolls > 0 && polls <= e.holdPolls) || (e.holdUntil !== null && now.getTime() < Date.parse(e.holdUntil));
  if (held) i = 0;
  return steps[i]!;
}

/** Counts one status poll of an upload sent by `senderRut` and returns it with its new count (undefined when there is none). */
export async function pollAecEnvio(db: Db, trackId: number, senderRut: string): Promise<AecEnvioRow | undefined> {
  const [row] = await db.update(simAecEnvios).set({ polls: sql`${simAecEnvios.polls} + 1` }).where(and(eq(simAecEnvios.trackId, trackId), eq(simAecEnvios.senderRut, senderRut))).returning();
  return row;
}

/** Whether the company is a DTE issuer at the register (it has sent documents), for the upload's STATUS 6. */
export async function isIssuer(db: Db, companyRut: string): Promise<boolean> {
  return !!(await db.select({ t: simEnvios.trackId }).from(simEnvios).where(eq(simEnvios.companyRut, companyRut)).limit(1).get());
}
