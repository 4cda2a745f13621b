/**
 * Tenancy and roles over every route, generated from the route registry.
 *
 * Two clients, A and B, each with an OWNER, an ADMIN and a MEMBER key (granted the client's
 * companies) and one of every resource: companies, certificate, CAF, invoice, received document,
 * webhook, delivery, user, API key, dead letter. Every role of A calls every operation
 * - on B's resources: a company of B is 403 AUTH_COMPANY_ACCESS_DENIED whatever the role
 *   (DECISIONS 7); B's users and keys, and B's sub-resources under A's own company, answer exactly
 *   like missing ones;
 * - on its own: exactly the role matrix (DECISIONS 6): 403 AUTH_ROLE_FORBIDDEN when the role may not,
 *   otherwise the operation is reached (never 401/403; reads answer 200).
 * MATRIX below states each operation's permission; a route added without an entry fails the suite.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { deadLetters } from "../../src/storage/db/schema";
import { can, ROLES, type Permission, type Role } from "../../src/accounts/access/roles";
import { ROUTE_REGISTRY, type RegisteredRoute } from "../../src/http/route";
import { recordDeadLetters } from "../../src/operations/dead-letters";
import { eq } from "drizzle-orm";
import { call, newCompany, newKey, type Actor, type ApiResponse } from "../helpers/api";
import { invoiceBody, issue, readyIssuer, untilFinal } from "../helpers/issuer";
import { buildResultadoDte } from "../../src/countries/cl/exchange/responses";
import { envelope, fakeCredentials, signedDte, simulatorCaf } from "../sii/helpers";
import { register, receiverUrl } from "../webhooks/helpers";
import { afterChecks, checkNow } from "../reception/helpers";
import { cessionBody, untilCessionFinal } from "../cessions/helpers";

/** The role matrix per operation (DECISIONS 6). */
const MATRIX: Record<string, Permission> = {
  "DELETE /api/api-keys/{api_key_id}": "users:manage",
  "DELETE /api/api-keys/{api_key_id}/companies/{company_id}": "users:manage",
  "DELETE /api/companies/{company_id}/certificates/{certificate_id}": "company:configure",
  "DELETE /api/companies/{company_id}/webhooks/{webhook_id}": "company:configure",
  "DELETE /api/companies/{idCompany}": "company:delete",
  "DELETE /api/users/{user_id}": "users:manage",
  "GET /api/api-keys": "users:manage",
  "GET /api/catalogs": "company:read",
  "GET /api/catalogs/{country}": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/countries": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/package-types": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/payment-forms": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/ports": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/sale-clauses": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/sale-modalities": "company:read",
  "GET /api/catalogs/{country}/additional-export-info/transport-modes": "company:read",
  "GET /api/catalogs/{country}/communes": "company:read",
  "GET /api/catalogs/{country}/countries": "company:read",
  "GET /api/catalogs/{country}/currencies": "company:read",
  "GET /api/catalogs/{country}/dispatch-kinds": "company:read",
  "GET /api/catalogs/{country}/document-cancellation-reasons": "company:read",
  "GET /api/catalogs/{country}/document-types": "company:read",
  "GET /api/catalogs/{country}/item-code-types": "company:read",
  "GET /api/catalogs/{country}/legal-activities": "company:read",
  "GET /api/catalogs/{country}/legal-entities": "company:read",
  "GET /api/catalogs/{country}/measurement-units": "company:read",
  "GET /api/catalogs/{country}/payment-means": "company:read",
  "GET /api/catalogs/{country}/payment-types": "company:read",
  "GET /api/catalogs/{country}/reference-types": "company:read",
  "GET /api/catalogs/{country}/regions": "company:read",
  "GET /api/catalogs/{country}/sii-offices": "company:read",
  "GET /api/catalogs/{country}/tax-identification-documents": "company:read",
  "GET /api/catalogs/{country}/tax-information": "company:read",
  "GET /api/catalogs/{country}/tax-types": "company:read",
  "GET /api/catalogs/{country}/taxpayers/{tax_id}": "company:read",
  "GET /api/catalogs/{country}/transfer-kinds": "company:read",
  "GET /api/companies": "company:read",
  "GET /api/invoice-batches/csv-template": "document:read",
  "GET /api/companies/{company_id}/certificates": "company:read",
  "GET /api/companies/{company_id}/certificates/{certificate_id}": "company:read",
  "GET /api/companies/{company_id}/cessions": "document:read",
  "GET /api/companies/{company_id}/cessions/{cession_id}": "document:read",
  "GET /api/companies/{company_id}/cessions/{cession_id}/pdf": "document:read",
  "GET /api/companies/{company_id}/cessions/{cession_id}/xml": "document:read",
  "GET /api/companies/{company_id}/dead-letters": "company:configure",
  "GET /api/companies/{company_id}/invoice-batches": "document:read",
  "GET /api/companies/{company_id}/invoice-batches/{batch_id}": "document:read",
  "GET /api/companies/{company_id}/invoices": "document:read",
  "GET /api/companies/{company_id}/invoices/{invoice_id}": "document:read",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery/xml": "document:read",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/buyer_replies/{reply_id}/xml": "document:read",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/cessions": "document:read",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/xml": "document:read",
  "GET /api/companies/{company_id}/webhook-deliveries": "company:read",
  "GET /api/companies/{company_id}/webhook-deliveries/{delivery_id}": "company:read",
  "GET /api/companies/{company_id}/webhooks": "company:read",
  "GET /api/companies/{company_id}/webhooks/{webhook_id}": "company:read",
  "GET /api/companies/{company_id}/webhooks/{webhook_id}/deliveries": "company:read",
  "GET /api/companies/{idCompany}": "company:read",
  "GET /api/companies/{idCompany}/enumeration/list": "company:read",
  "GET /api/companies/{idCompany}/settings": "company:read",
  "GET /api/me": "company:read",
  "GET /api/reception/invoices/list": "document:read",
  "GET /api/reception/invoices/{purchase_id}": "document:read",
  "GET /api/reception/messages": "document:read",
  "GET /api/reception/messages/{message_id}": "document:read",
  "GET /api/users": "users:manage",
  "GET /api/users/{user_id}": "users:manage",
  "PATCH /api/companies/{company_id}/webhooks/{webhook_id}": "company:configure",
  "PATCH /api/companies/{idCompany}/settings": "company:configure",
  "PATCH /api/companies/{idCompany}": "company:configure",
  "POST /api/companies": "company:create",
  "POST /api/companies/{company_id}/certificates": "company:configure",
  "POST /api/companies/{company_id}/certificates/{certificate_id}/activate": "company:configure",
  "POST /api/companies/{company_id}/dead-letters/{dead_letter_id}/redrive": "company:configure",
  "POST /api/companies/{company_id}/invoice-batches": "document:issue",
  "POST /api/companies/{company_id}/invoices": "document:issue",
  "POST /api/companies/{company_id}/invoices/buyer_replies": "document:issue",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery": "document:issue",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/buyer_response/check": "document:read",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/cessions": "document:issue",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/download-base64/{format}": "document:read",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/download-pdf/{format}": "document:read",
  "POST /api/companies/{company_id}/webhooks": "company:configure",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/redeliver": "company:configure",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/rotate-secret": "company:configure",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/test": "company:configure",
  "POST /api/companies/{idCompany}/enumeration/refetch": "company:configure",
  "POST /api/companies/{idCompany}/enumeration/upload": "company:configure",
  "POST /api/companies/{idCompany}/logo": "company:configure",
  "POST /api/reception/invoices/upload": "document:issue",
  "POST /api/reception/invoices/{purchase_id}/cession/check": "document:read",
  "POST /api/reception/invoices/{purchase_id}/download/{type}": "document:read",
  "POST /api/reception/invoices/{purchase_id}/reply_mail": "reception:respond",
  "POST /api/reception/invoices/{purchase_id}/send_response": "reception:respond",
  "POST /api/users": "users:manage",
  "POST /api/users/{user_id}/api-keys": "users:manage",
  "PUT /api/api-keys/{api_key_id}/companies/{company_id}": "users:manage",
  "PUT /api/companies/{idCompany}/enumeration/document-type/{document_type_id}/alert-threshold": "company:configure",
  "PUT /api/companies/{idCompany}/enumeration/document-type/{document_type_id}/next-folio": "company:configure",
};

