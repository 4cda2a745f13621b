import { expect } from "vitest";
import { SAMPLE_INPUTS } from "./cl-samples";
import { call, newCompany, newOwner, nextRut, type Actor } from "./api";
import { makeFakeCertificate, makeFakePfx } from "./fake-certificates";
import { toLocalDateTime } from "../../src/lib/time";
import { sql } from "drizzle-orm";
import { storeRows } from "./store";

export interface Issuer {
  owner: Actor;
  companyId: string;
  rut: string;
  base: string;
}

/** A company ready to issue: an active certificate and CAFs from the simulated SII for `types`. */
export async function readyIssuer(types: (string | number)[] = [33], quantity = 100): Promise<Issuer> {
  const owner = await newOwner("Issuer");
  const rut = nextRut();
  const companyId = await newCompany(owner, { tax_identification_document_number: rut, legal_name: "EMPRESA DE PRUEBA SPA" });
  const cert = await makeFakeCertificate({ rut: "11111111-1", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) });
  const form = new FormData();
  form.append("certificate", new File([makeFakePfx(cert, "pw", "modern") as Uint8Array<ArrayBuffer>], "firma.pfx"));
  form.append("password", "pw");
  const up = await call("POST", `/api/companies/${companyId}/certificates`, { key: owner.key, body: form });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
  for (const t of types) {
    const r = await call("POST", `/api/companies/${companyId}/enumeration/refetch`, { key: owner.key, json: { document_type: String(t), quantity } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  return { owner, companyId, rut, base: `/api/companies/${companyId}` };
}

export function nowLocal(): string {
  return toLocalDateTime(new Date(), "America/Santiago").replace("T", " ");
}

/**
 * A sample dated now (one reading of the clock). A due date it carries moves with it, 30 days after
 * the issue date: the samples' fixed due dates would fall before today's date once the calendar
 * passes them, and a due date before the issue date is refused.
 */
export function datedNow<T extends { invoice_date?: string; payment_due_date?: string }>(sample: T): T {
  const now = nowLocal();
  const due = new Date(Date.parse(`${now.slice(0, 10)}T00:00:00Z`) + 30 * 86_400_000).toISOString().slice(0, 10);
  return { ...sample, invoice_date: now, ...(sample.payment_due_date ? { payment_due_date: due } : {}) };
}

/** A valid body of the sample `name` (see cl-samples) issued by `rut`, dated now. */
export function invoiceBody(rut: string, name: string, overrides: Record<string, unknown> = {}): any {
  const sample = datedNow(structuredClone(SAMPLE_INPUTS[name]!)) as any;
  sample.issuer = { ...sample.issuer, document_number: rut };
  if (sample.billing_reference) sample.billing_reference = sample.billing_reference.map((r: any) => ({ ...r, invoice_date: sample.invoice_date.slice(0, 10) }));
  // The sample 61 cancels (ANU) folio 1 of type 33, which is often the sample 33 issued by the same
  // test: a cancellation of our document carries its exact total (9926).
  if (name === "61") sample.items = [{ quantity: 1, unit_price: 9926, description: "Anula factura 1", taxes: [{ type: "EXE" }] }];
  return { ...sample, ...overrides };
}

const FINAL = ["ACCEPTED", "ACCEPTED_WITH_OBJECTIONS", "REJECTED", "FAILED"];

/** Polls GET until the document reaches a final status (the real queue consumer does the work). */
export async function untilFinal(issuer: Issuer, id: string, timeoutMs = 60_000): Promise<any> {
  const start = Date.now();
  for (;;) {
    const res = await call("GET", `${issuer.base}/invoices/${id}`, { key: issuer.owner.key });
    expect(res.status).toBe(200);
    if (FINAL.includes(res.body.status)) return res.body;
    if (Date.now() - start > timeoutMs) throw new Error(`document ${id} still ${res.body.status} after ${timeoutMs} ms: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until no document of the company has a buyer delivery still pending (each accepted document
 * starts one in the queue): a file calls it before it ends, so no queue consumer is still working
 * (and logging) as the test environment closes.
 */
export async function untilBuyerDeliveriesSettled(issuer: Issuer, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    const rows = await storeRows<{ n: number }>(issuer.companyId, sql`SELECT count(*) AS n FROM invoices WHERE json_extract(buyer_delivery, '$.state') = 'PENDING'`);
    const pending = rows.reduce((sum, r) => sum + r.n, 0);
    if (pending === 0) return;
    if (Date.now() - start > timeoutMs) throw new Error(`${pending} buyer deliveries of ${issuer.companyId} still pending after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function issue(issuer: Issuer, body: unknown, headers: Record<string, string> = {}) {
  return call("POST", `${issuer.base}/invoices`, { key: issuer.owner.key, json: body, headers });
}
