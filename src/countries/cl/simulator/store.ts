/**
 * D1 state of the simulator (tables sim_*, src/storage/db/schema/simulator.ts): seeds, tokens, envelopes and
 * their documents, scenarios; and the rule that reveals an envelope's verdict over polls or time.
 */
import { and, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../../../storage/db/client";
import { simDocuments, simEnvios, simScenarios, simSeeds, simTokens } from "../../../storage/db/schema/simulator";
import { documentKeyText, type DocumentKey, type DocumentVerdict, type EnvioVerdict, type TypeStats } from "./validate";

export type Channel = "soap" | "rest";

/** A seed is valid this long after CrSeed (the SII's 2 minutes). */
export const SEED_TTL_MS = 120_000;
/** Tokens issued by the simulator live one hour. */
export const TOKEN_TTL_MS = 3_600_000;
/** Without polls, an envelope advances one state every STEP_MS. */
export const STEP_MS = 5_000;

function digits(n: number): string {
  const b = crypto.getRandomValues(new Uint8Array(n));
  return [...b].map((x) => String(x % 10)).join("");
}
const TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
function tokenText(): string {
  const b = crypto.getRandomValues(new Uint8Array(13));
  return [...b].map((x) => TOKEN_ALPHABET[x % TOKEN_ALPHABET.length]).join("");
}

export async function newSeed(db: Db, channel: Channel, now: Date): Promise<string> {
  const seed = String(1 + Number(digits(1)) % 9) + digits(11);
  await db.insert(simSeeds).values({ seed, channel, createdAt: now.toISOString() });
  return seed;
}

export type SeedProblem = "unknown" | "used" | "expired";

/** Consumes a seed: returns null when fine, or why not. */
export async function consumeSeed(db: Db, seed: string, channel: Channel, now: Date): Promise<SeedProblem | null> {
  const row = await db.select().from(simSeeds).where(eq(simSeeds.seed, seed)).get();
  if (!row || row.channel !== channel) return "unknown";
  if (row.usedAt) return "used";
  if (now.getTime() - Date.parse(row.createdAt) > SEED_TTL_MS) return "expired";
  await db.update(simSeeds).set({ usedAt: now.toISOString() }).where(eq(simSeeds.seed, seed));
  return null;
}

export async function issueToken(db: Db, channel: Channel, rut: string, fingerprint: string, now: Date): Promise<string> {
  const token = tokenText();
  await db.insert(simTokens).values({ token, channel, rut, certFingerprint: fingerprint, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + TOKEN_TTL_MS).toISOString() });
  return token;
}

export type TokenCheck = { ok: true; rut: string } | { ok: false; problem: "missing" | "unknown" | "expired" };

export type TokenRow = typeof simTokens.$inferSelect;

/** The token's row (for a batch); check it with tokenVerdict. */
export function tokenQuery(db: Db, token: string) {
  return db.select().from(simTokens).where(eq(simTokens.token, token)).limit(1);
}

export function tokenVerdict(token: string | undefined, row: TokenRow | undefined, channel: Channel, now: Date): TokenCheck {
  if (!token) return { ok: false, problem: "missing" };
  if (!row || row.channel !== channel) return { ok: false, problem: "unknown" };
  if (Date.parse(row.expiresAt) < now.getTime()) return { ok: false, problem: "expired" };
  return { ok: true, rut: row.rut };
}

export async function checkToken(db: Db, token: string | undefined, channel: Channel, now: Date): Promise<TokenCheck> {
  if (!token) return { ok: false, problem: "missing" };
  return tokenVerdict(token, await tokenQuery(db, token).get(), channel, now);
}

// ---- scenarios ----------------------------------------------------------------------------------

export type ScenarioMode = "accept" | "reject" | "object" | "delay" | "down";
export type ScenarioRow = typeof simScenarios.$inferSelect;

export type DownFailure = "http503" | "error500" | "reset";

/**
 * Scenarios belong to an owner (see ./gate.ts simulatorOwner): the API client that set them, or null,
 * local development's one implicit owner. Every read, change and use below is confined to one owner.
 */