/** Ids of one client's resources, by path parameter name. */
interface Tenant {
  keys: Record<Role, Actor>;
  company: string;
  /** The company that receives suppliers' documents (RUT of the reception samples). */
  receiver: string;
  /** A company only the DELETE test may delete. */
  disposable: string;
  ids: Record<string, string>;
}

const MISSING: Record<string, string> = {
  certificate_id: "cer_01AAAAAAAAAAAAAAAAAAAAAAAA", invoice_id: "inv_01AAAAAAAAAAAAAAAAAAAAAAAA", webhook_id: "whk_01AAAAAAAAAAAAAAAAAAAAAAAA",
  delivery_id: "dlv_01AAAAAAAAAAAAAAAAAAAAAAAA", user_id: "usr_01AAAAAAAAAAAAAAAAAAAAAAAA", api_key_id: "key_01AAAAAAAAAAAAAAAAAAAAAAAA",
  purchase_id: "rcv_01AAAAAAAAAAAAAAAAAAAAAAAA", reply_id: "rpl_0000000000000000000000000a", message_id: "inm_01AAAAAAAAAAAAAAAAAAAAAAAA", dead_letter_id: "dlq_01AAAAAAAAAAAAAAAAAAAAAAAA",
  cession_id: "ces_01AAAAAAAAAAAAAAAAAAAAAAAA",
  batch_id: "bat_p1_01AAAAAAAAAAAAAAAAAAAAAAAA",
};
const FIXED: Record<string, string> = { format: "A4", type: "xml", document_type_id: "33", country: "CL", tax_id: "76086428-5" };

