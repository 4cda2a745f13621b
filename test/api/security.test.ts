import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/storage/db/client";
import { revokeKey } from "../../src/accounts/access/users";
import { can } from "../../src/accounts/access/roles";
import { ROUTE_REGISTRY } from "../../src/http/route";
import { call, expectError, newCompany, newKey, newOwner, type Actor } from "../helpers/api";

/**
 * The shared security suite: every authenticated route in the registry (so every route added later
 * too) must answer 401 without a valid key, 403 for another client's company and 403 for a role that
 * may not perform it.
 */
let owner: Actor;
let revoked: Actor;
let member: Actor;
let stranger: Actor;
let companyId: string;

beforeAll(async () => {
  owner = await newOwner("Security A");
  companyId = await newCompany(owner);
  revoked = await newKey(owner.clientId, "ADMIN");
  await revokeKey(createDb(env.DB), env, { apiKeyId: owner.apiKeyId, clientId: owner.clientId, role: "OWNER", livemode: false }, revoked.apiKeyId);
  member = await newKey(owner.clientId, "MEMBER");
  const grant = await call("PUT", `/api/api-keys/${member.apiKeyId}/companies/${companyId}`, { key: owner.key });
  expect(grant.status).toBe(200);
  stranger = await newOwner("Security B");
});

const routes = ROUTE_REGISTRY.filter((r) => !r.public);

/**
 * The authenticated operations this suite covers, by name. A route added without an entry here (or
 * removed while still listed) fails the first test, so no operation escapes the checks below.
 */
const COVERED = [
  "DELETE /api/api-keys/{api_key_id}",
  "DELETE /api/api-keys/{api_key_id}/companies/{company_id}",
  "DELETE /api/companies/{company_id}/certificates/{certificate_id}",
  "DELETE /api/companies/{company_id}/webhooks/{webhook_id}",
  "DELETE /api/companies/{idCompany}",
  "DELETE /api/users/{user_id}",
  "GET /api/api-keys",
  "GET /api/catalogs",
  "GET /api/catalogs/{country}",
  "GET /api/catalogs/{country}/additional-export-info/countries",
  "GET /api/catalogs/{country}/additional-export-info/package-types",
  "GET /api/catalogs/{country}/additional-export-info/payment-forms",
  "GET /api/catalogs/{country}/additional-export-info/ports",
  "GET /api/catalogs/{country}/additional-export-info/sale-clauses",
  "GET /api/catalogs/{country}/additional-export-info/sale-modalities",
  "GET /api/catalogs/{country}/additional-export-info/transport-modes",
  "GET /api/catalogs/{country}/communes",
  "GET /api/catalogs/{country}/countries",
  "GET /api/catalogs/{country}/currencies",
  "GET /api/catalogs/{country}/dispatch-kinds",
  "GET /api/catalogs/{country}/document-cancellation-reasons",
  "GET /api/catalogs/{country}/document-types",
  "GET /api/catalogs/{country}/item-code-types",
  "GET /api/catalogs/{country}/legal-activities",
  "GET /api/catalogs/{country}/legal-entities",
  "GET /api/catalogs/{country}/measurement-units",
  "GET /api/catalogs/{country}/payment-means",
  "GET /api/catalogs/{country}/payment-types",
  "GET /api/catalogs/{country}/reference-types",
  "GET /api/catalogs/{country}/regions",
  "GET /api/catalogs/{country}/sii-offices",
  "GET /api/catalogs/{country}/tax-identification-documents",
  "GET /api/catalogs/{country}/tax-information",
  "GET /api/catalogs/{country}/tax-types",
  "GET /api/catalogs/{country}/taxpayers/{tax_id}",
  "GET /api/catalogs/{country}/transfer-kinds",
  "GET /api/companies",
  "GET /api/companies/{company_id}/certificates",
  "GET /api/companies/{company_id}/certificates/{certificate_id}",
  "GET /api/companies/{company_id}/cessions",
  "GET /api/companies/{company_id}/cessions/{cession_id}",
  "GET /api/companies/{company_id}/cessions/{cession_id}/pdf",
  "GET /api/companies/{company_id}/cessions/{cession_id}/xml",
  "GET /api/companies/{company_id}/dead-letters",
  "GET /api/companies/{company_id}/invoice-batches",
  "GET /api/companies/{company_id}/invoice-batches/{batch_id}",
  "GET /api/companies/{company_id}/invoices",
  "GET /api/companies/{company_id}/invoices/{invoice_id}",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery/xml",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/buyer_replies/{reply_id}/xml",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/cessions",
  "GET /api/companies/{company_id}/invoices/{invoice_id}/xml",
  "GET /api/companies/{company_id}/webhook-deliveries",
  "GET /api/companies/{company_id}/webhook-deliveries/{delivery_id}",
  "GET /api/companies/{company_id}/webhooks",
  "GET /api/companies/{company_id}/webhooks/{webhook_id}",
  "GET /api/companies/{company_id}/webhooks/{webhook_id}/deliveries",
  "GET /api/companies/{idCompany}",
  "GET /api/companies/{idCompany}/enumeration/list",
  "GET /api/companies/{idCompany}/settings",
  "GET /api/invoice-batches/csv-template",
  "GET /api/me",
  "GET /api/reception/invoices/list",
  "GET /api/reception/invoices/{purchase_id}",
  "GET /api/reception/messages",
  "GET /api/reception/messages/{message_id}",
  "GET /api/users",
  "GET /api/users/{user_id}",
  "PATCH /api/companies/{company_id}/webhooks/{webhook_id}",
  "PATCH /api/companies/{idCompany}",
  "PATCH /api/companies/{idCompany}/settings",
  "POST /api/companies",
  "POST /api/companies/{company_id}/certificates",
  "POST /api/companies/{company_id}/certificates/{certificate_id}/activate",
  "POST /api/companies/{company_id}/dead-letters/{dead_letter_id}/redrive",
  "POST /api/companies/{company_id}/invoice-batches",
  "POST /api/companies/{company_id}/invoices",
  "POST /api/companies/{company_id}/invoices/buyer_replies",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/buyer_response/check",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/cessions",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/download-base64/{format}",
  "POST /api/companies/{company_id}/invoices/{invoice_id}/download-pdf/{format}",
  "POST /api/companies/{company_id}/webhooks",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/redeliver",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/rotate-secret",
  "POST /api/companies/{company_id}/webhooks/{webhook_id}/test",
  "POST /api/companies/{idCompany}/enumeration/refetch",
  "POST /api/companies/{idCompany}/enumeration/upload",
  "POST /api/companies/{idCompany}/logo",
  "POST /api/reception/invoices/upload",
  "POST /api/reception/invoices/{purchase_id}/cession/check",
  "POST /api/reception/invoices/{purchase_id}/download/{type}",
  "POST /api/reception/invoices/{purchase_id}/reply_mail",
  "POST /api/reception/invoices/{purchase_id}/send_response",
  "POST /api/users",
  "POST /api/users/{user_id}/api-keys",
  "PUT /api/api-keys/{api_key_id}/companies/{company_id}",
  "PUT /api/companies/{idCompany}/enumeration/document-type/{document_type_id}/alert-threshold",
  "PUT /api/companies/{idCompany}/enumeration/document-type/{document_type_id}/next-folio",
];