export type ScenarioOwner = string | null;

const ownedBy = (owner: ScenarioOwner) => (owner === null ? isNull(simScenarios.clientId) : eq(simScenarios.clientId, owner));

export async function addScenario(db: Db, owner: ScenarioOwner, s: { mode: ScenarioMode; count?: number; rut?: string; polls?: number; seconds?: number; failure?: DownFailure }, now: Date): Promise<ScenarioRow> {
  const delay = s.mode === "delay";
  const rows = await db
    .insert(simScenarios)
    .values({
      mode: s.mode,
      remaining: s.count ?? null,
      rut: s.rut ?? null,
      clientId: owner,
      delayPolls: delay ? (s.polls ?? (s.seconds ? 0 : 3)) : null,
      delaySeconds: delay ? (s.seconds ?? null) : null,
      failure: s.mode === "down" ? (s.failure ?? "http503") : null,
      createdAt: now.toISOString(),
    })
    .returning();
  return rows[0]!;
}

export function listScenarios(db: Db, owner: ScenarioOwner): Promise<ScenarioRow[]> {
  return db.select().from(simScenarios).where(ownedBy(owner)).orderBy(desc(simScenarios.id)).all();
}

export async function clearScenarios(db: Db, owner: ScenarioOwner): Promise<number> {
  const rows = await db.delete(simScenarios).where(ownedBy(owner)).returning({ id: simScenarios.id });
  return rows.length;
}

/** The owner's newest scenario of the given modes for the company (or for every company unless exact), for a batch. */
export function scenarioQuery(db: Db, owner: ScenarioOwner, modes: ScenarioMode[], rut: string | null, opts: { exact?: boolean } = {}) {
  const byRut = rut === null ? isNull(simScenarios.rut) : opts.exact ? eq(simScenarios.rut, rut) : or(isNull(simScenarios.rut), eq(simScenarios.rut, rut));
  return db.select().from(simScenarios).where(and(ownedBy(owner), inArray(simScenarios.mode, modes), byRut)).orderBy(desc(simScenarios.id)).limit(1);
}

/** Consumes one use of a scenario read with scenarioQuery (nothing to do for one without a count). */
export async function consumeScenario(db: Db, row: ScenarioRow): Promise<void> {
  if (row.remaining === null) return;
  if (row.remaining <= 1) await db.delete(simScenarios).where(eq(simScenarios.id, row.id));
  else await db.update(simScenarios).set({ remaining: row.remaining - 1 }).where(eq(simScenarios.id, row.id));
}

/** The owner's newest scenario of the given modes for the company (or for every company unless exact); consumes one use. */
export async function takeScenario(db: Db, owner: ScenarioOwner, modes: ScenarioMode[], rut: string | null, opts: { exact?: boolean } = {}): Promise<ScenarioRow | undefined> {
  const row = await scenarioQuery(db, owner, modes, rut, opts).get();
  if (!row) return undefined;
  await consumeScenario(db, row);
  return row;
}

// ---- envelopes --------------------------------------------------------------------------------

export type EnvioRow = typeof simEnvios.$inferSelect;
export type DocumentRow = typeof simDocuments.$inferSelect;

/** The envelope already uploaded with this file by this company on this channel, for a batch. */
export function envioByFileQuery(db: Db, channel: Channel, companyRut: string, sha256: string) {
  return db.select().from(simEnvios).where(and(eq(simEnvios.channel, channel), eq(simEnvios.companyRut, companyRut), eq(simEnvios.fileSha256, sha256))).limit(1);
}

export async function findEnvioByFile(db: Db, channel: Channel, companyRut: string, sha256: string): Promise<EnvioRow | undefined> {
  return envioByFileQuery(db, channel, companyRut, sha256).get();
}

/** Folios per statement of the duplicate check: D1 binds at most 100 parameters per statement. */
const FOLIOS_PER_STATEMENT = 90;

/**
 * The duplicate check of a whole envelope, for a batch: one statement per issuer and type (and per
 * 90 folios), each returning the already accepted (DOK/RLV) documents among the given folios.
 */