async function tenant(name: string): Promise<Tenant> {
  const issuer = await readyIssuer([33]);
  const owner = issuer.owner;
  const keys = { OWNER: owner, ADMIN: await newKey(owner.clientId, "ADMIN", `${name} admin`), MEMBER: await newKey(owner.clientId, "MEMBER", `${name} member`) };
  const receiver = await newCompany(owner, { tax_identification_document_number: "77879240-0", legal_name: "CLIENTE LIMITADA" });
  const disposable = await newCompany(owner);
  for (const c of [issuer.companyId, receiver, disposable]) {
    expect((await call("PUT", `/api/api-keys/${keys.MEMBER.apiKeyId}/companies/${c}`, { key: owner.key })).status).toBe(200);
  }
  const certificate_id = (await call("GET", `${issuer.base}/certificates`, { key: owner.key })).body.data[0].id;
  const posted = await issue(issuer, invoiceBody(issuer.rut, "33"));
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  const batch = await call("POST", `${issuer.base}/invoice-batches`, { key: owner.key, json: { rows: [invoiceBody(issuer.rut, "33")] } });
  expect(batch.status, JSON.stringify(batch.body)).toBe(202);
  const webhook_id = (await register(owner, issuer.companyId, { url: receiverUrl(`tenancy-${name}`).url, events: ["*"] })).id;
  const test = await call("POST", `${issuer.base}/webhooks/${webhook_id}/test`, { key: owner.key });
  expect(test.status).toBe(202);
  const user = await call("POST", "/api/users", { key: owner.key, json: { email: `${name.toLowerCase()}@tenancy.test`, name } });
  expect(user.status, JSON.stringify(user.body)).toBe(201);
  const key = await call("POST", `/api/users/${user.body.id}/api-keys`, { key: owner.key, json: { name: "POS", role: "MEMBER" } });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  const signer = await fakeCredentials();
  const caf = await simulatorCaf({ documentType: 33, from: 1, to: 10 });
  const form = new FormData();
  form.append("file", new File([(await envelope([await signedDte(caf, 1, signer)], signer)).xml as BlobPart], "envio.xml", { type: "text/xml" }));
  const received = await call("POST", `/api/reception/invoices/upload?company_id=${receiver}`, { key: owner.key, body: form });
  expect(received.status, JSON.stringify(received.body)).toBe(201);
  const [inbound] = (await call("GET", `/api/reception/messages?company_id=${receiver}`, { key: owner.key })).body.data;
  const messageId = `tenancy-${name}-${crypto.randomUUID()}`;
  await recordDeadLetters(createDb(env.DB), "webhooks", [{ id: messageId, timestamp: new Date(), attempts: 20, body: { v: 1, type: "fanout", company_id: issuer.companyId } } as unknown as Message<unknown>]);
  const [letter] = await createDb(env.DB).select().from(deadLetters).where(eq(deadLetters.messageId, messageId));
  // A buyer's reply read onto the issued document (it needs its folio).
  const issued = await untilFinal(issuer, posted.body.id);
  const reply = await buildResultadoDte({
    responderRut: issued.recipient.tax_id, recipientRut: issuer.rut, timestamp: "2026-11-24T09:30:00", signer, responseId: 1,
    results: [{ type: 33, folio: issued.folio, issueDate: issued.issue_date, issuerRut: issuer.rut, receiverRut: issued.recipient.tax_id, total: issued.total, receptionCode: 1, status: 0, statusText: "OK" }],
  });
  const replyForm = new FormData();
  replyForm.append("file", new File([reply.xml as BlobPart], "respuesta.xml", { type: "text/xml" }));
  const replied = await call("POST", `${issuer.base}/invoices/buyer_replies`, { key: owner.key, body: replyForm });
  expect(replied.body.entries?.[0]?.outcome, JSON.stringify(replied.body)).toBe("RECORDED");
  // Mailed to its buyer at an address given (the sample buyer is not in the directory): its envelope exists.
  const delivered = await call("POST", `${issuer.base}/invoices/${issued.id}/buyer_delivery`, { key: owner.key, json: { email: `dte@${name.toLowerCase()}.example` } });
  expect(delivered.body.buyer_delivery?.state, JSON.stringify(delivered.body)).toBe("SENT");
  // A cession of it, once its buyer's 8 days pass.
  await afterChecks(issuer, issued.id, (d) => d.buyer_response?.checked_at !== null, "first read");
  await checkNow(issuer, issued.id, `, sii_received_at = '${new Date(Date.now() - 9 * 86_400_000).toISOString()}'`);
  await afterChecks(issuer, issued.id, (d) => d.buyer_response?.state === "ACCEPTED_BY_LAW", "8 days");
  const ceded = await call("POST", `${issuer.base}/invoices/${issued.id}/cessions`, { key: owner.key, json: cessionBody() });
  expect(ceded.status, JSON.stringify(ceded.body)).toBe(202);
  expect((await untilCessionFinal(issuer, ceded.body.id)).status).toBe("REGISTERED");
  return {
    keys,
    company: issuer.companyId,
    receiver,
    disposable,
    ids: {
      certificate_id, invoice_id: posted.body.id, webhook_id, delivery_id: test.body.id, user_id: user.body.id, api_key_id: key.body.id,
      purchase_id: received.body.documents[0].id, reply_id: replied.body.entries[0].reply_id, message_id: inbound.id, dead_letter_id: letter!.id, cession_id: ceded.body.id, batch_id: batch.body.id,
    },
  };
}

