/**
 * Reception's cron jobs (the existing five-minute trigger): polling the SII's register of documents received
 * by each company, and the legal deadlines. Each run does a bounded amount of work (a few companies,
 * a few hundred documents) so it stays short; the rest waits for the next run.
 */
import { envForMode } from "../config";
import { and, asc, eq, gt, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { siiReception } from "../countries/cl";
import type { RegisteredDocument } from "../countries/port";
import { createDb, type Db } from "../db/client";
import { certificates, companies, eventOutbox, receivedDocuments, receptionAddresses } from "../db/schema";
import { requireSigningCredentials } from "../domain/certificates/certificates";
import { receptionToken } from "../domain/companies/reception-address";
import { newId } from "../lib/ids";
import { log } from "../lib/log";
import { ACTIONABLE_TYPES, APPROACHING_MS, deadlineOf } from "./deadlines";
import { intakeFile } from "./intake";
import { receivedView, type ReceivedRow } from "./view";

export const POLL_COMPANIES_PER_RUN = 10;
export const DEADLINE_ROWS_PER_RUN = 300;

const event = (db: Db, row: ReceivedRow, type: string, key: string) =>
  db.insert(eventOutbox).values({ id: newId("evt"), companyId: row.companyId, type, dedupeKey: key, payload: JSON.stringify(receivedView(row)) }).onConflictDoNothing();

/** XML fetches from the register per company and run (the rest waits for the next run). */
export const XML_FETCHES_PER_RUN = 50;

type Company = { id: string; taxId: string; livemode: boolean };
type Fetch = (d: RegisteredDocument) => Promise<Uint8Array | null>;

/**
 * Documents of the register: the XML of each one not yet received is asked of the authority (the
 * simulator hands it out, the real SII does not) and goes through the one intake; a document still
 * without XML is listed as NOT_YET_RECEIVED; every one gets its SII reception time.
 */
async function applyRegister(env: Env, company: Company, docs: RegisteredDocument[], fetchXml: Fetch): Promise<void> {
  const db = createDb(env.DB);
  let fetches = 0;
  for (const d of docs) {
    const keyOf = and(eq(receivedDocuments.companyId, company.id), eq(receivedDocuments.issuerRut, d.issuerRut), eq(receivedDocuments.documentType, d.documentType), eq(receivedDocuments.folio, d.folio));
    let known = await db.select().from(receivedDocuments).where(keyOf);
    if (!known.some((k) => k.xmlSha256) && fetches < XML_FETCHES_PER_RUN) {
      fetches++;
      const xml = await fetchXml(d);
      if (xml) {
        await intakeFile(env, company, xml, "SII", null);
        known = await db.select().from(receivedDocuments).where(keyOf);
      }
    }
    const deadline = ACTIONABLE_TYPES.has(d.documentType) ? deadlineOf(d.receivedAt) : null;
    if (known.length === 0) {
      await db.insert(receivedDocuments).values({
        id: newId("rcv"), companyId: company.id, issuerRut: d.issuerRut, documentType: d.documentType, folio: d.folio, issueDate: d.issueDate, total: d.total, recipientRut: company.taxId,
        channel: "SII", siiReceivedAt: d.receivedAt, responseDeadline: deadline, responseState: ACTIONABLE_TYPES.has(d.documentType) ? "PENDING" : "NOT_APPLICABLE",
      });
      continue;
    }
    const missing = known.filter((k) => !k.siiReceivedAt).map((k) => k.id);
    if (missing.length) {
      await db.update(receivedDocuments).set({ siiReceivedAt: d.receivedAt, responseDeadline: deadline, updatedAt: new Date().toISOString() }).where(and(eq(receivedDocuments.companyId, company.id), inArray(receivedDocuments.id, missing)));
    }
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
      if (listed.supported) await applyRegister(env, c, listed.documents, fetchXml);
      await db.update(receptionAddresses).set({ polledAt: at.toISOString() }).where(eq(receptionAddresses.companyId, c.id));
    } catch (e) {
      log("error", "reception register poll failed", { company: c.id, error: String(e) });
    }
  }
}

/** Deadlines: 2 days left -> deadline_approaching; passed -> accepted by law + deadline_passed. */
export async function receptionDeadlines(env: Env, at: Date): Promise<void> {
  const db = createDb(env.DB);
  const now = at.toISOString();
  const passed = await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.responseState, "PENDING"), lte(receivedDocuments.responseDeadline, now))).limit(DEADLINE_ROWS_PER_RUN);
  const writes: any[] = [];
  for (const row of passed) {
    const responses = [...JSON.parse(row.responses), { action: "ACCEPTED_BY_LAW", reason: "8 días sin respuesta (Ley 19.983)", at: now, sii_code: null, sii_message: null, files: [], reply_to: null }];
    const next = { ...row, responseState: "ACCEPTED_BY_LAW" as const, responses: JSON.stringify(responses), updatedAt: now };
    writes.push(db.update(receivedDocuments).set({ responseState: next.responseState, responses: next.responses, updatedAt: now }).where(and(eq(receivedDocuments.companyId, row.companyId), eq(receivedDocuments.id, row.id), eq(receivedDocuments.responseState, "PENDING"))));
    writes.push(event(db, next, "received_document.deadline_passed", `deadline_passed:${row.id}`));
  }
  const soon = new Date(at.getTime() + APPROACHING_MS).toISOString();
  const approaching = await db.select().from(receivedDocuments).where(and(eq(receivedDocuments.responseState, "PENDING"), gt(receivedDocuments.responseDeadline, now), lte(receivedDocuments.responseDeadline, soon))).limit(DEADLINE_ROWS_PER_RUN);
  for (const row of approaching) writes.push(event(db, row, "received_document.deadline_approaching", `deadline_approaching:${row.id}`));
  for (let i = 0; i < writes.length; i += 100) await db.batch(writes.slice(i, i + 100) as [any, ...any[]]);
}
