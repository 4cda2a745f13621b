/**
 * Reception's cron jobs (the existing five-minute trigger): polling the SII's register of documents received
 * by each company, and the legal deadlines. Each run does a bounded amount of work (a few companies,
 * a few hundred documents) so it stays short; the rest waits for the next run.
 */
import { envForMode } from "../config";
import { and, asc, eq, gt, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { siiReception } from "../countries/cl";
import type { RegisteredDocument } from "../countries/port";
import { createDb, type Db } from "../db/client";
import { openStore, ordinalOfId, partitionedId, storeFor } from "../db/document-store";
import { isLegacyMoved } from "../db/document-store/legacy";
import { certificates, companies, receivedDocuments, receptionAddresses } from "../db/schema";
import { requireSigningCredentials } from "../domain/certificates/certificates";
import { receptionToken } from "../domain/companies/reception-address";
import { chunked } from "../lib/chunked";
import { log } from "../lib/log";
import { ACTIONABLE_TYPES, APPROACHING_MS, deadlineOf } from "./deadlines";
import { intakeFile } from "./intake";
import { claimKeys, keysOfMany, seedLegacyKeys } from "./keys";
import { legacyReceptionMoved, receivedByIds, receptionEvent, receptionPartitions, writeIn } from "./stores";
import type { ReceivedRow } from "./view";

export const POLL_COMPANIES_PER_RUN = 10;
export const DEADLINE_ROWS_PER_RUN = 300;

/** XML fetches from the register per company and run (the rest waits for the next run). */
export const XML_FETCHES_PER_RUN = 50;

type Company = { id: string; taxId: string; livemode: boolean };
type Fetch = (d: RegisteredDocument) => Promise<Uint8Array | null>;

/**
 * Documents of the register: the XML of each one not yet received is asked of the authority (the
 * simulator hands it out, the real SII does not) and goes through the one intake; a document still
 * without XML is listed as NOT_YET_RECEIVED; every one gets its SII reception time. The keys are read
 * from the index store and the documents from their stores a hundred at a time, not one by one.
 */
async function applyRegister(env: Env, company: Company, docs: RegisteredDocument[], fetchXml: Fetch, at: Date): Promise<void> {
  await seedLegacyKeys(env, company.id, docs);
  let known = await keysOfMany(env, company.id, docs);
  const missingXml = docs.filter((_, i) => !known[i]!.some((k) => k.xmlSha256 !== "")).slice(0, XML_FETCHES_PER_RUN);
  for (const d of missingXml) {
    const xml = await fetchXml(d);
    if (xml) await intakeFile(env, company, xml, "SII", null, at);
  }
  if (missingXml.length) known = await keysOfMany(env, company.id, docs);
  await listedOnly(env, company, docs.filter((_, i) => known[i]!.length === 0), at);
  await stampReceivedAt(env, company.id, docs.flatMap((d, i) => known[i]!.map((k) => ({ d, id: k.documentId }))));
}

/** Documents the register lists whose XML has not arrived: each a placeholder claimed under the key '' (one, however many polls race). */
async function listedOnly(env: Env, company: Company, docs: RegisteredDocument[], at: Date): Promise<void> {
  if (docs.length === 0) return;
  const store = await openStore(env, company.id, at);
  const claims = await claimKeys(env, company.id, docs.map((d) => ({ issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio, sha: "" })), docs.map(() => partitionedId("rcv", store.ordinal)));
  // Inserted in the store its id names; a holder already there (an earlier poll) changes nothing.
  await perStore(env, company.id, docs.map((d, i) => ({ id: claims[i]!.documentId, d })), (db, { id, d }) => {
    const actionable = ACTIONABLE_TYPES.has(d.documentType);
    return db.insert(receivedDocuments).values({
      id, companyId: company.id, issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio, issueDate: d.issueDate, total: d.total, recipientRut: company.taxId,
      channel: "SII", siiReceivedAt: d.receivedAt, responseDeadline: actionable ? deadlineOf(d.receivedAt) : null, responseState: actionable ? "PENDING" : "NOT_APPLICABLE",
    }).onConflictDoNothing();
  });
}

/** The SII's reception time (and so the deadline) on the documents that lack it, each in its own store. */
async function stampReceivedAt(env: Env, companyId: string, held: { d: RegisteredDocument; id: string }[]): Promise<void> {
  const rows = await receivedByIds(env, companyId, held.map((h) => h.id));
  const missing = held.filter((h) => rows.has(h.id) && !rows.get(h.id)!.siiReceivedAt);
  const now = new Date().toISOString();
  await perStore(env, companyId, missing, (db, { d, id }) =>
    db.update(receivedDocuments)
      .set({ siiReceivedAt: d.receivedAt, responseDeadline: ACTIONABLE_TYPES.has(d.documentType) ? deadlineOf(d.receivedAt) : null, updatedAt: now })
      .where(and(eq(receivedDocuments.companyId, companyId), eq(receivedDocuments.id, id), isNull(receivedDocuments.siiReceivedAt))),
  );
}

/** One statement per item, run in batches of 100 in the store each item's id names. */
async function perStore<T extends { id: string }>(env: Env, companyId: string, items: T[], statement: (db: Db, item: T) => BatchItem<"sqlite">): Promise<void> {
  const byStore = new Map<number, T[]>();
  for (const item of items) {
    const ordinal = ordinalOfId(item.id)!;
    byStore.set(ordinal, [...(byStore.get(ordinal) ?? []), item]);
  }
  for (const [ordinal, group] of byStore) {
    for (const chunk of chunked(group, 100)) await writeIn(env, companyId, ordinal, (db) => db.batch(chunk.map((item) => statement(db, item)) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]));
  }
}