const name = (r: RegisteredRoute) => `${r.route.method.toUpperCase()} ${r.route.path}`;
const routes = ROUTE_REGISTRY.filter((r) => !r.public);

/** The path of an operation with the company and sub-resource ids given. */
function pathOf(r: RegisteredRoute, company: string, ids: Record<string, string>): string {
  const path = r.route.path
    .replace(/\{(idCompany|company_id)\}/g, company)
    .replace(/\{([^}]+)\}/g, (_, p: string) => ids[p] ?? FIXED[p] ?? `missing-${p}`);
  return r.companyInQuery ? `${path}?company_id=${company}` : path;
}

/** A valid body where an empty one would stop at validation before the resource is looked up. */
const BODIES: Record<string, unknown> = { "POST /api/users/{user_id}/api-keys": { name: "tenancy", role: "MEMBER" }, "PATCH /api/companies/{idCompany}": { issuer_profile: null } };

function send(r: RegisteredRoute, path: string, actor: Actor): Promise<ApiResponse> {
  const method = r.route.method.toUpperCase();
  return call(method, path, { key: actor.key, ...(["POST", "PUT", "PATCH"].includes(method) ? { json: BODIES[name(r)] ?? {} } : {}) });
}

/** What a caller can compare: status and code (the message may name the id it was given). */
const answer = (res: ApiResponse) => ({ status: res.status, code: res.body?.error?.code ?? null });

/**
 * Operations that would destroy the fixture (or another role's next call) take a missing
 * sub-resource on the caller's own side; the company DELETE takes the disposable company.
 */
const DESTRUCTIVE = (r: RegisteredRoute) => r.route.method === "delete";

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  a = await tenant("A");
  b = await tenant("B");
}, 180_000);

