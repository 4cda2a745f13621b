/** The buyer's side of cessions: ask the SII's register now whether a received document was ceded (src/reception/cessions.ts). */
import { OpenAPIHono } from "@hono/zod-openapi";
import { checkReceivedCessionNow } from "../../../reception/cessions";
import { receivedView } from "../../../reception/view";
import { validationHook } from "../../errors/handler";
import { json } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { receivedExample } from "../reception/examples";
import { receivedCessionExample } from "./examples";
import { CompanyQuery, Params, ReceivedDocumentSchema } from "../reception/schemas";

const check = defineRoute({
  method: "post",
  path: "/api/reception/invoices/{purchase_id}/cession/check",
  tags: ["Purchases (Receptions)"],
  summary: "Ask the register of cessions about a received document now",
  description:
    "Asks the SII's register of cessions whether the received factura (33, 34, 43, 46) was ceded to a third party (factoring), now, instead of waiting for the reception cron (which asks about each one issued within 120 days, at most hourly). A new holder is written on `cession` with a `received_document.ceded` event. When `cession` is set, pay `cession.holder_tax_id`, not the supplier.",
  permission: "document:read",
  companyInQuery: true,
  request: { params: Params, query: CompanyQuery },
  responses: { 200: { description: "The document after the question", ...json(ReceivedDocumentSchema, { ...receivedExample, cession: receivedCessionExample }) } },
  errors: ["VALIDATION_FAILED", "RECEIVED_DOCUMENT_NOT_FOUND", "RECEIVED_CESSION_NOT_APPLICABLE", "RECEIVED_CESSION_CHECK_UNAVAILABLE", "CERTIFICATE_REQUIRED"],
});

export const receivedCessionRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(check, async (c) => {
  const row = await checkReceivedCessionNow(c.env, c.get("company"), c.req.valid("param").purchase_id);
  return c.json(receivedView(row), 200);
});
