/**
 * Delivery of an issued document to its buyer (the SII's exchange rule, sii-formats.md §5): the SII
 * hands the XML to no one, so once it accepts a document the issuer mails the buyer an EnvioDTE
 * addressed to it (RutReceptor the buyer's RUT, signed with the company's certificate) at the
 * buyer's exchange address from the SII's taxpayer directory. Boletas (39, 41) go to consumers and
 * take none. The document store's alarm sends the attempts due (`buyer_delivery_at`) to the
 * issuance queue (src/invoices/pipeline/buyer-deliveries.ts); a failed
 * attempt is retried with growing waits, DELIVERY_ATTEMPTS in all; `POST …/buyer_delivery` sends
 * it now, to another address if given. The envelope sent is kept for download.
 */
import { and, asc, eq, inArray, isNotNull, isNull, lte, notInArray, type SQL } from "drizzle-orm";
import { issuingCountry } from "../countries";
import { envForMode } from "../config";
import { createDb, type Db } from "../storage/db/client";
import { applyMailReport, mailFromCompany, type MailReportOutcome } from "../accounts/companies/company-mail";
import { ordinalOfId, partitionFor, UnknownPartitionError } from "../storage/db/document-store";
import { invoices } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { toLocalDateTime } from "../lib/time";
import { readDocumentXml } from "./stored-xml";
import { requireSigningCredentials } from "../accounts/certificates/certificates";
import { companyControl, type CompanyControl } from "../accounts/companies/control-cache";
import { effectiveResolution } from "../accounts/companies/settings";
import { exchangeAddress } from "../accounts/taxpayers/exchange-address";
import { documentEvent, type InvoiceRow } from "./state";
import { invoicePdf } from "./printable";
import { storedDte } from "./stored-dte";

