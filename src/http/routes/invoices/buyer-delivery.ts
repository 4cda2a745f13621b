/**
 * The document mailed to its buyer (src/invoices/buyer-delivery.ts): send it now (again, or
 * to another address), and download the EnvioDTE that was sent.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { buyerEnvelopeKey, deliverNow } from "../../../invoices/buyer-delivery";
import { getInvoice, invoiceDetail } from "../../../invoices/queries";
import { InvoiceSchema, invoiceView } from "../../../invoices/view";
import { EMAIL_ADDRESS } from "../../../accounts/taxpayers/exchange-address";
import { AppError } from "../../../lib/errors";
import { validationHook } from "../../errors/handler";
import { json } from "../../openapi/common";
import { defineRoute } from "../../route";
import type { AppEnv } from "../../types";
import { buyerEnvelopeXmlExample } from "../../openapi/xml-examples";
import { buyerDeliveryRequestExample, invoiceDeliveredExample } from "./examples";

const InvoiceParams = z.object({
  company_id: z.string().min(1).max(64).openapi({ param: { name: "company_id", in: "path" } }),
  invoice_id: z.string().min(1).max(64).openapi({ param: { name: "invoice_id", in: "path" } }),
});

const DeliveryBody = z
  .object({
    email: z.string().max(254).regex(EMAIL_ADDRESS, "An e-mail address").optional().openapi({ description: "Send it here instead of the buyer's exchange address in the SII's taxpayer directory.", example: "dte@cliente.cl" }),
  })
  .strict()
  .openapi("BuyerDeliveryRequest");

const send = defineRoute({
  method: "post",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery",
  tags: ["Invoices"],
  summary: "Send the document to its buyer now",
  description:
    "Signs an EnvioDTE addressed to the buyer (RutReceptor the buyer's RUT) holding the document and mails it, now: to `email`, else to the buyer's exchange address in the SII's taxpayer directory. The service does this by itself once the SII accepts a document (`buyer_delivery`); this sends it again, or to an address the directory does not have. Not for boletas (39, 41); only once the SII accepted the document.",
  permission: "document:issue",
  request: { params: InvoiceParams, body: { required: false, content: { "application/json": { schema: DeliveryBody, example: buyerDeliveryRequestExample } } } },
  responses: { 200: { description: "Sent; the document with its `buyer_delivery`", ...json(InvoiceSchema, invoiceDeliveredExample) } },
  errors: ["VALIDATION_FAILED", "INVOICE_NOT_FOUND", "INVOICE_NO_BUYER_DELIVERY", "INVOICE_NOT_ACCEPTED", "INVOICE_BUYER_DELIVERY_NO_ADDRESS", "INVOICE_BUYER_DELIVERY_FAILED"],
});

const envelope = defineRoute({
  method: "get",
  path: "/api/companies/{company_id}/invoices/{invoice_id}/buyer_delivery/xml",
  tags: ["Invoices"],
  summary: "Download the EnvioDTE sent to the buyer",
  description: "The envelope last built for the buyer (ISO-8859-1), as mailed.",
  permission: "document:read",
  request: { params: InvoiceParams },
  responses: { 200: { description: "The EnvioDTE", content: { "application/xml": { schema: z.string(), example: buyerEnvelopeXmlExample } } } },
  errors: ["INVOICE_NOT_FOUND", "INVOICE_BUYER_DELIVERY_NOT_SENT"],
});

export const buyerDeliveryRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(send, async (c) => {
    const { invoice_id } = c.req.valid("param");
    const body = c.req.valid("json") as z.infer<typeof DeliveryBody> | undefined;
    const row = await deliverNow(c.env, await getInvoice(c.env, c.get("company").id, invoice_id), body?.email);
    return c.json(invoiceView(row, await invoiceDetail(c.env, row)), 200);
  })
  .openapi(envelope, async (c) => {
    const row = await getInvoice(c.env, c.get("company").id, c.req.valid("param").invoice_id);
    const object = await c.env.FILES.get(buyerEnvelopeKey(row.companyId, row.id));
    if (!object) throw new AppError("INVOICE_BUYER_DELIVERY_NOT_SENT", `No EnvioDTE has been built for the buyer of ${row.id} yet.`);
    return new Response(object.body, {
      headers: { "Content-Type": "application/xml; charset=ISO-8859-1", "Content-Disposition": `attachment; filename="EnvioDTE_T${row.documentType}_F${row.folio}.xml"` },
    }) as never;
  });
