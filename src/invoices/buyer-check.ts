/**
 * One read of the SII's register of events for an issued factura (its SII reception time the first
 * time, then listarEventosHistDoc), written to the document with its `invoice.buyer_response` event
 * when something changed (./buyer-response.ts). Used by the issuance queue's `invoice.buyer_check`
 * messages (src/invoices/pipeline/buyer-checks.ts) and by `POST …/invoices/{id}/buyer_response/check`.
 */
import { and, eq } from "drizzle-orm";
import { envForCompany } from "../config";
import { issuingCountry } from "../countries";
import { AuthorityError } from "../countries/port";
import { ordinalOfId, partitionFor, UnknownPartitionError } from "../storage/db/document-store";
import { invoices } from "../storage/db/schema";
import { AppError } from "../lib/errors";
import { log } from "../lib/log";
import { signerOf, siiAccess, type SiiAccess } from "../accounts/certificates/sii-access";
import { getInvoice } from "./queries";
import { buyerCheckStatements, postponeBuyerCheck, retryAt, stopBuyerChecks, type BuyerEvent } from "./buyer-response";
import type { InvoiceRow } from "./state";

/**
 * What a check did: `read` the register and wrote the result (`row` as it is now on request, as it
 * was before for a scheduled check, whose caller does not use it), `postponed` (no usable certificate, or a
 * refusal by the SII: asked again in an hour), `stopped` (the company is gone), or `skipped` (no such
 * document, or none that takes a buyer's answer).
 */
export type BuyerCheckOutcome =
  | { kind: "read"; row: InvoiceRow }
  | { kind: "postponed"; problem: Error }
  | { kind: "stopped" | "skipped" };

/**
 * Checks one document. `scheduled`: only a document whose next check is set (a queue message);
 * otherwise any document with a buyer's answer (on request). Throws a retryable AuthorityError
 * when the SII does not answer, and what a store that is unavailable throws.
 */
export async function checkBuyerResponse(env: Env, checker: SiiAccess, companyId: string, invoiceId: string, scheduled: boolean): Promise<BuyerCheckOutcome> {
  const ordinal = ordinalOfId(invoiceId);
  if (ordinal === null) return { kind: "skipped" };
  let partition;
  try {
    partition = await partitionFor(env, companyId, ordinal);
  } catch (e) {
    if (e instanceof UnknownPartitionError) return { kind: "skipped" };
    throw e;
  }
  const db = partition.db;
  const [row] = await db.select().from(invoices).where(and(eq(invoices.companyId, companyId), eq(invoices.id, invoiceId))).limit(1);
  if (!row || row.buyerState === null || row.folio === null || (scheduled && row.buyerCheckAt === null)) return { kind: "skipped" };
  if (!checker.company) {
    await stopBuyerChecks(db, row);
    return { kind: "stopped" };
  }
  const read = await readRegister(env, checker, row);
  if (read instanceof Error) {
    const at = retryAt(Date.now(), row.stampedAt ?? row.createdAt);
    log("warn", at === null ? "buyer response checks stopped: 10 days since the stamp" : "buyer response check put off an hour", { invoice: row.id, error: read.message });
    await postponeBuyerCheck(db, row, at);
    return { kind: "postponed", problem: read };
  }
  const at = new Date();
  await db.batch(buyerCheckStatements(db, row, read, at));
  // The document as written, read back only for a request that answers it (a queue message does not).
  const [now] = scheduled ? [] : await db.select().from(invoices).where(and(eq(invoices.companyId, companyId), eq(invoices.id, invoiceId))).limit(1);
  return { kind: "read", row: now ?? row };
}

/** The register's reception time and events; an Error when it cannot be asked (no usable certificate, a refusal by the SII). */
async function readRegister(env: Env, checker: SiiAccess, row: InvoiceRow): Promise<{ siiReceivedAt: string | null; events: BuyerEvent[] } | Error> {
  const signer = await signerOf(env, checker, row.companyId);
  if (signer instanceof Error) return signer;
  const company = checker.company!;
  const sii = issuingCountry().reception(envForCompany(env, company));
  const key = { companyRut: company.taxId, signer, issuerRut: company.taxId, documentType: row.documentType, folio: row.folio! };
  try {
    const siiReceivedAt = row.siiReceivedAt ?? (await sii.receptionTime(key));
    const events = (await sii.listEvents(key)).map((e): BuyerEvent => ({ code: e.action, description: e.description, by_tax_id: e.responsibleRut, at: e.at }));
    return { siiReceivedAt, events };
  } catch (e) {
    if (e instanceof AuthorityError && !e.retryable) return e;
    throw e;
  }
}

/** `POST …/buyer_response/check`: the document after a read of the register now, or the error that says why there was none. */
export async function checkBuyerResponseNow(env: Env, companyId: string, invoiceId: string): Promise<InvoiceRow> {
  const row = await getInvoice(env, companyId, invoiceId);
  const refused = () => new AppError("INVOICE_NO_BUYER_RESPONSE", `${row.id} takes no buyer's answer: only a factura (33, 34, 43) the SII accepted does (this is type ${row.documentType}, status ${row.status}).`);
  if (row.buyerState === null) throw refused();
  let outcome: BuyerCheckOutcome;
  try {
    outcome = await checkBuyerResponse(env, await siiAccess(env, companyId), companyId, invoiceId, false);
  } catch (e) {
    if (e instanceof AuthorityError) throw new AppError("INVOICE_BUYER_CHECK_UNAVAILABLE", `The SII did not answer (${e.message}); ${row.id} is unchanged. Retry later: the service also reads it by itself.`);
    throw e;
  }
  if (outcome.kind === "read") return outcome.row;
  if (outcome.kind === "postponed") {
    if (outcome.problem instanceof AppError) throw outcome.problem;
    throw new AppError("INVOICE_BUYER_CHECK_UNAVAILABLE", `The SII refused the query (${outcome.problem.message}); ${row.id} is unchanged and will be read again in an hour (for up to 10 days after it was stamped).`);
  }
  throw refused();
}