export const DELIVERY_STATES = ["PENDING", "SENT", "NO_ADDRESS", "FAILED"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface BuyerDelivery {
  state: DeliveryState;
  email: string | null;
  source: "TAXPAYER_DIRECTORY" | "REQUEST" | null;
  attempts: number;
  sent_at: string | null;
  message: string | null;
  /** When the buyer's mail server accepted the mail SENT (the mail service's `message.delivered` event); absent on records from before it was kept. */
  delivered_at?: string | null;
}

/** Boletas go to consumers, who have no exchange address. */
const NOT_DELIVERED = [39, 41];
/** Attempts in all before FAILED; waits of 5 minutes doubling, at most 6 hours, between them. */
export const DELIVERY_ATTEMPTS = 8;
export const DELIVERIES_PER_RUN = 90;
/** An attempt sent to the queue is not sent again before this. */
export const DELIVERY_LEASE_MS = 15 * 60_000;

const PENDING: BuyerDelivery = { state: "PENDING", email: null, source: null, attempts: 0, sent_at: null, message: null, delivered_at: null };

/**
 * The SetDTE ID of the envelope mailed to the buyer: it names the document, so that the buyer's
 * RecepcionEnvio about the whole envelope (EnvioDTEID, no document named) is read onto it.
 */
export function buyerEnvelopeSetId(invoiceId: string): string {
  return `Env_${invoiceId}`;
}

/** The document a buyer envelope's SetDTE ID names (buyerEnvelopeSetId), or null. */
export function invoiceOfBuyerEnvelope(setId: string | null): string | null {
  return setId?.startsWith("Env_") ? setId.slice(4) : null;
}

export function buyerEnvelopeKey(companyId: string, invoiceId: string): string {
  return `companies/${companyId}/invoices/${invoiceId}/buyer-envelope.xml`;
}

/** The UPDATE that starts the delivery of the documents `where` picks that the SII has just accepted (in the verdict's batch). */
export function startBuyerDelivery(db: Db, where: SQL | undefined, now: string) {
  return db
    .update(invoices)
    .set({ buyerDelivery: JSON.stringify(PENDING), buyerDeliveryAt: now })
    .where(and(where, inArray(invoices.status, ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS"]), notInArray(invoices.documentType, NOT_DELIVERED), isNull(invoices.buyerDelivery)));
}

/** The buyer_delivery_at of an attempt taken at `at`: when the alarm takes it again if no outcome was recorded. */
const leaseFrom = (at: Date) => new Date(at.getTime() + DELIVERY_LEASE_MS).toISOString();

/**
 * The attempts due at `at` (oldest first, at most `limit` ≤ 90), each leased for DELIVERY_LEASE_MS:
 * `lease` is the buyer_delivery_at written, which the attempt's message must still find.
 */
export async function takeDueDeliveries(db: Db, at: Date, limit: number): Promise<{ id: string; companyId: string; lease: string }[]> {
  const iso = at.toISOString();
  const due = await db.select({ id: invoices.id, companyId: invoices.companyId }).from(invoices).where(and(isNotNull(invoices.buyerDeliveryAt), lte(invoices.buyerDeliveryAt, iso))).orderBy(asc(invoices.buyerDeliveryAt)).limit(limit);
  const lease = leaseFrom(at);
  if (due.length > 0) await db.update(invoices).set({ buyerDeliveryAt: lease }).where(and(inArray(invoices.id, due.map((d) => d.id)), lte(invoices.buyerDeliveryAt, iso)));
  return due.map((d) => ({ ...d, lease }));
}

export function deliveryOf(row: Pick<InvoiceRow, "buyerDelivery">): (BuyerDelivery & { delivered_at: string | null }) | null {
  if (!row.buyerDelivery) return null;
  const d = JSON.parse(row.buyerDelivery) as BuyerDelivery;
  return { ...d, delivered_at: d.delivered_at ?? null };
}

const waitAfter = (attempts: number) => Math.min(5 * 60_000 * 2 ** Math.max(0, attempts - 1), 6 * 3_600_000);

/**
 * Writes the delivery after an attempt; an attempt that settles it (SENT, NO_ADDRESS, FAILED: not a
 * retry still to come) is an `invoice.buyer_delivery` event in the same batch, once per attempt.
 */
async function record(db: Db, row: InvoiceRow, d: BuyerDelivery, nextAt: number | null, now: Date): Promise<InvoiceRow> {
  const at = now.toISOString();
  const set = { buyerDelivery: JSON.stringify(d), buyerDeliveryAt: nextAt === null ? null : new Date(nextAt).toISOString(), updatedAt: at };
  const update = db.update(invoices).set(set).where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id)));
  if (d.state === "PENDING") await update;
  else await db.batch([update, deliveryEvent(db, row, d, set.buyerDelivery, at)]);
  return { ...row, ...set };
}

/**
 * Writes a mail service's report `d` on a settled delivery, with its event, only while the delivery
 * is still as `row` holds it (an attempt started meanwhile, or another report, must not lose to it);
 * whether it did.
 */
export async function recordDeliveryReport(db: Db, row: InvoiceRow, d: BuyerDelivery, now: Date): Promise<boolean> {
  const at = now.toISOString();
  const buyerDelivery = JSON.stringify(d);
  const update = db
    .update(invoices)
    .set({ buyerDelivery, updatedAt: at })
    .where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id), eq(invoices.buyerDelivery, row.buyerDelivery!)))
    .returning({ id: invoices.id });
  const [written] = await db.batch([update, deliveryEvent(db, row, d, buyerDelivery, at)]);
  return written.length > 0;
}

/** The `invoice.buyer_delivery` event of delivery `d` (written as `value`), inserted only where the document holds it. */
const deliveryEvent = (db: Db, row: InvoiceRow, d: BuyerDelivery, value: string, at: string) =>
  documentEvent(db, row.companyId, row.id, "invoice.buyer_delivery", `delivery:${row.id}:${d.state}:${d.attempts}:${at}`, at, eq(invoices.buyerDelivery, value));

