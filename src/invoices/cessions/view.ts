/**
 * A cession as the API shows it (GET …/cessions/{id}, the lists, the `invoice.ceded` and
 * `cession.rejected` events), and what its request carries.
 */
import { z } from "@hono/zod-openapi";
import { CESSION_STATUSES, type cessions } from "../../storage/db/schema";

export type CessionRow = typeof cessions.$inferSelect;

const Party = z
  .object({
    tax_id: z.string().openapi({ example: "76543210-3" }),
    legal_name: z.string().openapi({ example: "FACTOR DE EJEMPLO SPA" }),
    address: z.string().openapi({ example: "Calle Falsa 456, Las Condes" }),
    email: z.string().openapi({ example: "operaciones@factor.cl" }),
  })
  .openapi("CessionParty");

/** A cession as asked for (the POST's body, validated by its route). */
export interface CessionCreate {
  assignee: { tax_id: string; legal_name: string; address: string; email: string };
  amount?: string | number | undefined;
  last_due_date: string;
  contact_email: string;
  cedent_address?: string | undefined;
  debtor_email?: string | undefined;
  other_conditions?: string | undefined;
}

export const CessionSchema = z
  .object({
    id: z.string(),
    company_id: z.string(),
    invoice_id: z.string(),
    invoice_type: z.string().openapi({ example: "33" }),
    folio: z.number().int(),
    issue_date: z.string(),
    total: z.string(),
    debtor: z.object({ tax_id: z.string(), legal_name: z.string() }),
    cedent: Party,
    assignee: Party,
    amount: z.string(),
    last_due_date: z.string(),
    debtor_email: z.string().nullable(),
    receipt_basis: z.enum(["BUYER_RECEIPT", "EIGHT_DAYS"]).openapi({ description: "Why the document could be ceded: its buyer acknowledged receipt or accepted it at the SII, or its 8 days passed without a claim. The file carries the sworn declaration of receipt either way." }),
    declaration: z.string().nullable().openapi({ description: "The sworn declaration (DeclaracionJurada) the file carries." }),
    status: z.enum(CESSION_STATUSES).openapi({ description: "SIGNED: the file is built, signed and kept; SENT: the register has it (track_id); REGISTERED: annotated, the assignee holds the credit; REJECTED: the register refused it (fiscal_message says why); FAILED: it could not be uploaded (last_error)." }),
    fiscal_status: z.string().nullable().openapi({ description: "The register's own state (RCP, SOK, … EOK; RSC, RFS, RCR, RDC, RCS)." }),
    fiscal_message: z.string().nullable(),
    track_id: z.string().nullable(),
    last_error: z.string().nullable(),
    signed_at: z.string().openapi({ description: "When the file was signed, local time of Chile (TmstCesion)." }),
    registered_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Cession");
export type CessionView = z.infer<typeof CessionSchema>;

type PartyJson = { tax_id: string; legal_name: string; address: string; email: string };

export function cessionView(r: CessionRow): CessionView {
  return {
    id: r.id, company_id: r.companyId, invoice_id: r.invoiceId, invoice_type: String(r.documentType), folio: r.folio, issue_date: r.issueDate, total: r.total,
    debtor: { tax_id: r.debtorRut, legal_name: r.debtorName }, cedent: JSON.parse(r.cedent) as PartyJson, assignee: JSON.parse(r.assignee) as PartyJson,
    amount: r.amount, last_due_date: r.lastDueDate, debtor_email: r.debtorEmail, receipt_basis: r.receiptBasis, declaration: r.declaration,
    status: r.status, fiscal_status: r.fiscalStatus, fiscal_message: r.fiscalMessage, track_id: r.trackId, last_error: r.lastError,
    signed_at: r.signedAt, registered_at: r.registeredAt, created_at: r.createdAt, updated_at: r.updatedAt,
  };
}