describe("tenancy and roles over every route", () => {
  it("every authenticated route has an entry in the matrix, with the permission the route enforces", () => {
    expect(routes.map(name).sort()).toEqual(Object.keys(MATRIX).sort());
    for (const r of routes) expect(r.permission, name(r)).toBe(MATRIX[name(r)]);
  });

  for (const r of routes) {
    const permission = MATRIX[name(r)]!;
    const subIds = [...r.route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).filter((p) => p in MISSING);

    // MEMBER and ADMIN first: an OWNER's allowed call may change what the others would find.
    for (const role of [...ROLES].reverse()) {
      it(`${name(r)}: ${role} of A on B's resources`, async () => {
        const actor = a.keys[role];
        if (r.underCompany) {
          const company = r.companyInQuery ? b.receiver : b.company;
          const res = await send(r, pathOf(r, company, b.ids), actor);
          expect(answer(res), JSON.stringify(res.body)).toEqual({ status: 403, code: "AUTH_COMPANY_ACCESS_DENIED" });
          if (subIds.length > 0) {
            // B's sub-resources under A's own company: exactly as missing ones.
            const own = r.companyInQuery ? a.receiver : a.company;
            const theirs = await send(r, pathOf(r, own, b.ids), actor);
            const missing = await send(r, pathOf(r, own, MISSING), actor);
            expect(answer(theirs), `${JSON.stringify(theirs.body)} vs ${JSON.stringify(missing.body)}`).toEqual(answer(missing));
            expect([401, 403].includes(theirs.status) && theirs.body.error.code !== "AUTH_ROLE_FORBIDDEN").toBe(false);
          }
        } else if (subIds.length > 0) {
          const theirs = await send(r, pathOf(r, a.company, b.ids), actor);
          const missing = await send(r, pathOf(r, a.company, MISSING), actor);
          expect(answer(theirs), `${JSON.stringify(theirs.body)} vs ${JSON.stringify(missing.body)}`).toEqual(answer(missing));
          if (!can(role, permission)) expect(answer(theirs)).toEqual({ status: 403, code: "AUTH_ROLE_FORBIDDEN" });
          else expect(theirs.status).toBe(404);
        }
      });

      it(`${name(r)}: ${role} of A on its own`, async () => {
        const actor = a.keys[role];
        const company = name(r) === "DELETE /api/companies/{idCompany}" ? a.disposable : r.companyInQuery ? a.receiver : a.company;
        const ids = DESTRUCTIVE(r) ? { ...a.ids, ...Object.fromEntries(subIds.slice(-1).map((p) => [p, MISSING[p]!])) } : a.ids;
        const res = await send(r, pathOf(r, company, ids), actor);
        if (!can(role, permission)) {
          expect(answer(res), JSON.stringify(res.body)).toEqual({ status: 403, code: "AUTH_ROLE_FORBIDDEN" });
        } else {
          expect([401, 403], `${res.status} ${JSON.stringify(res.body)}`).not.toContain(res.status);
          if (r.route.method === "get") expect(res.status, JSON.stringify(res.body)).toBe(200);
        }
      });
    }
  }

  it("a MEMBER key reaches only the companies granted to it; OWNER and ADMIN reach every company of their client", async () => {
    const ungranted = await newCompany(a.keys.OWNER);
    for (const role of ROLES) {
      const res = await call("GET", `/api/companies/${ungranted}`, { key: a.keys[role].key });
      expect(answer(res)).toEqual(role === "MEMBER" ? { status: 403, code: "AUTH_COMPANY_ACCESS_DENIED" } : { status: 200, code: null });
    }
  });

  it("only an OWNER manages OWNER keys (an ADMIN may not create or revoke one)", async () => {
    const created = await call("POST", `/api/users/${a.ids.user_id}/api-keys`, { key: a.keys.ADMIN.key, json: { name: "escalation", role: "OWNER" } });
    expect(answer(created)).toEqual({ status: 403, code: "AUTH_ROLE_FORBIDDEN" });
    const revoked = await call("DELETE", `/api/api-keys/${a.keys.OWNER.apiKeyId}`, { key: a.keys.ADMIN.key });
    expect(answer(revoked)).toEqual({ status: 403, code: "AUTH_ROLE_FORBIDDEN" });
    expect((await call("GET", "/api/me", { key: a.keys.OWNER.key })).status).toBe(200);
  });
});