/**
 * Builds the EnvioDTE addressed to the buyer, keeps it in R2 and mails it to `to` with the A4 PDF
 * beside it (a courtesy: the XML is the document, so a PDF that cannot be rendered is left out and
 * said in the answer). Throws what fails; returns a note when the PDF was left out.
 */
async function sendEnvelope(env: Env, row: InvoiceRow, control: CompanyControl, to: string, now: Date): Promise<string | null> {
  const dteBytes = await readDocumentXml(env.FILES, row.xmlKey);
  if (!dteBytes) throw new Error("The signed XML of the document is missing");
  const signer = await requireSigningCredentials(createDb(env.DB), env, row.companyId, now);
  const { company, settings } = control;
  const body = JSON.parse(row.body) as { issuer?: { tax_information?: { resolution_number?: string; resolution_date?: string } } };
  const xml = await issuingCountry().documents.envelope({
    documents: [storedDte(row, dteBytes, company.taxId)], issuerRut: company.taxId, recipientRut: row.recipientRut,
    resolution: effectiveResolution(settings, body.issuer?.tax_information, company.startActivitiesDate), timestamp: toLocalDateTime(now, settings?.timeZone ?? "America/Santiago"), signer, id: buyerEnvelopeSetId(row.id),
  });
  await env.FILES.put(buyerEnvelopeKey(row.companyId, row.id), xml, { httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" } });
  const subject = `Envio DTE ${row.documentType} folio ${row.folio} - ${company.taxId}`;
  const files = [{ name: `EnvioDTE_${company.taxId}_T${row.documentType}_F${row.folio}.xml`, contentType: "application/xml", bytes: xml }];
  let note: string | null = null;
  try {
    const pdf = await invoicePdf(createDb(env.DB), env, row, "A4");
    files.push({ name: pdf.fileName, contentType: "application/pdf", bytes: pdf.bytes });
  } catch (e) {
    note = `Sent without the PDF, which could not be rendered: ${(e instanceof Error ? e.message : String(e)).slice(0, 300)}`;
  }
  // From the company's reception address: a bounce comes back there or as an Email Sending event (src/reception/bounces.ts, sending-events.ts), and so does the buyer's answer.
  const sent = await mailFromCompany(env, row.companyId, { to, subject, reference: row.id, text: `${subject} (${company.legalName})`, files }, now);
  if (sent === "NO_DOMAIN") throw new Error("RECEPTION_DOMAIN is not configured: there is no address to send from");
  if (sent === "NO_BINDING") throw new Error("No send_email binding is configured");
  return note;
}

/**
 * A bounce of the delivery of a company's document (a delivery status notification its reception
 * address received, src/reception/bounces.ts): a SENT delivery becomes FAILED with what the buyer's
 * server said, with its `invoice.buyer_delivery` event. PENDING when it is (an attempt is under way:
 * one that has sent but not recorded yet, or a new one); UNCHANGED when it is otherwise not SENT;
 * null when the company has no such document or delivery.
 */
export function bouncedDelivery(env: Env, companyId: string, invoiceId: string, why: string, now = new Date()): Promise<MailReportOutcome | null> {
  return applyMailReport("failure", () => deliveryIn(env, companyId, invoiceId), ({ db, row, mail }) => recordDeliveryReport(db, row, { ...mail, state: "FAILED", message: why.slice(0, 500) }, now));
}

/**
 * The mail service's confirmation that the buyer's server accepted the delivery of a company's
 * document (its `message.delivered` Email Sending event, src/reception/sending-events.ts): a SENT
 * delivery records `delivered_at`, once, with an `invoice.buyer_delivery` event. RECORDED when it
 * did already; PENDING when the attempt that sent it has not recorded SENT yet (the event is read
 * again later); UNCHANGED when it is not SENT; null when the company has no such document or delivery.
 */
export function deliveredDelivery(env: Env, companyId: string, invoiceId: string, at: string, now = new Date()): Promise<MailReportOutcome | null> {
  return applyMailReport("delivery", () => deliveryIn(env, companyId, invoiceId), ({ db, row, mail }) => recordDeliveryReport(db, row, { ...mail, delivered_at: at }, now));
}

/** The company's document `invoiceId` with its delivery (`mail`); null when there is neither. */
async function deliveryIn(env: Env, companyId: string, invoiceId: string): Promise<{ db: Db; row: InvoiceRow; mail: BuyerDelivery } | null> {
  const found = await invoiceIn(env, companyId, invoiceId);
  const mail = found ? deliveryOf(found.row) : null;
  return found && mail ? { ...found, mail } : null;
}

/** The company's document `invoiceId` and the partition it is in; null when there is none. Throws what an unavailable store throws. */
async function invoiceIn(env: Env, companyId: string, invoiceId: string): Promise<{ db: Db; row: InvoiceRow } | null> {
  const ordinal = ordinalOfId(invoiceId);
  if (ordinal === null) return null;
  let db: Db;
  try {
    db = (await partitionFor(env, companyId, ordinal)).db;
  } catch (e) {
    if (e instanceof UnknownPartitionError) return null;
    throw e;
  }
  const [row] = await db.select().from(invoices).where(and(eq(invoices.companyId, companyId), eq(invoices.id, invoiceId))).limit(1);
  return row ? { db, row } : null;
}

/** `taken`: another attempt changed the delivery between its reading and this attempt's claim. */
export type DeliveryOutcome = { kind: "done"; row: InvoiceRow; delivery: BuyerDelivery } | { kind: "skipped" } | { kind: "taken" };

/**
 * Takes an attempt before the mail goes: the delivery as `claimed` (its attempt counted, leased for
 * DELIVERY_LEASE_MS, after which the store's alarm tries again if no outcome was recorded), only if
 * it is still as `row` read it, compared where it is written. The issuance queue delivers a message
 * at least once: of two messages for one attempt, one mails.
 */
async function claim(db: Db, row: InvoiceRow, claimed: BuyerDelivery, now: Date): Promise<boolean> {
  const taken = await db
    .update(invoices)
    .set({ buyerDelivery: JSON.stringify(claimed), buyerDeliveryAt: leaseFrom(now) })
    .where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id), eq(invoices.buyerDelivery, row.buyerDelivery!), row.buyerDeliveryAt === null ? isNull(invoices.buyerDeliveryAt) : eq(invoices.buyerDeliveryAt, row.buyerDeliveryAt)))
    .returning({ id: invoices.id });
  return taken.length > 0;
}