export function acceptedQueries(db: Db, keys: DocumentKey[]) {
  const groups = new Map<string, { issuerRut: string; type: number; folios: Set<number> }>();
  for (const k of keys) {
    if (!Number.isSafeInteger(k.type) || !Number.isSafeInteger(k.folio)) continue;
    const id = `${k.issuerRut}|${k.type}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { issuerRut: k.issuerRut, type: k.type, folios: new Set() }));
    g.folios.add(k.folio);
  }
  const out = [];
  for (const g of groups.values()) {
    const folios = [...g.folios];
    for (let i = 0; i < folios.length; i += FOLIOS_PER_STATEMENT) {
      out.push(
        db
          .select({ issuerRut: simDocuments.issuerRut, type: simDocuments.documentType, folio: simDocuments.folio })
          .from(simDocuments)
          .where(and(eq(simDocuments.issuerRut, g.issuerRut), eq(simDocuments.documentType, g.type), inArray(simDocuments.folio, folios.slice(i, i + FOLIOS_PER_STATEMENT)), inArray(simDocuments.status, ["DOK", "RLV"]))),
      );
    }
  }
  return out;
}

export function acceptedSet(results: { issuerRut: string; type: number; folio: number }[][]): Set<string> {
  const out = new Set<string>();
  for (const rows of results) for (const r of rows) out.add(documentKeyText(r));
  return out;
}

/** Which of these documents were already accepted (DOK/RLV): one round trip for the whole envelope. */
export async function acceptedAmong(db: Db, keys: DocumentKey[]): Promise<Set<string>> {
  const qs = acceptedQueries(db, keys);
  if (qs.length === 0) return new Set();
  return acceptedSet((await db.batch(qs as [(typeof qs)[number], ...(typeof qs)[number][]])) as { issuerRut: string; type: number; folio: number }[][]);
}

/** Document rows per INSERT: 9 bound parameters each (the track id is a sub-select), under D1's 100. */
const DOCUMENTS_PER_INSERT = 10;

/** Records an envelope and its documents in one round trip (one D1 batch, one transaction). */
export async function saveEnvio(
  db: Db,
  e: { channel: Channel; companyRut: string; senderRut: string; fileName: string; sha256: string; size: number; now: Date; verdict: EnvioVerdict; stats: TypeStats[]; scenario: ScenarioRow | undefined },
): Promise<number> {
  const delay = e.scenario?.mode === "delay" ? e.scenario : undefined;
  const insertEnvio = db
    .insert(simEnvios)
    .values({
      channel: e.channel,
      companyRut: e.companyRut,
      senderRut: e.senderRut,
      kind: e.verdict.kind,
      fileName: e.fileName,
      fileSha256: e.sha256,
      fileSize: e.size,
      receivedAt: e.now.toISOString(),
      finalStatus: e.verdict.finalStatus,
      finalGlosa: e.verdict.glosa,
      errors: JSON.stringify(e.verdict.errors),
      stats: JSON.stringify(e.stats),
      holdPolls: delay?.delayPolls ?? 0,
      holdUntil: delay?.delaySeconds ? new Date(e.now.getTime() + delay.delaySeconds * 1000).toISOString() : null,
      scenario: e.scenario?.mode ?? null,
    })
    .returning({ trackId: simEnvios.trackId });
  const docs: DocumentVerdict[] = e.verdict.documents;
  // The batch runs as one transaction, statement after statement, alone on the database: right after
  // the envelope's INSERT its track id is the largest one.
  const trackId = sql<number>`(select max("track_id") from "sim_envios")`;
  const createdAt = e.now.toISOString();
  const inserts = [];
  for (let i = 0; i < docs.length; i += DOCUMENTS_PER_INSERT) {
    inserts.push(
      db.insert(simDocuments).values(
        docs.slice(i, i + DOCUMENTS_PER_INSERT).map((d) => ({
          trackId,
          issuerRut: d.issuerRut,
          documentType: d.type,
          folio: d.folio,
          receiverRut: d.receiverRut,
          issueDate: d.issueDate,
          total: d.total,
          status: d.status,
          errors: JSON.stringify(d.errors),
          createdAt,
        })),
      ),
    );
  }
  const [rows] = await db.batch([insertEnvio, ...inserts]);
  return rows[0]!.trackId;
}

export function getEnvio(db: Db, trackId: number): Promise<EnvioRow | undefined> {
  return db.select().from(simEnvios).where(eq(simEnvios.trackId, trackId)).get();
}

export function envioDocuments(db: Db, trackId: number): Promise<DocumentRow[]> {
  return db.select().from(simDocuments).where(eq(simDocuments.trackId, trackId)).orderBy(simDocuments.id).all();
}

/** The document registered for issuer+type+folio: the accepted one if any (a later repeat was rejected), else the newest. */
export async function registeredDocument(db: Db, issuerRut: string, type: number, folio: number): Promise<DocumentRow | undefined> {
  const all = await db
    .select()
    .from(simDocuments)
    .where(and(eq(simDocuments.issuerRut, issuerRut), eq(simDocuments.documentType, type), eq(simDocuments.folio, folio)))
    .orderBy(desc(simDocuments.id))
    .all();
  return all.find((d) => d.status !== "RCH") ?? all[0];
}

/** The states an envelope goes through before its final one. */
export function stepsOf(finalStatus: string): string[] {
  switch (finalStatus) {
    case "EPR":
      return ["REC", "SOK", "FOK", "EPR"];
    case "RSC":
      return ["REC", "RSC"];
    case "RFR":
      return ["REC", "SOK", "RFR"];
    default:
      return ["REC", "SOK", finalStatus];
  }
}

/**
 * The state shown for an envelope after `polls` status calls: each call advances one step (the
 * first shows REC), and time advances one step every STEP_MS anyway. A delay scenario holds it in
 * REC/SOK until both its poll count and its time have passed.
 */
export function visibleState(e: Pick<EnvioRow, "finalStatus" | "receivedAt" | "holdPolls" | "holdUntil">, polls: number, now: Date): string {
  const steps = stepsOf(e.finalStatus);
  const byTime = Math.floor((now.getTime() - Date.parse(e.receivedAt)) / STEP_MS);
  let i = Math.min(steps.length - 1, Math.max(polls - 1, byTime, 0));
  // Without a delay scenario nothing holds it: an envelope nobody polled (injected) advances by time alone.
  const held = (e.holdPolls > 0 && polls <= e.holdPolls) || (e.holdUntil !== null && now.getTime() < Date.parse(e.holdUntil));
  if (held) i = Math.min(i, 1, Math.max(polls - 1, 0));
  return steps[i]!;
}

/**
 * Counts one status poll of the company's envelope on that channel, in one statement, only while the
 * token is valid (known, of that channel, not expired) and the owner has no global "down" scenario:
 * returns the envelope with its new poll count, or nothing (check the token and the scenario separately).
 */
export function pollIfAllowedQuery(db: Db, p: { trackId: number; companyRut: string; channel: Channel; token: string; now: Date; owner: ScenarioOwner }) {
  return db
    .update(simEnvios)
    .set({ polls: sql`${simEnvios.polls} + 1` })
    .where(
      and(
        eq(simEnvios.trackId, p.trackId),
        eq(simEnvios.companyRut, p.companyRut),
        eq(simEnvios.channel, p.channel),
        sql`exists (select 1 from "sim_tokens" where "token" = ${p.token} and "channel" = ${p.channel} and "expires_at" >= ${p.now.toISOString()})`,
        sql`not exists (select 1 from "sim_scenarios" where "mode" = 'down' and "rut" is null and "client_id" is ${p.owner})`,
      ),
    )
    .returning();
}

/** Counts one status poll and returns the state to show. */
export async function pollEnvio(db: Db, e: EnvioRow, now: Date): Promise<string> {
  const polls = e.polls + 1;
  await db.update(simEnvios).set({ polls }).where(eq(simEnvios.trackId, e.trackId));
  return visibleState(e, polls, now);
}