function pathFor(template: string, companyInQuery = false): string {
  const path = template.replace(/\{(idCompany|company_id)\}/g, companyId).replace(/\{[^}]+\}/g, "x_missing_0000");
  return companyInQuery ? `${path}?company_id=${companyId}` : path;
}

function init(method: string) {
  return ["POST", "PUT", "PATCH"].includes(method.toUpperCase()) ? { json: {} } : {};
}

describe("every authenticated route", () => {
  it("covers exactly the authenticated operations of the registry", () => {
    expect(routes.map((r) => `${r.route.method.toUpperCase()} ${r.route.path}`).sort()).toEqual(COVERED);
  });

  for (const r of routes) {
    const method = r.route.method.toUpperCase();
    const name = `${method} ${r.route.path}`;

    it(`${name}: no key -> 401`, async () => {
      expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { ...init(method) }), 401, "AUTH_MISSING_API_KEY");
    });

    it(`${name}: malformed, unknown and revoked keys -> 401`, async () => {
      expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { key: "not-a-key", ...init(method) }), 401, "AUTH_INVALID_API_KEY");
      expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { key: `dte_test_${"A".repeat(40)}`, ...init(method) }), 401, "AUTH_INVALID_API_KEY");
      expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { key: revoked.key, ...init(method) }), 401, "AUTH_INVALID_API_KEY");
    });

    it(`${name}: the apiKey query parameter never authenticates`, async () => {
      const sep = pathFor(r.route.path, r.companyInQuery).includes("?") ? "&" : "?";
      expectError(await call(method, `${pathFor(r.route.path, r.companyInQuery)}${sep}apiKey=${encodeURIComponent(owner.key)}`, { ...init(method) }), 401, "AUTH_MISSING_API_KEY");
    });

    if (r.underCompany) {
      it(`${name}: another client's company -> 403`, async () => {
        expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { key: stranger.key, ...init(method) }), 403, "AUTH_COMPANY_ACCESS_DENIED");
      });
    }

    if (r.companyInQuery) {
      it(`${name}: without company_id -> 400, another client's company_id -> 403`, async () => {
        expectError(await call(method, pathFor(r.route.path), { key: owner.key, ...init(method) }), 400, "VALIDATION_FAILED");
        expectError(await call(method, pathFor(r.route.path, true), { key: stranger.key, ...init(method) }), 403, "AUTH_COMPANY_ACCESS_DENIED");
      });
    }

    if (r.permission && !can("MEMBER", r.permission)) {
      it(`${name}: a MEMBER key -> 403`, async () => {
        expectError(await call(method, pathFor(r.route.path, r.companyInQuery), { key: member.key, ...init(method) }), 403, "AUTH_ROLE_FORBIDDEN");
      });
    }
  }
});