/**
 * One attempt. `scheduled`: only a document whose attempt is due (a queue message; `lease`: its
 * buyer_delivery_at when it was taken, which must not have changed since); otherwise any accepted
 * document that takes a delivery, to `email` when given. Throws what an unavailable store throws.
 */
export async function deliverToBuyer(env: Env, companyId: string, invoiceId: string, opts: { scheduled: boolean; email?: string; lease?: string }, now = new Date()): Promise<DeliveryOutcome> {
  const found = await invoiceIn(env, companyId, invoiceId);
  if (!found) return { kind: "skipped" };
  const { db, row } = found;
  if (row.buyerDelivery === null || (opts.scheduled && (row.buyerDeliveryAt === null || (opts.lease !== undefined && row.buyerDeliveryAt !== opts.lease)))) return { kind: "skipped" };
  const before = deliveryOf(row)!;
  const control = await companyControl(env, companyId, now.getTime());
  const company = control?.company;
  if (!control || company?.status !== "ACTIVE") {
    await record(db, row, { ...before, state: "FAILED", message: "The company is no longer active" }, null, now);
    return { kind: "skipped" };
  }
  // An address given on request is kept for the retries of that attempt.
  const requested = opts.email ?? (before.source === "REQUEST" && before.state === "PENDING" ? before.email : null);
  const to = requested ?? (await exchangeAddress(env.DB, envForMode(env, company.livemode).SII_MODE, row.recipientRut));
  if (!to) {
    const d: BuyerDelivery = { ...before, state: "NO_ADDRESS", email: null, source: null, delivered_at: null, message: `The SII's taxpayer directory has no exchange address for ${row.recipientRut}: send it with an address (POST …/buyer_delivery).` };
    return { kind: "done", row: await record(db, row, d, null, now), delivery: d };
  }
  const attempts = before.attempts + 1;
  const source = requested ? "REQUEST" : "TAXPAYER_DIRECTORY";
  if (!(await claim(db, row, { ...before, state: "PENDING", email: to, source, attempts, delivered_at: null }, now))) return { kind: "taken" };
  let d: BuyerDelivery;
  let next: number | null = null;
  try {
    const note = await sendEnvelope(env, row, control, to, now);
    d = { state: "SENT", email: to, source, attempts, sent_at: now.toISOString(), message: note, delivered_at: null };
  } catch (e) {
    const message = (e instanceof Error ? e.message : String(e)).slice(0, 500);
    const more = attempts < DELIVERY_ATTEMPTS;
    if (more) next = now.getTime() + waitAfter(attempts);
    d = { ...before, state: more ? "PENDING" : "FAILED", email: to, source, attempts, message };
  }
  return { kind: "done", row: await record(db, row, d, next, now), delivery: d };
}