/** Asks the SII's register of the companies polled longest ago (with an active certificate). */
export async function pollReceptionRegister(env: Env, at: Date): Promise<void> {
  const db = createDb(env.DB);
  const due = await db
    .select({ id: companies.id, taxId: companies.taxId, livemode: companies.livemode, polledAt: receptionAddresses.polledAt })
    .from(companies)
    .innerJoin(certificates, and(eq(certificates.companyId, companies.id), eq(certificates.active, true), eq(certificates.status, "STORED")))
    .leftJoin(receptionAddresses, eq(receptionAddresses.companyId, companies.id))
    .where(and(eq(companies.status, "ACTIVE"), eq(companies.country, "CHL"), gt(certificates.validTo, at.toISOString()), or(isNull(receptionAddresses.polledAt), lt(receptionAddresses.polledAt, new Date(at.getTime() - 4 * 60_000).toISOString()))))
    .orderBy(sql`${receptionAddresses.polledAt} IS NOT NULL`, asc(receptionAddresses.polledAt))
    .limit(POLL_COMPANIES_PER_RUN);
  for (const c of due) {
    const sii = siiReception(envForMode(env, c.livemode));
    try {
      await receptionToken(db, c.id);
      const signer = await requireSigningCredentials(db, env, c.id, at);
      const since = c.polledAt ? new Date(Date.parse(c.polledAt) - 9 * 86_400_000).toISOString() : new Date(at.getTime() - 30 * 86_400_000).toISOString();
      const listed = await sii.listReceived({ companyRut: c.taxId, signer, since });
      const fetchXml: Fetch = (d) => sii.receivedXml({ companyRut: c.taxId, signer, issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio });
      if (listed.supported) await applyRegister(env, c, listed.documents, fetchXml, at);
      await db.update(receptionAddresses).set({ polledAt: at.toISOString() }).where(eq(receptionAddresses.companyId, c.id));
    } catch (e) {
      log("error", "reception register poll failed", { company: c.id, error: String(e) });
    }
  }
}

/** Stores asked at once by the deadline job. */
const DEADLINE_PARALLEL = 20;

type Budget = { passed: number; approaching: number };

/**
 * Deadlines, in the open partitions and those closed recently enough to hold open windows: passed ->
 * accepted by law + deadline_passed; 2 days left -> deadline_approaching. At most `rowsPerRun` of
 * each per run in total: the stores asked at once share what is left, each reserving its part before
 * it reads and handing back what it did not use.
 */
export async function receptionDeadlines(env: Env, at: Date, rowsPerRun = DEADLINE_ROWS_PER_RUN): Promise<void> {
  const budget: Budget = { passed: rowsPerRun, approaching: rowsPerRun };
  const moved = await legacyReceptionMoved(env);
  // Partition 0 of every company is D1 until the legacy switch: one pass over D1 covers them all.
  if (!moved) await legacyDeadlines(env, at, budget);
  const partitions = (await receptionPartitions(env, at)).filter((p) => moved || p.ordinal > 0);
  for (const group of chunked(partitions, DEADLINE_PARALLEL)) {
    if (budget.passed <= 0 && budget.approaching <= 0) break;
    await deadlinesOfGroup(group.map((p) => storeFor(env, p.companyId, p.ordinal).db), at, budget);
  }
}

