/**
 * From nothing to an accepted factura with the typed client (clients/typescript): create a company,
 * upload its signing certificate, get a CAF from the (simulated) SII's portal and upload it, issue a
 * factura, wait until the SII accepts it, and fetch its PDF. With a test key everything runs against
 * the built-in SII simulator.
 *
 *   DTE_API_URL=http://127.0.0.1:8787 DTE_API_KEY=dte_test_… PFX=firma.pfx PFX_PASSWORD=… \
 *     npx tsx examples/issue-invoice.ts          # writes factura-<folio>.pdf
 *
 * `npm run demo` does all of it for you (server, key and a test certificate included).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createDteClient, type ApiError, type components, type DteClient } from "../clients/typescript";

export interface IssueInvoiceOptions {
  client: DteClient;
  /** The signing certificate (.pfx) and its password. */
  pfx: Uint8Array;
  password: string;
  /** The company's RUT; default: a new valid one each run. */
  rut?: string;
  /** Called with each step, for the reader. */
  log?: (step: string) => void;
  /** How long to wait for the SII's verdict. */
  timeoutMs?: number;
}

export interface IssuedInvoice {
  companyId: string;
  invoiceId: string;
  folio: number;
  status: string;
  pdf: Uint8Array;
  /** The body the factura was issued with (what an ERP keeps, e.g. to cancel it later). */
  body: components["schemas"]["InvoiceCreate"];
}

/** Module 11 check digit of a RUT body (the SII's rule). */
export function rutCheckDigit(body: string): string {
  let sum = 0;
  let factor = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * factor;
    factor = factor === 7 ? 2 : factor + 1;
  }
  const dv = 11 - (sum % 11);
  return dv === 11 ? "0" : dv === 10 ? "K" : String(dv);
}

export function randomRut(): string {
  const body = String(60_000_000 + Math.floor(Math.random() * 30_000_000));
  return `${body}-${rutCheckDigit(body)}`;
}

/** The data of an answer, or an Error naming the API's error code and message. */
function ok<T>(step: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined) return r.data;
  const e = (r.error as ApiError | undefined)?.error;
  throw new Error(`${step}: HTTP ${r.response.status} ${e ? `${e.code}: ${e.message}` : String(r.error)}`);
}

function santiagoNow(): string {
  // "YYYY-MM-DD HH:MM:SS" in the company's time zone (the API's default, America/Santiago).
  return new Date().toLocaleString("sv-SE", { timeZone: "America/Santiago" });
}

export async function issueInvoice(opts: IssueInvoiceOptions): Promise<IssuedInvoice> {
  const { client } = opts;
  const log = opts.log ?? (() => undefined);
  const rut = opts.rut ?? randomRut();

  log(`1/6 creating the company ${rut}`);
  const company = ok("create company", await client.POST("/api/companies", {
    body: { legal_name: "Comercial Los Andes SpA", tax_identification_document_code: "RUT", tax_identification_document_number: rut, country: "CL", start_activities_date: "2019-03-01" },
  }));
  const idCompany = company.id;

  log("2/6 uploading the signing certificate");
  ok("upload certificate", await client.POST("/api/companies/{company_id}/certificates", {
    params: { path: { company_id: idCompany } },
    body: { certificate: "", password: opts.password },
    bodySerializer: () => {
      const form = new FormData();
      form.append("certificate", new Blob([opts.pfx as Uint8Array<ArrayBuffer>]), "firma.pfx");
      form.append("password", opts.password);
      return form;
    },
  }));

  log("3/6 downloading folios (a CAF) from the SII portal of the simulator, and uploading them");
  const caf = await client.POST("/simulator/sii/caf", { body: { rut, document_type: 33, from: 1, to: 10 }, parseAs: "arrayBuffer" });
  const cafXml = ok("download CAF", caf) as ArrayBuffer;
  ok("upload CAF", await client.POST("/api/companies/{idCompany}/enumeration/upload", {
    params: { path: { idCompany } },
    body: { file: "" },
    bodySerializer: () => {
      const form = new FormData();
      form.append("file", new Blob([cafXml], { type: "application/xml" }), "caf33.xml");
      return form;
    },
  }));

  log("4/6 issuing a factura electrónica (type 33)");
  const body: components["schemas"]["InvoiceCreate"] = {
    invoice_type: "33",
    invoice_date: santiagoNow(),
    external_reference: `DEMO-${Date.now()}`,
    issuer: {
      legal_name: "Comercial Los Andes SpA", document_type: "RUT", document_number: rut,
      address: { country: "CL", city: "Santiago", address: "Av. Apoquindo 1234" },
      tax_information: { activity: "Venta de artículos de oficina", activity_codes: [477399] },
    },
    recipient: {
      legal_name: "Cliente Ltda", document_type: "RUT", document_number: "77.879.240-0",
      address: { country: "CL", city: "Ñuñoa", address: "Irarrázaval 2401" }, tax_information: { activity: "Comercio" },
    },
    items: [{ quantity: 2, unit_price: 15000, description: "Resma carta", code_unit_of_measure: "UN" }],
    totals: { total: 35700 },
  };
  const created = ok("issue invoice", await client.POST("/api/companies/{company_id}/invoices", { params: { path: { company_id: idCompany } }, body }));
  const invoiceId = created.id;

  log(`5/6 waiting for the SII's verdict on ${invoiceId}`);
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  let invoice = created;
  while (!["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"].includes(invoice.status)) {
    if (Date.now() > until) throw new Error(`invoice ${invoiceId} still ${invoice.status}`);
    await new Promise((r) => setTimeout(r, 250));
    invoice = ok("read invoice", await client.GET("/api/companies/{company_id}/invoices/{invoice_id}", { params: { path: { company_id: idCompany, invoice_id: invoiceId } } }));
  }
  if (invoice.status !== "ACCEPTED") throw new Error(`invoice ${invoiceId} ended ${invoice.status}: ${invoice.fiscal_message ?? ""}`);

  log(`6/6 downloading the PDF of folio ${invoice.folio}`);
  const pdf = await client.POST("/api/companies/{company_id}/invoices/{invoice_id}/download-pdf/{format}", {
    params: { path: { company_id: idCompany, invoice_id: invoiceId, format: "A4" } },
    parseAs: "arrayBuffer",
  });
  return { companyId: idCompany, invoiceId, folio: invoice.folio!, status: invoice.status, pdf: new Uint8Array(ok("download PDF", pdf) as ArrayBuffer), body };
}

// Run directly: `npx tsx examples/issue-invoice.ts` with DTE_API_URL, DTE_API_KEY, PFX, PFX_PASSWORD.
if (typeof process !== "undefined" && process.argv[1]?.endsWith("issue-invoice.ts")) {
  const need = (name: string) => process.env[name] ?? (console.error(`set ${name}`), process.exit(2));
  const client = createDteClient({ baseUrl: process.env.DTE_API_URL ?? "http://127.0.0.1:8787", apiKey: need("DTE_API_KEY") });
  const done = await issueInvoice({ client, pfx: readFileSync(need("PFX")), password: need("PFX_PASSWORD"), log: console.log });
  const file = `factura-${done.folio}.pdf`;
  writeFileSync(file, done.pdf);
  console.log(`${done.status}: ${file} written (invoice ${done.invoiceId} of company ${done.companyId})`);
}
