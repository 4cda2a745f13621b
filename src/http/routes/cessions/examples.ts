/**
 * Examples of the cession operations (checked by test/api/examples.test.ts): the factura 1042 of
 * COMERCIAL LOS ANDES SPA to DISTRIBUIDORA EL SIMULADOR S.A. (1.190.000) ceded whole to a factor.
 */
import { EX, examplePage } from "../../openapi/example-ids";

export const cessionCreateExample = {
  assignee: { tax_id: EX.factorRut, legal_name: "FACTOR DE EJEMPLO SPA", address: "Calle Falsa 456, Las Condes", email: "operaciones@factor.cl" },
  last_due_date: "2026-12-27",
  contact_email: "finanzas@losandes.cl",
  debtor_email: "pagos@elsimulador.cl",
};

const base = {
  id: EX.cession,
  company_id: EX.company,
  invoice_id: EX.invoice,
  invoice_type: "33",
  folio: 1042,
  issue_date: "2026-11-27",
  total: "1190000",
  debtor: { tax_id: EX.buyerRut, legal_name: "DISTRIBUIDORA EL SIMULADOR S.A." },
  cedent: { tax_id: EX.issuerRut, legal_name: "COMERCIAL LOS ANDES SPA", address: "Av. Providencia 1234, Providencia", email: "finanzas@losandes.cl" },
  assignee: { ...cessionCreateExample.assignee },
  amount: "1190000",
  last_due_date: "2026-12-27",
  debtor_email: "pagos@elsimulador.cl",
  receipt_basis: "BUYER_RECEIPT" as const,
  declaration:
    "Se declara bajo juramento que COMERCIAL LOS ANDES SPA, RUT 76086428-5 ha puesto a disposición del cesionario FACTOR DE EJEMPLO SPA, RUT 76543210-3, el o los documentos donde constan los recibos de las mercaderías entregadas o servicios prestados, entregados por parte del deudor de la factura DISTRIBUIDORA EL SIMULADOR S.A., RUT 96790240-3, de acuerdo a lo establecido en la Ley N°19.983.",
  signed_at: "2026-12-02T10:15:00",
  created_at: "2026-12-02T13:15:00.000Z",
};

/** Just asked for: signed and on its way to the register. */
export const cessionSignedExample = { ...base, status: "SIGNED" as const, fiscal_status: null, fiscal_message: null, track_id: null, last_error: null, registered_at: null, updated_at: base.created_at };

/** Annotated by the register: the factor holds the credit. */
export const cessionRegisteredExample = {
  ...base,
  status: "REGISTERED" as const,
  fiscal_status: "EOK",
  fiscal_message: "Cesión registrada",
  track_id: "8012345",
  last_error: null,
  registered_at: "2026-12-02T13:16:04.000Z",
  updated_at: "2026-12-02T13:16:04.000Z",
};

export const cessionListExample = { data: [cessionRegisteredExample] };
export const cessionPageExample = examplePage([cessionRegisteredExample]);

/** A received document's cession, as the register answered it. */
export const receivedCessionExample = {
  holder_tax_id: EX.factorRut,
  annotated_at: "2026-12-02T10:16:04-03:00",
  collection_tax_id: null,
  amount: null,
  first_seen_at: "2026-12-02T14:00:00.000Z",
  checked_at: "2026-12-02T14:00:00.000Z",
};
