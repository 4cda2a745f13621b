/**
 * Reception's cron job (the existing five-minute trigger): polling the SII's register of documents received
 * by each company. Each run does a bounded amount of work (a few companies,
 * a few hundred documents) so it stays short; the rest waits for the next run.
 */
import { envForCompany } from "../config";
import { and, asc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { issuingCountry } from "../countries";
import type { RegisteredDocument } from "../countries/port";
import { createDb, type Db } from "../storage/db/client";
import { openStore, ordinalOfId, partitionedId } from "../storage/db/document-store";
import { certificates, companies, receivedDocuments, receptionAddresses } from "../storage/db/schema";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { receptionToken } from "../accounts/companies/reception-address";
import { chunked } from "../lib/chunked";
import { log } from "../lib/log";
import { intakeFile } from "./intake";
import { claimKeys, keysOfMany } from "./keys";
import { receivedByIds, writeIn } from "./stores";
import { checkReceivedCessions } from "./cessions";

export const POLL_COMPANIES_PER_RUN = 10;

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
  let known = await keysOfMany(env, company.id, docs);
  const missingXml = docs.filter((_, i) => !known[i]!.some((k) => k.xmlSha256 !== "")).slice(0, XML_FETCHES_PER_RUN);
  for (const d of missingXml) {
    const xml = await fetchXml(d);
    if (xml) await intakeFile(env, company, xml, { channel: "SII", message: null, fileName: null, now: at });
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
    const actionable = issuingCountry().responseWindow.types.has(d.documentType);
    return db.insert(receivedDocuments).values({
      id, companyId: company.id, issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio, issueDate: d.issueDate, total: d.total, recipientRut: company.taxId,
      channel: "SII", siiReceivedAt: d.receivedAt, responseDeadline: actionable ? issuingCountry().responseWindow.deadlineOf(d.receivedAt) : null, responseState: actionable ? "PENDING" : "NOT_APPLICABLE",
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
      .set({ siiReceivedAt: d.receivedAt, responseDeadline: issuingCountry().responseWindow.types.has(d.documentType) ? issuingCountry().responseWindow.deadlineOf(d.receivedAt) : null, updatedAt: now })
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
    .select({ id: companies.id, clientId: companies.clientId, taxId: companies.taxId, livemode: companies.livemode, polledAt: receptionAddresses.polledAt })
    .from(companies)
    .innerJoin(certificates, and(eq(certificates.companyId, companies.id), eq(certificates.active, true), eq(certificates.status, "STORED")))
    .leftJoin(receptionAddresses, eq(receptionAddresses.companyId, companies.id))
    .where(and(eq(companies.status, "ACTIVE"), eq(companies.country, "CHL"), gt(certificates.validTo, at.toISOString()), or(isNull(receptionAddresses.polledAt), lt(receptionAddresses.polledAt, new Date(at.getTime() - 4 * 60_000).toISOString()))))
    .orderBy(sql`${receptionAddresses.polledAt} IS NOT NULL`, asc(receptionAddresses.polledAt))
    .limit(POLL_COMPANIES_PER_RUN);
  for (const c of due) {
    const sii = issuingCountry().reception(envForCompany(env, c));
    try {
      await receptionToken(db, c.id);
      const signer = await requireSigningCredentials(db, env, c.id, at);
      const since = c.polledAt ? new Date(Date.parse(c.polledAt) - 9 * 86_400_000).toISOString() : new Date(at.getTime() - 30 * 86_400_000).toISOString();
      const listed = await sii.listReceived({ companyRut: c.taxId, signer, since });
      const fetchXml: Fetch = (d) => sii.receivedXml({ companyRut: c.taxId, signer, issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio });
      if (listed.supported) await applyRegister(env, c, listed.documents, fetchXml, at);
      await checkReceivedCessions(env, c, signer, at);
      await db.update(receptionAddresses).set({ polledAt: at.toISOString() }).where(eq(receptionAddresses.companyId, c.id));
    } catch (e) {
      log("error", "reception register poll failed", { company: c.id, error: String(e) });
    }
  }
}
