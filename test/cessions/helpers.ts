/** Cession test material: an issued factura the SII accepted whose 8 days passed, and the cession's calls. */
import { expect } from "vitest";
import { call } from "../helpers/api";
import type { Issuer } from "../helpers/issuer";
import { afterChecks, checkNow, issuedAccepted } from "../reception/helpers";

const DAY = 86_400_000;

export const ASSIGNEE = { tax_id: "76543210-3", legal_name: "FACTOR DE EJEMPLO SPA", address: "Calle Falsa 456, Las Condes", email: "operaciones@factor.cl" };

export function cessionBody(overrides: Record<string, unknown> = {}) {
  const due = new Date(Date.now() + 30 * DAY).toISOString().slice(0, 10);
  return { assignee: ASSIGNEE, last_due_date: due, contact_email: "cesiones@emisor.cl", ...overrides };
}

/** A factura of `issuer` accepted by the SII whose buyer's 8 days passed without a claim (ACCEPTED_BY_LAW). */
export async function cedibleFactura(issuer: Issuer, type = "33"): Promise<any> {
  const doc = await issuedAccepted(issuer, type);
  await afterChecks(issuer, doc.id, (d) => d.buyer_response?.checked_at !== null, "first read");
  await checkNow(issuer, doc.id, `, sii_received_at = '${new Date(Date.now() - 9 * DAY).toISOString()}'`);
  return afterChecks(issuer, doc.id, (d) => d.buyer_response?.state === "ACCEPTED_BY_LAW", "8 days");
}

export const cede = (issuer: Issuer, invoiceId: string, body: unknown = cessionBody()) => call("POST", `${issuer.base}/invoices/${invoiceId}/cessions`, { key: issuer.owner.key, json: body });

/** The cession once it reached a final status (the queue uploads it and reads the register). */
export async function untilCessionFinal(issuer: Issuer, id: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await call("GET", `${issuer.base}/cessions/${id}`, { key: issuer.owner.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (["REGISTERED", "REJECTED", "FAILED"].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`cession ${id} never reached a final status`);
}