/** `POST …/buyer_delivery`: an attempt now (to `email` if given); the document after it, or the error that says why there was none. */
export async function deliverNow(env: Env, row: InvoiceRow, email?: string): Promise<InvoiceRow> {
  if (NOT_DELIVERED.includes(row.documentType)) throw new AppError("INVOICE_NO_BUYER_DELIVERY", `${row.id} is a boleta (type ${row.documentType}): it goes to a consumer and is not mailed as an EnvioDTE.`);
  if (row.status !== "ACCEPTED" && row.status !== "ACCEPTED_WITH_OBJECTIONS") throw new AppError("INVOICE_NOT_ACCEPTED", `${row.id} is ${row.status}: it is sent to its buyer once the SII accepted it.`);
  if (row.buyerDelivery === null) {
    // Accepted before deliveries existed: start it here.
    await (await partitionFor(env, row.companyId, ordinalOfId(row.id)!)).db.update(invoices).set({ buyerDelivery: JSON.stringify(PENDING) }).where(and(eq(invoices.companyId, row.companyId), eq(invoices.id, row.id), isNull(invoices.buyerDelivery)));
  }
  // An attempt of the service's own may take the delivery between the reading and the claim: read it again.
  let outcome: DeliveryOutcome = { kind: "taken" };
  for (let tries = 0; tries < 3 && outcome.kind === "taken"; tries++) outcome = await deliverToBuyer(env, row.companyId, row.id, { scheduled: false, ...(email ? { email } : {}) });
  if (outcome.kind === "taken") throw new AppError("INVOICE_BUYER_DELIVERY_FAILED", `${row.id} was being sent by another attempt at the same time; look at its buyer_delivery, or try again.`);
  if (outcome.kind !== "done") throw new AppError("INVOICE_NOT_FOUND", `Document ${row.id} does not exist for this company.`);
  const d = outcome.delivery;
  if (d.state === "NO_ADDRESS") throw new AppError("INVOICE_BUYER_DELIVERY_NO_ADDRESS", d.message!);
  if (d.state !== "SENT") throw new AppError("INVOICE_BUYER_DELIVERY_FAILED", `${row.id} could not be sent to ${d.email}: ${d.message}${d.state === "PENDING" ? " (tried again later by itself)" : ""}.`);
  return outcome.row;
}
