/** The webhook events of cessions, as the event catalogue (src/webhooks/catalog.ts) lists them. */
import { CessionSchema, type CessionView } from "./view";

const example: CessionView = {
  id: "ces_p1_01JD3Q4M6YV8T1N5B2K7C9XW3E", company_id: "cmp_4Q7TXW1B5N9C3D6F0HJ8ZK2M", invoice_id: "inv_p1_8ZK2M4Q7TXW1B5N9C3D6F0HJ", invoice_type: "33", folio: 1042, issue_date: "2026-11-23", total: "35700",
  debtor: { tax_id: "77879240-0", legal_name: "Cliente Ltda" },
  cedent: { tax_id: "76086428-5", legal_name: "Empresa SpA", address: "Av. Siempre Viva 123, Santiago", email: "cesiones@empresa.cl" },
  assignee: { tax_id: "76543210-3", legal_name: "FACTOR DE EJEMPLO SPA", address: "Calle Falsa 456, Las Condes", email: "operaciones@factor.cl" },
  amount: "35700", last_due_date: "2026-12-23", debtor_email: null, receipt_basis: "EIGHT_DAYS", declaration: "Se declara bajo juramento que Empresa SpA, RUT 76086428-5 ha puesto a disposición del cesionario …",
  status: "REGISTERED", fiscal_status: "EOK", fiscal_message: "EOK: Envío aceptado: cesión anotada en el registro / Accepted: the cession is registered", track_id: "38936", last_error: null,
  signed_at: "2026-12-02T10:15:20", registered_at: "2026-12-02T13:16:02.000Z", created_at: "2026-12-02T13:15:20.000Z", updated_at: "2026-12-02T13:16:02.000Z",
};

export const CESSION_EVENTS = {
  "invoice.ceded": {
    description: "A cession of the company's document was annotated in the SII's register of cessions (RPETC): the assignee now holds the credit and the buyer must pay it. `data` is the cession as `GET …/cessions/{id}` answers it.",
    data: CessionSchema,
    example,
  },
  "cession.rejected": {
    description: "The SII's register refused a cession (`status` REJECTED, `fiscal_status` RSC, RFS, RCR, RDC or RCS with `fiscal_message` saying why), or it could not be uploaded (`status` FAILED, `last_error` says why). The document stays the company's; a new cession of it may be asked for. `data` is the cession as `GET …/cessions/{id}` answers it.",
    data: CessionSchema,
    example: { ...example, status: "REJECTED", fiscal_status: "RCS", fiscal_message: "RCS: Rechazado: cesión inválida / Rejected: the cession is not valid (MontoCesion mayor que el monto total del documento)", registered_at: null },
  },
} as const;
