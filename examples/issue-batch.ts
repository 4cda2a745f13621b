/**
 * Many documents in one request with the typed client (clients/typescript): post a batch of
 * facturas (each row the body `POST …/invoices` takes), read which rows were refused and why, and
 * follow the batch until every row is final. A retry with the same Idempotency-Key answers the same
 * batch, so a lost answer is retried safely.
 *
 *   DTE_API_URL=http://127.0.0.1:8787 DTE_API_KEY=dte_test_… COMPANY_ID=cmp_… RUT=76086428-5 \
 *     npx tsx examples/issue-batch.ts
 *
 * The company needs a certificate and folios of type 33 (examples/issue-invoice.ts makes one).
 */
import { createDteClient, type ApiError, type components, type DteClient } from "../clients/typescript";

type Row = components["schemas"]["InvoiceCreate"];

export interface IssueBatchOptions {
  client: DteClient;
  companyId: string;
  rows: Row[];
  /** Called with each step, for the reader. */
  log?: (step: string) => void;
  timeoutMs?: number;
}

export interface BatchOutcome {
  batchId: string;
  counts: components["schemas"]["BatchCounts"];
  /** The refused rows: their position, the error code and the fields at fault. */
  refused: { row: number; code: string; fields: string[] }[];
}

function ok<T>(step: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined) return r.data;
  const e = (r.error as ApiError | undefined)?.error;
  throw new Error(`${step}: HTTP ${r.response.status} ${e ? `${e.code}: ${e.message}` : String(r.error)}`);
}

export async function issueBatch(opts: IssueBatchOptions): Promise<BatchOutcome> {
  const { client, companyId } = opts;
  const log = opts.log ?? (() => undefined);
  const path = { company_id: companyId };

  log(`1/3 posting ${opts.rows.length} documents in one batch`);
  // One key per batch: a retry after a lost answer gets the same batch, never a second one.
  const headers = { "Idempotency-Key": `batch-${crypto.randomUUID()}` };
  const posted = ok("post batch", await client.POST("/api/companies/{company_id}/invoice-batches", { params: { path }, body: { rows: opts.rows }, headers }));
  const refused = posted.results.filter((r) => r.error).map((r) => ({ row: r.row, code: r.error!.code, fields: r.error!.details.map((d) => d.field) }));
  for (const r of refused) log(`   row ${r.row} refused: ${r.code} (${r.fields.join(", ")})`);

  log(`2/3 following batch ${posted.id} (${posted.documents} documents) to the SII's verdicts`);
  const until = Date.now() + (opts.timeoutMs ?? 120_000);
  let batch = posted;
  while (batch.status !== "COMPLETED") {
    if (Date.now() > until) throw new Error(`batch ${posted.id} still ${JSON.stringify(batch.counts)}`);
    await new Promise((r) => setTimeout(r, 500));
    batch = ok("read batch", await client.GET("/api/companies/{company_id}/invoice-batches/{batch_id}", { params: { path: { ...path, batch_id: posted.id }, query: { per_page: "1" } } }));
  }

  log(`3/3 done: ${JSON.stringify(batch.counts)}`);
  return { batchId: posted.id, counts: batch.counts, refused };
}

// Run directly: `npx tsx examples/issue-batch.ts` with DTE_API_URL, DTE_API_KEY, COMPANY_ID and RUT.
if (typeof process !== "undefined" && process.argv[1]?.endsWith("issue-batch.ts")) {
  const need = (name: string) => process.env[name] ?? (console.error(`set ${name}`), process.exit(2));
  const client = createDteClient({ baseUrl: process.env.DTE_API_URL ?? "http://127.0.0.1:8787", apiKey: need("DTE_API_KEY") });
  const rut = need("RUT");
  const now = new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" });
  const factura = (i: number): Row => ({
    invoice_type: "33", invoice_date: now, external_reference: `LOTE-${Date.now()}-${i}`,
    issuer: { legal_name: "Comercial Los Andes SpA", document_type: "RUT", document_number: rut, address: { country: "CL", city: "Santiago", address: "Av. Apoquindo 1234" }, tax_information: { activity: "Venta de artículos de oficina", activity_codes: [477399] } },
    recipient: { legal_name: "Cliente Ltda", document_type: "RUT", document_number: "77.879.240-0", address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" } },
    items: [{ quantity: 1 + i, unit_price: 15000, description: "Resma carta", code_unit_of_measure: "UN" }],
  });
  const done = await issueBatch({ client, companyId: need("COMPANY_ID"), rows: Array.from({ length: 5 }, (_, i) => factura(i)), log: console.log });
  console.log(`batch ${done.batchId}: ${JSON.stringify(done.counts)}`);
}
