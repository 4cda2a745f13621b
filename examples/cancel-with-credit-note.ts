/**
 * Cancelling an accepted factura: in Chile a DTE the SII accepted cannot be deleted; it is cancelled
 * by a credit note (nota de crédito, type 61) with reason ANU that references it and repeats its
 * parties and lines. This reads the factura (its folio, type, date and status), issues the note from
 * the body the factura was issued with (which the ERP keeps) and waits for the SII's verdict.
 *
 *   DTE_API_URL=http://127.0.0.1:8787 DTE_API_KEY=dte_test_… COMPANY=cmp_… INVOICE=inv_… \
 *     BODY=factura.json npx tsx examples/cancel-with-credit-note.ts
 */
import { readFileSync } from "node:fs";
import { createDteClient, type ApiError, type components, type DteClient } from "../clients/typescript";

/** The body a document is issued with (POST …/invoices). */
type InvoiceBody = components["schemas"]["InvoiceCreate"];

export interface CancelOptions {
  client: DteClient;
  companyId: string;
  /** The accepted factura to cancel, and the body it was issued with. */
  invoiceId: string;
  issued: InvoiceBody;
  log?: (step: string) => void;
  timeoutMs?: number;
}

/** The data of an answer, or an Error naming the API's error code and message. */
function ok<T>(step: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined) return r.data;
  const e = (r.error as ApiError | undefined)?.error;
  throw new Error(`${step}: HTTP ${r.response.status} ${e ? `${e.code}: ${e.message}` : String(r.error)}`);
}

const FINAL = ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"];

/** Issues the credit note that cancels `invoiceId` and waits for its final status; returns the note. */
export async function cancelWithCreditNote(opts: CancelOptions) {
  const { client, companyId, invoiceId } = opts;
  const log = opts.log ?? (() => undefined);
  const path = { company_id: companyId, invoice_id: invoiceId };

  log(`1/3 reading ${invoiceId}`);
  const invoice = ok("read invoice", await client.GET("/api/companies/{company_id}/invoices/{invoice_id}", { params: { path } }));
  if (invoice.status !== "ACCEPTED" && invoice.status !== "ACCEPTED_WITH_OBJECTIONS") throw new Error(`only an accepted document is cancelled by a note; ${invoiceId} is ${invoice.status}`);

  log(`2/3 issuing the credit note (ANU) that cancels folio ${invoice.folio}`);
  const note = ok("issue credit note", await client.POST("/api/companies/{company_id}/invoices", {
    params: { path: { company_id: companyId } },
    body: {
      invoice_type: "NCV",
      reason_code: "ANU",
      invoice_date: new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" }),
      billing_reference: [{ number: invoice.folio!, invoice_type: invoice.invoice_type, invoice_date: invoice.issue_date }],
      issuer: opts.issued.issuer,
      recipient: opts.issued.recipient,
      items: opts.issued.items,
      external_reference: `CANCEL-${invoiceId}`,
    },
  }));

  log(`3/3 waiting for the SII's verdict on ${note.id}`);
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  let current = note;
  while (!FINAL.includes(current.status)) {
    if (Date.now() > until) throw new Error(`credit note ${note.id} still ${current.status}`);
    await new Promise((r) => setTimeout(r, 250));
    current = ok("read credit note", await client.GET("/api/companies/{company_id}/invoices/{invoice_id}", { params: { path: { company_id: companyId, invoice_id: note.id } } }));
  }
  return current;
}

if (typeof process !== "undefined" && process.argv[1]?.endsWith("cancel-with-credit-note.ts")) {
  const need = (name: string) => process.env[name] ?? (console.error(`set ${name}`), process.exit(2));
  const client = createDteClient({ baseUrl: process.env.DTE_API_URL ?? "http://127.0.0.1:8787", apiKey: need("DTE_API_KEY") });
  const issued = JSON.parse(readFileSync(need("BODY"), "utf8")) as InvoiceBody;
  const done = await cancelWithCreditNote({ client, companyId: need("COMPANY"), invoiceId: need("INVOICE"), issued, log: console.log });
  console.log(`credit note ${done.id}, folio ${done.folio}: ${done.status}`);
}