/**
 * Stores asked at once: each round they share what is left of the budget evenly; a store that found
 * fewer than it took has no more of that kind, the others are asked again while budget is left.
 */
async function deadlinesOfGroup(stores: Db[], at: Date, budget: Budget): Promise<void> {
  const left = stores.map((db) => ({ db, passed: true, approaching: true }));
  for (;;) {
    const asking = left.filter((s) => (s.passed && budget.passed > 0) || (s.approaching && budget.approaching > 0));
    if (asking.length === 0) return;
    const share = {
      passed: Math.ceil(budget.passed / Math.max(1, asking.filter((s) => s.passed).length)),
      approaching: Math.ceil(budget.approaching / Math.max(1, asking.filter((s) => s.approaching).length)),
    };
    await Promise.all(asking.map(async (s) => {
      const r = await deadlinesIn(s.db, at, budget, { passed: s.passed ? share.passed : 0, approaching: s.approaching ? share.approaching : 0 });
      if (r.took.passed > 0 && r.found.passed < r.took.passed) s.passed = false;
      if (r.took.approaching > 0 && r.found.approaching < r.took.approaching) s.approaching = false;
    }));
  }
}

/** The legacy partition's deadlines in D1; if the switch happens meanwhile D1 refuses, and the next run finds them in the stores. */
async function legacyDeadlines(env: Env, at: Date, budget: Budget): Promise<void> {
  try {
    await deadlinesIn(createDb(env.DB), at, budget, { ...budget });
  } catch (e) {
    if (!isLegacyMoved(e)) throw e;
  }
}

/**
 * One store's passed and approaching deadlines: each passed one is marked accepted by law with its
 * event in one batch (only while still PENDING: a repeat records nothing, its event has the same
 * dedupe key); approaching ones get their event once (dedupe key). Takes at most `share` of each
 * from `budget` (synchronously, before its first read) and gives back what it did not find.
 */
async function deadlinesIn(db: Db, at: Date, budget: Budget, share: Budget): Promise<{ took: Budget; found: Budget }> {
  const take = { passed: Math.max(0, Math.min(budget.passed, share.passed)), approaching: Math.max(0, Math.min(budget.approaching, share.approaching)) };
  budget.passed -= take.passed;
  budget.approaching -= take.approaching;
  const now = at.toISOString();
  const soon = new Date(at.getTime() + APPROACHING_MS).toISOString();
  const pending = eq(receivedDocuments.responseState, "PENDING");
  const [passed, approaching] = await Promise.all([
    take.passed > 0 ? db.select().from(receivedDocuments).where(and(pending, lte(receivedDocuments.responseDeadline, now))).limit(take.passed) : [],
    take.approaching > 0 ? db.select().from(receivedDocuments).where(and(pending, gt(receivedDocuments.responseDeadline, now), lte(receivedDocuments.responseDeadline, soon))).limit(take.approaching) : [],
  ]);
  budget.passed += take.passed - passed.length;
  budget.approaching += take.approaching - approaching.length;
  const statements = [
    ...passed.flatMap((row) => {
      const next = acceptedByLaw(row, now);
      return [
        db.update(receivedDocuments).set({ responseState: next.responseState, responses: next.responses, updatedAt: now }).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), pending)),
        receptionEvent(db, { row: next, type: "received_document.deadline_passed", key: `deadline_passed:${row.id}` }),
      ];
    }),
    ...approaching.map((row) => receptionEvent(db, { row, type: "received_document.deadline_approaching", key: `deadline_approaching:${row.id}` })),
  ];
  for (const chunk of chunked(statements, 100)) await db.batch(chunk as [(typeof chunk)[number], ...typeof chunk]);
  return { took: take, found: { passed: passed.length, approaching: approaching.length } };
}

function acceptedByLaw(row: ReceivedRow, now: string): ReceivedRow {
  const responses = [...JSON.parse(row.responses), { action: "ACCEPTED_BY_LAW", reason: "8 días sin respuesta (Ley 19.983)", at: now, sii_code: null, sii_message: null, files: [], reply_to: null }];
  return { ...row, responseState: "ACCEPTED_BY_LAW", responses: JSON.stringify(responses), updatedAt: now };
}
