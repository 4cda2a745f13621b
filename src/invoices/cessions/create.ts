/**
 * A cession asked for (POST …/invoices/{id}/cessions): the document's rules (./rules.ts), then the
 * cession file built and signed with the company's certificate by its country, kept in R2, the
 * cession stored SIGNED in the document's store and its first step queued. A refusal stores nothing;
 * a queue that cannot take the step undoes the store and the file (503).
 */
import { and, eq, notInArray } from "drizzle-orm";
import { createDb } from "../../storage/db/client";
import { ordinalOfId, partitionedId, partitionFor } from "../../storage/db/document-store";
import { cancellations, cessions } from "../../storage/db/schema";
import type { CompanyRow } from "../../accounts/companies/repository";
import { issuingCountry } from "../../countries/index";
import type { CessionParty } from "../../countries/port";
import { AppError } from "../../lib/errors";
import { toLocalDateTime } from "../../lib/time";
import { enqueueCession } from "./messages";
import { readDocumentXml } from "../stored-xml";
import { requireSigningCredentials } from "../../accounts/certificates/certificates";
import { getInvoice } from "../queries";
import type { InvoiceRow } from "../state";
import { cedibility, cessionAmount } from "./rules";
import type { CessionCreate, CessionRow } from "./view";

export const cessionFileKey = (companyId: string, id: string) => `cessions/${companyId}/${id}.xml`;

/** The company as the cedent of the document (its name and address as the document gives them, unless asked otherwise). */
function cedentOf(company: CompanyRow, row: InvoiceRow, body: CessionCreate): CessionParty {
  const issuer = (JSON.parse(row.body) as { issuer?: { legal_name?: string; address?: { address?: string; city?: string } } }).issuer;
  const place = [issuer?.address?.address, issuer?.address?.city].filter(Boolean).join(", ");
  const address = body.cedent_address ?? (place.length > 60 ? (issuer?.address?.address ?? place).slice(0, 60) : place);
  return { taxId: company.taxId, legalName: (issuer?.legal_name ?? company.legalName).slice(0, 100), address, email: body.contact_email };
}

function assigneeOf(body: CessionCreate): CessionParty {
  const id = issuingCountry().taxId.check(body.assignee.tax_id);
  if (!id.ok) throw new AppError("VALIDATION_FAILED", `assignee.tax_id: ${id.message}`, [{ field: "assignee.tax_id", message: id.message }]);
  return { taxId: id.canonical, legalName: body.assignee.legal_name, address: body.assignee.address, email: body.assignee.email };
}

export async function createCession(env: Env, company: CompanyRow, invoiceId: string, body: CessionCreate, now: Date): Promise<CessionRow> {
  const port = issuingCountry().cessions;
  if (!port) throw new AppError("CESSION_NOT_AVAILABLE", "Cessions are not available for this company's country.");
  const row = await getInvoice(env, company.id, invoiceId);
  const ordinal = ordinalOfId(row.id)!;
  const { db } = await partitionFor(env, company.id, ordinal);
  const [cancelled] = await db.select().from(cancellations).where(eq(cancellations.cancelledInvoiceId, row.id)).limit(1);
  const [live] = await db.select({ id: cessions.id, status: cessions.status }).from(cessions).where(and(eq(cessions.invoiceId, row.id), notInArray(cessions.status, ["REJECTED", "FAILED"]))).limit(1);
  const basis = cedibility(row, { types: port.types, cancelledBy: cancelled?.creditNoteId ?? null, ceded: live ?? null, now });
  const amount = cessionAmount(row, body.amount);
  const assignee = assigneeOf(body);
  const cedent = cedentOf(company, row, body);
  if (assignee.taxId === cedent.taxId) throw new AppError("CESSION_FIELDS_INVALID", "The assignee cannot be the company itself.", [{ field: "assignee.tax_id", message: "The company's own RUT" }]);
  const dte = await readDocumentXml(env.FILES, row.xmlKey);
  if (!dte) throw new AppError("CESSION_DOCUMENT_XML_MISSING", `The signed XML of ${row.id} cannot be read, so it cannot be ceded. Nothing was stored.`);
  const signer = await requireSigningCredentials(createDb(env.DB), env, company.id, now);
  const timestamp = toLocalDateTime(now, "America/Santiago");
  let file;
  try {
    file = await port.build({ document: dte, cedent, assignee, amount, lastDueDate: body.last_due_date, ...(body.debtor_email ? { debtorEmail: body.debtor_email } : {}), ...(body.other_conditions ? { otherConditions: body.other_conditions } : {}), timestamp, signer });
  } catch (e) {
    if (!port.isRefusal(e)) throw e;
    const fields = e.message.split("; ").map((m) => ({ field: m.split(":")[0]!.trim(), message: m.slice(m.indexOf(":") + 1).trim() }));
    throw new AppError("CESSION_FIELDS_INVALID", `The cession cannot be made: ${e.message}.`, fields);
  }
  const id = partitionedId("ces", ordinal);
  const xmlKey = cessionFileKey(company.id, id);
  await env.FILES.put(xmlKey, file.xml, { httpMetadata: { contentType: "application/xml; charset=ISO-8859-1" } });
  const at = now.toISOString();
  const party = (p: CessionParty) => JSON.stringify({ tax_id: p.taxId, legal_name: p.legalName, address: p.address, email: p.email });
  const [stored] = await db
    .insert(cessions)
    .values({
      id, companyId: company.id, invoiceId: row.id, documentType: row.documentType, folio: row.folio!, issueDate: row.issueDate, total: row.total, debtorRut: row.recipientRut, debtorName: row.recipientName,
      assignee: party(assignee), cedent: party(cedent), amount, lastDueDate: body.last_due_date, debtorEmail: body.debtor_email ?? null, receiptBasis: basis, declaration: file.declaration,
      status: "SIGNED", xmlKey, signedAt: timestamp, createdAt: at, updatedAt: at,
    })
    .onConflictDoNothing()
    .returning();
  if (!stored) {
    await env.FILES.delete(xmlKey);
    throw new AppError("CESSION_ALREADY_CEDED", `Another cession of ${row.id} was made at the same moment: a document is ceded once by its issuer.`);
  }
  try {
    await enqueueCession(env, { cessionId: id, companyId: company.id });
  } catch (e) {
    await db.delete(cessions).where(eq(cessions.id, id));
    await env.FILES.delete(xmlKey);
    throw new AppError("SERVICE_UNAVAILABLE", `The cession could not be queued (${(e as Error).message}); nothing was stored. Retry.`);
  }
  return stored;
}
